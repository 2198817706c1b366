/*
 * pool.c - the string pool (pool.h).
 */
#include <stdlib.h>
#include <string.h>

#include "pool.h"

const char *mta_strdup(mta_pool *a, const char *s)
{
    size_t len = strlen(s) + 1;
    if (len > a->left) {
        size_t sz = len > MTA_POOL_CHUNK ? len : MTA_POOL_CHUNK;
        char *c = malloc(sz);
        if (!c)
            return NULL;
        if (a->n == a->cap && mta_grow((void **)&a->chunks, &a->cap, a->n + 1, sizeof(char *)) < 0) {
            free(c);
            return NULL;
        }
        a->chunks[a->n++] = c;
        a->cur = c;
        a->left = sz;
    }
    char *r = a->cur;
    memcpy(r, s, len);
    a->cur += len;
    a->left -= len;
    return r;
}

int mta_pool_adopt(mta_pool *a, mta_pool *from)
{
    for (size_t i = 0; i < from->n; i++) {
        if (!from->chunks[i])
            continue;
        if (a->n == a->cap && mta_grow((void **)&a->chunks, &a->cap, a->n + 1, sizeof(char *)) < 0)
            return -1;
        a->chunks[a->n++] = from->chunks[i];
        from->chunks[i] = NULL;
    }
    return 0;
}

void mta_pool_free(mta_pool *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->chunks[i]);
    free(a->chunks);
    memset(a, 0, sizeof *a);
}
