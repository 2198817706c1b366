/*
 * radix.h - sorting 64-bit keys by a range of their bits (a radix sort, 16
 * bits a pass): the sort of keys that pack a value above an index, which
 * then orders the index by the value, ties in index order. The analysis's
 * fold of never-collected blocks (by sequence number) and the symbolizer's
 * symbol tables (by address) sort with it.
 * Header only.
 */
#ifndef MT_COMMON_RADIX_H
#define MT_COMMON_RADIX_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The number of bits x needs (0 for 0). */
static inline unsigned mt_bits_for(uint64_t x)
{
    return x ? 64 - (unsigned)__builtin_clzll(x) : 0;
}

/* Sorts keys[0..n) by their bits lo .. lo + nbits - 1, stably (tmp has room
 * for n keys). Returns the sorted array: keys or tmp; NULL when out of
 * memory. */
static inline uint64_t *mt_radix_sort(uint64_t *keys, uint64_t *tmp, size_t n, unsigned lo,
                                      unsigned nbits)
{
    size_t *count = malloc(((size_t)1 << 16) * sizeof *count);
    if (!count)
        return NULL;
    for (unsigned shift = lo; shift < lo + nbits; shift += 16) {
        memset(count, 0, ((size_t)1 << 16) * sizeof *count);
        for (size_t i = 0; i < n; i++)
            count[(keys[i] >> shift) & 0xffff]++;
        size_t sum = 0;
        for (size_t d = 0; d < ((size_t)1 << 16); d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            tmp[count[(keys[i] >> shift) & 0xffff]++] = keys[i];
        uint64_t *t = keys;
        keys = tmp;
        tmp = t;
    }
    free(count);
    return keys;
}

#endif
