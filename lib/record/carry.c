/*
 * carry.c - the live sampled blocks of a rotating recording (carry.h).
 *
 * Two tables: the blocks, by queue id (open addressing, linear probing,
 * deletion by backward shift), about 48 bytes each; and their call stacks,
 * each distinct stack stored once. So the memory follows the live blocks
 * and the distinct stacks, not the events. Stacks of blocks freed since
 * are dropped each time the blocks are walked for a new piece
 * (mtr_carry_each), so a long run does not accumulate them.
 */
#include "carry.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ownheap.h"
#include "sort.h"
#include "hash.h"
#include "vec.h"

struct block {
    uint64_t key;              /* qid + 1; 0: empty slot */
    uint64_t piece_id;
    uint64_t size;
    uint64_t n_samples;
    uint32_t stack;
    int source;
};

struct stack {
    uint64_t off;              /* in frames */
    uint64_t hash;
    uint32_t len;
};

struct stacks {
    uint64_t *frames;
    size_t n_frames, cap_frames;
    struct stack *v;
    size_t n, cap;
    uint32_t *index;           /* stack + 1; 0: empty */
    size_t index_mask;
};

static struct {
    struct block *slots;
    size_t mask;               /* slots - 1, or 0 when none */
    size_t n;
    struct stacks st;
} cy;

#define mix mt_mix64

static uint64_t hash_frames(const uint64_t *f, size_t n)
{
    uint64_t h = mix(n + 1);
    for (size_t i = 0; i < n; i++)
        h = mix(h ^ f[i]) + i;
    return h;
}

/* ------------------------------------------------------------- stacks */

static void stacks_free(struct stacks *s)
{
    mtr_heap_free(s->frames);
    mtr_heap_free(s->v);
    mtr_heap_free(s->index);
    memset(s, 0, sizeof *s);
}

static int index_grow(struct stacks *s)
{
    size_t cap = s->index ? (s->index_mask + 1) * 2 : 256;
    uint32_t *ix = mtr_heap_calloc(cap, sizeof *ix);
    if (!ix)
        return -1;
    for (size_t k = 0; k < s->n; k++) {
        size_t i = s->v[k].hash & (cap - 1);
        while (ix[i])
            i = (i + 1) & (cap - 1);
        ix[i] = (uint32_t)k + 1;
    }
    mtr_heap_free(s->index);
    s->index = ix;
    s->index_mask = cap - 1;
    return 0;
}

/* The stack's number, stored if new; -1 out of memory. */
static int64_t stack_of(struct stacks *s, const uint64_t *f, size_t n)
{
    if (n > UINT32_MAX)
        n = UINT32_MAX;
    uint64_t h = hash_frames(f, n);
    if (s->index) {
        for (size_t i = h & s->index_mask; s->index[i]; i = (i + 1) & s->index_mask) {
            const struct stack *k = &s->v[s->index[i] - 1];
            if (k->hash == h && k->len == n &&
                !memcmp(s->frames + k->off, f, n * sizeof *f))
                return s->index[i] - 1;
        }
    }
    if (s->n >= UINT32_MAX - 1)
        return -1;
    if (!s->index || (s->n + 1) * 2 > s->index_mask + 1) {
        if (index_grow(s) < 0)
            return -1;
    }
    if (MT_VEC_ROOM_IN(mtr_heap_realloc, s->v, s->n, s->cap, 256) < 0 ||
        MT_VEC_RESERVE_IN(mtr_heap_realloc, s->frames, s->n_frames + n, s->cap_frames, 4096) < 0)
        return -1;
    MT_ASSERT(s->n < s->cap && s->n_frames + n <= s->cap_frames);
    memcpy(s->frames + s->n_frames, f, n * sizeof *f);
    struct stack *k = &s->v[s->n];
    k->off = s->n_frames;
    k->len = (uint32_t)n;
    k->hash = h;
    s->n_frames += n;
    size_t i = h & s->index_mask;
    MT_ASSERT((s->n + 1) * 2 <= s->index_mask + 1);   /* the index stays half empty */
    while (s->index[i])
        i = (i + 1) & s->index_mask;
    s->index[i] = (uint32_t)s->n + 1;
    return (int64_t)s->n++;
}

/* ------------------------------------------------------------- blocks */

static int blocks_grow(void)
{
    size_t cap = cy.slots ? (cy.mask + 1) * 2 : 1024;
    struct block *v = mtr_heap_calloc(cap, sizeof *v);
    if (!v)
        return -1;
    for (size_t k = 0; cy.slots && k <= cy.mask; k++) {
        if (!cy.slots[k].key)
            continue;
        size_t i = mix(cy.slots[k].key) & (cap - 1);
        while (v[i].key)
            i = (i + 1) & (cap - 1);
        v[i] = cy.slots[k];
    }
    mtr_heap_free(cy.slots);
    cy.slots = v;
    cy.mask = cap - 1;
    return 0;
}

