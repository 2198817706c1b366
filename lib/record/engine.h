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

/* Byte ranges that are not malloc blocks (anonymous mappings, mmap.c), on
 * the same Poisson process as malloc. mtr_range_decide: the number of
 * sample points among `size` new bytes; when nonzero the thread is inside
 * the recorder and mtr_range_track must follow. mtr_range_track: a uniform
 * random offset in [0, size) for each point (offsets[i]), the stack
 * captured once, and one single-sample allocation of `size` bytes reported
 * to the tracker per point (tokens[i], 0 = not tracked; at most max points,
 * the last one carrying the samples beyond); leaves the
 * recorder and returns the generation the tokens belong to.
 * mtr_range_untrack: a tracked point's bytes were unmapped. */
MT_HIDDEN uint64_t mtr_range_decide(size_t size);
MT_HIDDEN uint32_t mtr_range_track(void *base, size_t size, uint64_t n, size_t max, mt_alloc_kind kind,
                                   uint64_t *offsets, uintptr_t *tokens);
MT_HIDDEN void mtr_range_untrack(uintptr_t token, uint32_t gen);
MT_HIDDEN uint32_t mtr_engine_gen(void);

/* fork: called by the recorder's atfork handlers. */
MT_HIDDEN void mtr_engine_fork_prepare(void);
MT_HIDDEN void mtr_engine_fork_parent(void);
MT_HIDDEN void mtr_engine_fork_child(void);

#endif
