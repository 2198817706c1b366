/*
 * loctab.h - what a trace has taught about its backtrace codes: an arena,
 * a table of interned strings (each distinct file or function name is stored
 * once) and the table code -> location list.
 *
 * Everything handed out stays at the same address until the table is freed,
 * which is what lets mt_reader_lookup return pointers valid until close.
 */
#ifndef MT_TRACE_LOCTAB_H
#define MT_TRACE_LOCTAB_H

#include <stddef.h>
#include <stdint.h>

#include "memtrace/trace.h"

/* Bump allocator: memory is freed all at once. */
typedef struct mt_arena {
    struct mt_arena_chunk *chunks;
    size_t used, cap; /* in the newest chunk */
} mt_arena;

void *mt_arena_alloc(mt_arena *a, size_t size);
void mt_arena_free(mt_arena *a);

typedef struct mt_strtab_slot {
    uint64_t hash;
    const char *str; /* NULL = empty */
} mt_strtab_slot;

typedef struct mt_strtab {
    mt_arena *arena;
    mt_strtab_slot *slots; /* open addressing */
    size_t mask, count;
} mt_strtab;

/* The unique copy of s[0..len) (NUL-terminated), or NULL when out of memory. */
const char *mt_strtab_intern(mt_strtab *t, const char *s, size_t len);
void mt_strtab_free(mt_strtab *t);

/* The table code -> location list: keys (code and a hash of the list's
 * content) apart from values, so that checking a code described again reads
 * only the keys. Code 0 has a slot of its own (0 marks empty key slots). */
typedef struct mt_loctab_key {
    mt_location_code code;
    uint64_t hash;
} mt_loctab_key;

typedef struct mt_loctab_value {
    const mt_location *locs; /* never NULL for a known code */
    size_t n;
} mt_loctab_value;

typedef struct mt_loctab {
    mt_arena arena;
    mt_strtab strings;
    mt_loctab_key *keys;     /* open addressing, linear probing */
    mt_loctab_value *values; /* values[i] goes with keys[i] */
    size_t mask, count;
    mt_loctab_key zero_key;
    mt_loctab_value zero_value;
} mt_loctab;

void mt_loctab_init(mt_loctab *t);
void mt_loctab_free(mt_loctab *t);

/* 1 with *hash set (see mt_loctab_add) if the code is known, else 0. */
int mt_loctab_hash(const mt_loctab *t, mt_location_code code, uint64_t *hash);

/* 0 and *locs and *n if the code is known, else -1. */
int mt_loctab_find(const mt_loctab *t, mt_location_code code, const mt_location **locs,
                   size_t *n);

/* Records code -> locs[0..n) (copied; the strings must already be interned in
 * t->strings). hash stands for the list's content (names, lines, columns):
 * a code described again is compared by it, without touching the stored list.
 * Returns 0 if new, 1 if the code was known with the same hash, 2 if it was
 * known with a different one (nothing changed), -1 on no memory. */
int mt_loctab_add(mt_loctab *t, mt_location_code code, const mt_location *locs, size_t n,
                  uint64_t hash);

#endif
