/*
 * vec.h - growable arrays: room for one more element, doubling the
 * capacity (from a first size) when full. The array is a plain pointer,
 * a count and a size_t capacity kept by the caller.
 * Header only; it allocates with realloc (in the recorder, only where the
 * recorder may allocate: its writer thread, through the codec).
 */
#ifndef MT_COMMON_VEC_H
#define MT_COMMON_VEC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The array at *(T **)pp, grown to twice *cap elements of elem bytes
 * (first when 0): 0, or -1 when out of memory or too large (the array
 * and *cap then untouched). Through memcpy: pp is a T **, of any T. */
static inline int mt_vec_grow_(void *pp, size_t *cap, size_t elem, size_t first)
{
    void *old;
    memcpy(&old, pp, sizeof old);
    size_t nc = *cap ? *cap * 2 : first;
    if (nc <= *cap || nc > SIZE_MAX / elem)
        return -1;
    void *np = realloc(old, nc * elem);
    if (!np)
        return -1;
    memcpy(pp, &np, sizeof np);
    *cap = nc;
    return 0;
}

/* Room for element n of array v (capacity cap, a size_t): 0, or -1 when
 * out of memory (v and cap untouched). v and cap are evaluated twice. */
#define MT_VEC_ROOM(v, n, cap, first) \
    ((size_t)(n) < (cap) ? 0 : mt_vec_grow_(&(v), &(cap), sizeof *(v), (first)))

#endif
