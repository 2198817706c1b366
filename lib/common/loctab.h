/*
 * loctab.h - what a trace has taught about its backtrace codes: a pool,
 * a table of interned strings (each distinct file or function name is stored
 * once) and the table code -> location list.
 *
 * Everything handed out stays at the same address until the table is freed,
 * which is what lets mt_reader_lookup return pointers valid until close.
 * The codec's reader and the symbolizer's rewrite (lib/symbolize) both keep
 * one; compiled with the codec.
 */
#ifndef MT_TRACE_LOCTAB_H
#define MT_TRACE_LOCTAB_H

#include <stddef.h>
#include <stdint.h>

#include "memtrace/trace.h"

/* A pool: a bump allocator, whose memory is freed all at once. */
typedef struct mt_pool {
    struct mt_pool_chunk *chunks;
    size_t used, cap; /* in the newest chunk */
} mt_pool;

void *mt_pool_alloc(mt_pool *a, size_t size);
void mt_pool_free(mt_pool *a);

typedef struct mt_strtab_slot {
    uint64_t hash;
    const char *str; /* NULL = empty */
} mt_strtab_slot;

typedef struct mt_strtab {
    mt_pool *pool;
    mt_strtab_slot *slots; /* open addressing */
    size_t mask, count;
} mt_strtab;

/* The unique copy of s[0..len) (NUL-terminated), or NULL when out of memory. */
const char *mt_strtab_intern(mt_strtab *t, const char *s, size_t len);
void mt_strtab_free(mt_strtab *t);

/* The table code -> location list, 24 bytes an entry (one cache line per
 * probe, whether to check a code described again or to look one up). */
typedef struct mt_loctab_entry {
    mt_location_code code;
    const mt_location *locs; /* NULL: empty slot (an empty list is not NULL) */
    uint64_t hash_n;         /* 56 bits of the list's hash, then its length */
} mt_loctab_entry;

typedef struct mt_loctab {
    mt_pool pool;
    mt_strtab strings;
    mt_loctab_entry *slots;  /* open addressing, linear probing */
    size_t mask, count;
} mt_loctab;

void mt_loctab_init(mt_loctab *t);
void mt_loctab_free(mt_loctab *t);

/* 1 with *hash set to the kept 56 bits of the hash given to mt_loctab_add
 * (its value >> 8) if the code is known, else 0. */
int mt_loctab_hash(const mt_loctab *t, mt_location_code code, uint64_t *hash);

/* 0 and *locs and *n if the code is known, else -1. */
int mt_loctab_find(const mt_loctab *t, mt_location_code code, const mt_location **locs,
                   size_t *n);

/* Records code -> locs[0..n) (copied; the strings must already be interned in
 * t->strings). hash stands for the list's content (names, lines, columns):
 * a code described again is compared by it, without touching the stored list.
 * n is at most 255 (what a location event can list). Returns 0 if new, 1 if
 * the code was known with the same hash, 2 if it was known with a different
 * one (nothing changed), -1 on no memory. */
int mt_loctab_add(mt_loctab *t, mt_location_code code, const mt_location *locs, size_t n,
                  uint64_t hash);

#endif