int mtr_carry_add(uint64_t qid, uint64_t piece_id, uint64_t size, uint64_t n_samples,
                  int source, const uint64_t *frames, size_t nframes)
{
    MT_ASSERT(mtr_tls.busy > 0);   /* recorder code: what it allocates is never sampled */
    MT_ASSERT(qid != UINT64_MAX);  /* key qid + 1 must not be the empty slot's 0 */
    if (!cy.slots || (cy.n + 1) * 2 > cy.mask + 1) {
        if (blocks_grow() < 0)
            return -1;
    }
    int64_t st = stack_of(&cy.st, frames, nframes);
    if (st < 0)
        return -1;
    uint64_t key = qid + 1;
    size_t i = mix(key) & cy.mask;
    while (cy.slots[i].key && cy.slots[i].key != key)
        i = (i + 1) & cy.mask;
    if (!cy.slots[i].key)
        cy.n++;
    MT_ASSERT(cy.n * 2 <= cy.mask + 1);
    struct block *b = &cy.slots[i];
    b->key = key;
    b->piece_id = piece_id;
    b->size = size;
    b->n_samples = n_samples;
    b->stack = (uint32_t)st;
    b->source = source;
    return 0;
}

int mtr_carry_take(uint64_t qid, uint64_t *piece_id)
{
    if (!cy.slots)
        return 0;
    uint64_t key = qid + 1;
    size_t i = mix(key) & cy.mask;
    while (cy.slots[i].key != key) {
        if (!cy.slots[i].key)
            return 0;
        i = (i + 1) & cy.mask;
    }
    *piece_id = cy.slots[i].piece_id;
    /* Backward shift: move later entries of the run into the hole when
     * their home slot does not lie between the hole and them. */
    size_t hole = i;
    for (size_t j = (i + 1) & cy.mask; cy.slots[j].key; j = (j + 1) & cy.mask) {
        size_t home = mix(cy.slots[j].key) & cy.mask;
        if (((j - home) & cy.mask) >= ((j - hole) & cy.mask)) {
            cy.slots[hole] = cy.slots[j];
            hole = j;
        }
    }
    cy.slots[hole].key = 0;
    MT_ASSERT(cy.n > 0);
    cy.n--;
    return 1;
}

size_t mtr_carry_count(void)
{
    return cy.n;
}

static int by_qid(const void *x, const void *y)
{
    const struct block *a = *(const struct block *const *)x, *b = *(const struct block *const *)y;
    return a->key < b->key ? -1 : a->key > b->key;
}

int mtr_carry_each(int (*fn)(void *ctx, struct mtr_carried *c), void *ctx)
{
    struct block **order = mtr_heap_alloc((cy.n ? cy.n : 1) * sizeof *order);
    if (!order)
        return -1;
    size_t n = 0;
    for (size_t k = 0; cy.slots && k <= cy.mask; k++)
        if (cy.slots[k].key)
            order[n++] = &cy.slots[k];
    MT_ASSERT(n == cy.n);   /* the count is the table's */
    mtr_sort(order, n, sizeof *order, by_qid);
    /* The stacks of the live blocks, in a store of their own; the table
     * changes over to it only once everything went well. */
    struct stacks kept;
    memset(&kept, 0, sizeof kept);
    uint32_t *ks = mtr_heap_alloc((n ? n : 1) * sizeof *ks);
    uint32_t *moved = mtr_heap_alloc((cy.st.n ? cy.st.n : 1) * sizeof *moved);   /* old -> new */
    int rc = ks && moved ? 0 : -1;
    if (moved)
        memset(moved, 0xff, cy.st.n * sizeof *moved);
    for (size_t k = 0; k < n && rc == 0; k++) {
        uint32_t old = order[k]->stack;
        if (moved[old] == UINT32_MAX) {
            const struct stack *s = &cy.st.v[old];
            int64_t st = stack_of(&kept, cy.st.frames + s->off, s->len);
            if (st < 0)
                rc = -1;
            else
                moved[old] = (uint32_t)st;
        }
        ks[k] = moved[old];
    }
    mtr_heap_free(moved);
    for (size_t k = 0; k < n && rc == 0; k++) {
        struct block *b = order[k];
        const struct stack *s = &cy.st.v[b->stack];
        struct mtr_carried c = { b->key - 1, b->piece_id, b->size, b->n_samples, b->source,
                                 cy.st.frames + s->off, s->len };
        rc = fn(ctx, &c);
        b->piece_id = c.piece_id;
    }
    if (rc == 0) {
        for (size_t k = 0; k < n; k++)
            order[k]->stack = ks[k];
        stacks_free(&cy.st);
        cy.st = kept;
    } else {
        stacks_free(&kept);
    }
    mtr_heap_free(ks);
    mtr_heap_free(order);
    return rc;
}

void mtr_carry_reset(void)
{
    mtr_heap_free(cy.slots);
    stacks_free(&cy.st);
    memset(&cy, 0, sizeof cy);
}

size_t mtr_carry_memory(void)
{
    return (cy.slots ? (cy.mask + 1) * sizeof *cy.slots : 0) +
           cy.st.cap_frames * sizeof *cy.st.frames + cy.st.cap * sizeof *cy.st.v +
           (cy.st.index ? (cy.st.index_mask + 1) * sizeof *cy.st.index : 0);
}
