/*
 * ownheap.h - the recorder's own small allocator (ownheap.c): memory for
 * the recorder's tables (the codec's writer, carry.c, modules.c, the names
 * memtrace_start_tracing keeps) taken from mappings of its own, never from
 * the program's allocator, and counted among the recorder's own regions
 * (own.c) that the resident-memory ledger shows. Not for the malloc fast
 * path or a signal handler: it takes a lock (nothing else is taken under
 * it but own.c's, only tried).
 */
#ifndef MT_RECORD_OWNHEAP_H
#define MT_RECORD_OWNHEAP_H

#include <stddef.h>

#include "thread.h"

/* As malloc, calloc, realloc, free and strdup; blocks are 16-byte aligned. */
MT_HIDDEN void *mtr_heap_alloc(size_t n);
MT_HIDDEN void *mtr_heap_calloc(size_t n, size_t size);
MT_HIDDEN void *mtr_heap_realloc(void *p, size_t n);
MT_HIDDEN void mtr_heap_free(void *p);
MT_HIDDEN char *mtr_heap_strdup(const char *s);

/* The codec's allocator hook (lib/trace/alloc.h) onto this heap. */
struct mt_alloc;
MT_HIDDEN extern const struct mt_alloc mtr_heap_codec;

/* Around fork: the lock held across it, so the child's heap is whole. */
MT_HIDDEN void mtr_heap_fork_prepare(void);
MT_HIDDEN void mtr_heap_fork_parent(void);
MT_HIDDEN void mtr_heap_fork_child(void);

#endif
