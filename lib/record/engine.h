/*
 * engine.h - the sampling engine's internal interface: the slow paths the
 * malloc-family entry points fall into when a thread's countdown runs out,
 * and the hooks fork handling needs.
 */
#ifndef MT_RECORD_ENGINE_H
#define MT_RECORD_ENGINE_H

#include <stddef.h>

#include "memtrace/record.h"
#include "thread.h"

/* An allocation of size bytes (align 0 = malloc alignment) whose bytes the
 * countdown could not cover, or the first one of a thread. */
MT_HIDDEN void *mtr_slow_alloc(size_t size, size_t align, mt_alloc_kind kind);
/* realloc(p, size) of a block not in the arena, countdown expired. */
MT_HIDDEN void *mtr_slow_realloc(void *p, size_t size);
/* realloc(p, size) of a sampled block. */
MT_HIDDEN void *mtr_realloc_sampled(void *p, size_t size);
/* free(p) of a pointer inside the arena. */
MT_HIDDEN void mtr_free_sampled(void *p);

/* fork: called by the recorder's atfork handlers. */
MT_HIDDEN void mtr_engine_fork_prepare(void);
MT_HIDDEN void mtr_engine_fork_parent(void);
MT_HIDDEN void mtr_engine_fork_child(void);

#endif
