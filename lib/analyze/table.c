/*
 * table.c - open-addressing hash table 64-bit key -> 32-bit value (see table.h).
 */
#include <stdlib.h>

#include "table.h"

int mta_table_init(mta_table *t, size_t expected)
{
    size_t cap = 16;
    while (cap < expected * 2)
        cap *= 2;
    t->keys = malloc(cap * sizeof *t->keys);
    t->vals = calloc(cap, sizeof *t->vals);
    t->mask = cap - 1;
    t->count = 0;
    if (!t->keys || !t->vals) {
        free(t->keys);
        free(t->vals);
        t->keys = NULL;
        t->vals = NULL;
        return -1;
    }
    return 0;
}

void mta_table_destroy(mta_table *t)
{
    free(t->keys);
    free(t->vals);
    t->keys = NULL;
    t->vals = NULL;
}

static int grow(mta_table *t)
{
    mta_table n;
    if (mta_table_init(&n, (t->mask + 1)) < 0)
        return -1;
    for (size_t i = 0; i <= t->mask; i++)
        if (t->vals[i]) {
            size_t j = mta_hash64(t->keys[i]) & n.mask;
            while (n.vals[j])
                j = (j + 1) & n.mask;
            n.keys[j] = t->keys[i];
            n.vals[j] = t->vals[i];
        }
    n.count = t->count;
    mta_table_destroy(t);
    *t = n;
    return 0;
}

int mta_table_put(mta_table *t, uint64_t key, uint32_t val)
{
    if ((t->count + 1) * 2 > t->mask + 1 && grow(t) < 0)
        return -1;
    size_t i = mta_hash64(key) & t->mask;
    while (t->vals[i] && t->keys[i] != key)
        i = (i + 1) & t->mask;
    if (!t->vals[i])
        t->count++;
    t->keys[i] = key;
    t->vals[i] = val + 1;
    return 0;
}
