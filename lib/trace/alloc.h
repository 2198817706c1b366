/*
 * alloc.h - the codec writer's allocator hook (private to the codec and the
 * recorder): where a writer and its name tables (mtf.c) take their memory.
 * NULL means the C library's realloc and free (the analysis side); the
 * recorder passes its own heap (lib/record/ownheap.c) so that its writer
 * never allocates from the profiled program's allocator.
 */
#ifndef MT_TRACE_ALLOC_H
#define MT_TRACE_ALLOC_H

#include <stdlib.h>
#include <string.h>

#include "memtrace/trace.h"

typedef struct mt_alloc {
    void *(*realloc)(void *p, size_t n);   /* realloc(NULL, n) allocates */
    void (*free)(void *p);
} mt_alloc;

/* Its realloc (for vec.h's MT_VEC_ROOM_IN). */
static inline void *(*mt_al_re(const mt_alloc *a))(void *, size_t)
{
    return a ? a->realloc : realloc;
}

static inline void *mt_al_realloc(const mt_alloc *a, void *p, size_t n)
{
    return a ? a->realloc(p, n) : realloc(p, n);
}

static inline void *mt_al_zalloc(const mt_alloc *a, size_t n)
{
    void *p = mt_al_realloc(a, NULL, n);
    if (p)
        memset(p, 0, n);
    return p;
}

static inline void mt_al_free(const mt_alloc *a, void *p)
{
    if (a)
        a->free(p);
    else
        free(p);
}

static inline char *mt_al_strdup(const mt_alloc *a, const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = mt_al_realloc(a, NULL, n);
    if (c)
        memcpy(c, s, n);
    return c;
}

/* mt_writer_open with its memory (the writer, its tables, *error's
 * message, which the caller frees with al) from al (NULL: malloc). */
__attribute__((visibility("hidden"))) mt_writer *
mt_writer_open_in(const mt_alloc *al, int fd, const mt_trace_info *info,
                  const mt_writer_options *opts, char **error);

#endif
