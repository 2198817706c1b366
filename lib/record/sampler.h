/*
 * sampler.h - the sampler's internal interface: the slow paths the
 * malloc-family entry points fall into when a thread's countdown runs out,
 * and the hooks fork handling needs.
 */
#ifndef MT_RECORD_SAMPLER_H
#define MT_RECORD_SAMPLER_H

#include <stddef.h>

#include "memtrace/record.h"
#include "thread.h"

/* p: the block the real allocator just returned for size bytes whose
 * countdown ran out, or the first ones of a thread (NULL: the allocation
 * failed, nothing happens). Samples it or not; returns p, errno kept. */
MT_HIDDEN void *mtr_sample_new(void *p, size_t size, mt_alloc_kind kind);
/* free(p) of a pointer the filter marks (sampled.h), not a boot block: a
 * sampled block or not. */
MT_HIDDEN void mtr_free_slow(void *p);
/* The rest of free(p) once mtr_sampled_take(p) answered r (1: it was
 * sampled, with token and gen; 0: it was not; -1: unknown, the table is
 * held by this thread): frees p now or later, and reports it. interpose.c
 * takes p out of the table itself, so that frees of blocks that were never
 * sampled stay out of the instrumented sampler in TSan builds (a thread
 * TSan is still starting frees glibc's blocks). */
MT_HIDDEN void mtr_free_taken(void *p, int r, uintptr_t token, uint32_t gen);
/* realloc(p, size) of a sampled block p, already taken out of the table
 * (token, gen: what it held). */
MT_HIDDEN void *mtr_realloc_taken(void *p, size_t size, uintptr_t token, uint32_t gen);

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
MT_HIDDEN uint32_t mtr_sampler_gen(void);

/* fork: called by the recorder's atfork handlers. */
MT_HIDDEN void mtr_sampler_fork_prepare(void);
MT_HIDDEN void mtr_sampler_fork_parent(void);
MT_HIDDEN void mtr_sampler_fork_child(void);

#endif
