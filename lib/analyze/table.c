/*
 * table.c - open-addressing hash table 64-bit key -> 32-bit value (see
 * table.h; its keyed hash is lib/common/hash.h's).
 */
#include <stdlib.h>

#include "table.h"

int mta_table_init(mta_table *t, size_t expected)
{
    size_t cap = 16;
    while (cap * 3 < expected * 4)
        cap *= 2;
    t->slots = calloc(cap, sizeof *t->slots);
    t->mask = cap - 1;
    t->count = 0;
    return t->slots ? 0 : -1;
}

void mta_table_destroy(mta_table *t)
{
    free(t->slots);
    t->slots = NULL;
}

static int grow(mta_table *t)
{
    mta_table n;
    if (mta_table_init(&n, t->mask + 1) < 0)
        return -1;
    for (size_t i = 0; i <= t->mask; i++)
        if (t->slots[i].val) {
            size_t j = mta_hash64(t->slots[i].key) & n.mask;
            while (n.slots[j].val)
                j = (j + 1) & n.mask;
            n.slots[j] = t->slots[i];
        }
    n.count = t->count;
    mta_table_destroy(t);
    *t = n;
    return 0;
}

int mta_table_put(mta_table *t, uint64_t key, uint32_t val)
{
    /* at most 3/4 full: short probes, and a third less memory than 1/2 */
    if ((t->count + 1) * 4 > (t->mask + 1) * 3 && grow(t) < 0)
        return -1;
    size_t i = mta_hash64(key) & t->mask;
    while (t->slots[i].val && t->slots[i].key != key)
        i = (i + 1) & t->mask;
    if (!t->slots[i].val)
        t->count++;
    t->slots[i].key = key;
    t->slots[i].val = val + 1;
    return 0;
}
