/*
 * loctab.c - a pool (bump allocator), string interning and the code ->
 * locations table used by the reader and the symbolizer (see loctab.h).
 */
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "loctab.h"

struct mt_pool_chunk {
    struct mt_pool_chunk *next;
    max_align_t data[];
};

#define POOL_CHUNK (64 * 1024)

void *mt_pool_alloc(mt_pool *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (!a->chunks || a->cap - a->used < size) {
        size_t cap = size > POOL_CHUNK ? size : POOL_CHUNK;
        struct mt_pool_chunk *c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        if (a->chunks && size > POOL_CHUNK) {
            /* A big one-off block: keep the current chunk open for small ones. */
            c->next = a->chunks->next;
            a->chunks->next = c;
            return c->data;
        }
        c->next = a->chunks;
        a->chunks = c;
        a->used = 0;
        a->cap = cap;
    }
    void *p = (char *)a->chunks->data + a->used;
    a->used += size;
    return p;
}

void mt_pool_free(mt_pool *a)
{
    struct mt_pool_chunk *c = a->chunks;
    while (c) {
        struct mt_pool_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->chunks = NULL;
    a->used = a->cap = 0;
}

static int strtab_grow(mt_strtab *t)
{
    size_t cap = t->slots ? (t->mask + 1) * 2 : 64;
    mt_strtab_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; t->slots && i <= t->mask; i++) {
        if (!t->slots[i].str)
            continue;
        size_t j = t->slots[i].hash & (cap - 1);
        while (slots[j].str)
            j = (j + 1) & (cap - 1);
        slots[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->mask = cap - 1;
    return 0;
}

const char *mt_strtab_intern(mt_strtab *t, const char *s, size_t len)
{
    if ((!t->slots || (t->count + 1) * 2 > t->mask + 1) && strtab_grow(t) < 0)
        return NULL;
    uint64_t h = mt_hash_bytes(s, len);
    size_t j = h & t->mask;
    for (; t->slots[j].str; j = (j + 1) & t->mask) {
        const char *c = t->slots[j].str;
        if (t->slots[j].hash == h && memcmp(c, s, len) == 0 && c[len] == '\0')
            return c;
    }
    char *copy = mt_pool_alloc(t->pool, len + 1);
    if (!copy)
        return NULL;
    memcpy(copy, s, len);
    copy[len] = '\0';
    t->slots[j].hash = h;
    t->slots[j].str = copy;
    t->count++;
    return copy;
}

void mt_strtab_free(mt_strtab *t)
{
    free(t->slots);
    t->slots = NULL;
    t->mask = t->count = 0;
}

void mt_loctab_init(mt_loctab *t)
{
    memset(t, 0, sizeof *t);
    t->strings.pool = &t->pool;
}

void mt_loctab_free(mt_loctab *t)
{
    free(t->slots);
    mt_strtab_free(&t->strings);
    mt_pool_free(&t->pool);
    memset(t, 0, sizeof *t);
}

/* Codes come from the trace: keyed (hash.h), or a trace of codes chosen to
 * share one slot would make every lookup walk all of them. */
static size_t code_hash(mt_location_code c)
{
    return (size_t)mt_hash_u64(c);
}

/* Every entry has a non-NULL locs pointer, even an empty list: this one. */
static const mt_location no_locations[1];

/* Slot of code: its own, or the empty one where it would go. */
static size_t slot_of(const mt_loctab *t, mt_location_code code)
{
    size_t j = code_hash(code) & t->mask;
    while (t->slots[j].locs && t->slots[j].code != code)
        j = (j + 1) & t->mask;
    return j;
}

static const mt_loctab_entry *lookup(const mt_loctab *t, mt_location_code code)
{
    if (!t->slots)
        return NULL;
    const mt_loctab_entry *e = &t->slots[slot_of(t, code)];
    return e->locs ? e : NULL;
}

int mt_loctab_hash(const mt_loctab *t, mt_location_code code, uint64_t *hash)
{
    const mt_loctab_entry *e = lookup(t, code);
    if (!e)
        return 0;
    *hash = e->hash_n >> 8;
    return 1;
}

int mt_loctab_find(const mt_loctab *t, mt_location_code code, const mt_location **locs,
                   size_t *n)
{
    const mt_loctab_entry *e = lookup(t, code);
    if (!e)
        return -1;
    *locs = e->locs;
    *n = e->hash_n & 0xFF;
    return 0;
}

static int loctab_grow(mt_loctab *t)
{
    size_t cap = t->slots ? (t->mask + 1) * 2 : 1024;
    mt_loctab_entry *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; t->slots && i <= t->mask; i++) {
        if (!t->slots[i].locs)
            continue;
        size_t j = code_hash(t->slots[i].code) & (cap - 1);
        while (slots[j].locs)
            j = (j + 1) & (cap - 1);
        slots[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->mask = cap - 1;
    return 0;
}

int mt_loctab_add(mt_loctab *t, mt_location_code code, const mt_location *locs, size_t n,
                  uint64_t hash)
{
    hash >>= 8; /* 56 bits are kept */
    const mt_loctab_entry *known = lookup(t, code);
    if (known)
        return known->hash_n >> 8 == hash ? 1 : 2;
    if (n > 255)
        return -1; /* a location event lists at most 255 */
    /* Grown at 4/5 full: 24-byte slots, short linear probes. */
    if ((!t->slots || (t->count + 1) * 5 > (t->mask + 1) * 4) && loctab_grow(t) < 0)
        return -1;
    const mt_location *stored = no_locations;
    if (n > 0) {
        mt_location *copy = mt_pool_alloc(&t->pool, n * sizeof *copy);
        if (!copy)
            return -1;
        memcpy(copy, locs, n * sizeof *copy);
        stored = copy;
    }
    mt_loctab_entry *e = &t->slots[slot_of(t, code)];
    e->code = code;
    e->locs = stored;
    e->hash_n = hash << 8 | n;
    t->count++;
    return 0;
}
