/*
 * pool.h - the growable arrays (MTA_VEC) and the string pool of lib/analyze's
 * models. Internal.
 */
#ifndef MTA_POOL_H
#define MTA_POOL_H

#include <stddef.h>

#include "vec.h"

/* A growable array of fixed-size items: lib/common/vec.h's, from 16. */
#define MTA_VEC(T) struct { T *v; size_t n, cap; }
static inline int mta_grow(void **v, size_t *cap, size_t need, size_t item)
{
    return mt_vec_reserve_(v, cap, item, need, 16);
}
#define MTA_PUSH(vec, item) \
    (((vec).n < (vec).cap || \
      mta_grow((void **)&(vec).v, &(vec).cap, (vec).n + 1, sizeof *(vec).v) == 0) \
         ? ((vec).v[(vec).n++] = (item), 0) : -1)

/* String storage, a pool: chunks of MTA_POOL_CHUNK bytes (or one string's
 * size) that live as long as the pool. */
#define MTA_POOL_CHUNK 65536
typedef struct mta_pool {
    char **chunks;
    size_t n, cap;
    char *cur;
    size_t left;
} mta_pool;
/* A copy of s in the pool, or NULL when out of memory. */
const char *mta_strdup(mta_pool *a, const char *s);
/* The chunks of from move to a (the strings stay where they are). Returns
 * 0, or -1 when out of memory: the chunks not moved stay from's. */
int mta_pool_adopt(mta_pool *a, mta_pool *from);
void mta_pool_free(mta_pool *a);

#endif
