/*
 * vec.h - growable arrays, the one kit of every layer: room for one more
 * element (MT_VEC_ROOM) or for at least `need` elements (MT_VEC_RESERVE),
 * the capacity doubling from a first size. The array is a plain pointer, a
 * count and a size_t capacity kept by the caller (lib/analyze's MTA_VEC and
 * mta_grow, pool.h, are these).
 * Header only; it allocates with realloc, or with the realloc-like function
 * the _IN forms take (the recorder's own heap, lib/record/ownheap.h).
 */
#ifndef MT_COMMON_VEC_H
#define MT_COMMON_VEC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The array at *(T **)pp, grown to the first capacity at least need
 * elements of elem bytes among first (when *cap is 0), *cap * 2, * 4 ...:
 * 0, or -1 when out of memory or too large (the array and *cap then
 * untouched). Through memcpy: pp is a T **, of any T. */
static inline int mt_vec_reserve_in_(void *(*re)(void *, size_t), void *pp, size_t *cap,
                                     size_t elem, size_t need, size_t first)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : first ? first : 1;
    while (nc < need) {
        if (nc > SIZE_MAX / 2)
            return -1;
        nc *= 2;
    }
    if (nc > SIZE_MAX / elem)
        return -1;
    void *old;
    memcpy(&old, pp, sizeof old);
    void *np = re(old, nc * elem);
    if (!np)
        return -1;
    memcpy(pp, &np, sizeof np);
    *cap = nc;
    return 0;
}

/* The same for one element more than *cap: twice *cap, or first. */
static inline int mt_vec_grow_in_(void *(*re)(void *, size_t), void *pp, size_t *cap, size_t elem,
                                  size_t first)
{
    if (*cap == SIZE_MAX)
        return -1;
    return mt_vec_reserve_in_(re, pp, cap, elem, *cap + 1, first);
}

static inline int mt_vec_reserve_(void *pp, size_t *cap, size_t elem, size_t need, size_t first)
{
    return mt_vec_reserve_in_(realloc, pp, cap, elem, need, first);
}

static inline int mt_vec_grow_(void *pp, size_t *cap, size_t elem, size_t first)
{
    return mt_vec_grow_in_(realloc, pp, cap, elem, first);
}

/* Room for element n of array v (capacity cap, a size_t): 0, or -1 when
 * out of memory (v and cap untouched). v and cap are evaluated twice. */
#define MT_VEC_ROOM(v, n, cap, first) MT_VEC_ROOM_IN(realloc, v, n, cap, first)

/* Room for need elements of array v (capacity cap): 0 or -1, as above. */
#define MT_VEC_RESERVE(v, need, cap, first) MT_VEC_RESERVE_IN(realloc, v, need, cap, first)

/* The same with re, a realloc-like function, instead of realloc. */
#define MT_VEC_ROOM_IN(re, v, n, cap, first) \
    ((size_t)(n) < (cap) ? 0 : mt_vec_grow_in_((re), &(v), &(cap), sizeof *(v), (first)))
#define MT_VEC_RESERVE_IN(re, v, need, cap, first) \
    ((size_t)(need) <= (cap) ? 0 : mt_vec_reserve_in_((re), &(v), &(cap), sizeof *(v), (need), (first)))

#endif
