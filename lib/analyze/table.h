/*
 * table.h - the engine's hash tables: 64-bit key -> 32-bit value, open
 * addressing with linear probing; a key and its value share one slot so a
 * lookup touches one cache line. Keyed hashes (see mta_seed). Internal to
 * lib/analyze.
 */
#ifndef MTA_TABLE_H
#define MTA_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

typedef struct mta_slot {
    uint64_t key;
    uint32_t val;       /* value + 1; 0 marks an empty slot */
} mta_slot;

typedef struct mta_table {
    mta_slot *slots;
    size_t mask;        /* capacity - 1 (capacity is a power of two) */
    size_t count;
} mta_table;

/* Keys come from the trace (codes, object ids, and what they lead to): all
 * hashes are keyed with the per-process random seed (lib/common/hash.h),
 * or a trace made of keys that share one slot would turn each probe into
 * a walk over all of them. The engine's names for the shared ones: */
static inline uint64_t mta_seed(void)
{
    return mt_hash_seed();
}

/* Unkeyed (allocindex.c stores these hashes in files): mt_mix64. */
static inline uint64_t mta_mix64(uint64_t x)
{
    return mt_mix64(x);
}

static inline uint64_t mta_hash64(uint64_t x)
{
    return mt_hash_u64(x);
}

/* Returns 0, or -1 when out of memory. */
int mta_table_init(mta_table *t, size_t expected);
void mta_table_destroy(mta_table *t);
/* The value stored for key, or -1 (as int64) when absent. */
static inline int64_t mta_table_get(const mta_table *t, uint64_t key)
{
    size_t i = mta_hash64(key) & t->mask;
    for (;;) {
        const mta_slot *s = &t->slots[i];
        if (s->val == 0)
            return -1;
        if (s->key == key)
            return (int64_t)s->val - 1;
        i = (i + 1) & t->mask;
    }
}
/* Store key -> val (replacing). Returns 0, or -1 when out of memory. */
int mta_table_put(mta_table *t, uint64_t key, uint32_t val);

#endif
