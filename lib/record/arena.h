/*
 * arena.h - the sampled-block arena: every sampled block, and only those,
 * lives in one reserved address range, so free() recognizes a sampled
 * pointer with one subtraction and one compare (mtr_arena_owns) and never
 * looks anything up for the others.
 *
 * Each slot carries metadata (the tracker's token, the requested size, the
 * engine generation) in a shadow table, so freeing a sampled block needs no
 * hash table either.
 */
#ifndef MT_RECORD_ARENA_H
#define MT_RECORD_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include "thread.h"

extern uintptr_t mtr_arena_lo MT_HIDDEN;    /* 0 until reserved */
extern uintptr_t mtr_arena_span MT_HIDDEN;  /* 0 until reserved */

static inline int mtr_arena_owns(const void *p)
{
    return (uintptr_t)p - mtr_arena_lo < mtr_arena_span;
}

/* Reserve the range (idempotent). Returns 0, or -1 if no range could be
 * reserved (sampling then cannot run). */
MT_HIDDEN int mtr_arena_init(void);

/* A block of at least size bytes aligned to align (a power of two), zeroed
 * if zero is set, or NULL if the arena is exhausted. Its metadata starts
 * empty. */
MT_HIDDEN void *mtr_arena_alloc(size_t size, size_t align, int zero);

/* Attach the tracker's token and the engine generation to a live block. */
MT_HIDDEN void mtr_arena_set(void *p, uintptr_t token, uint32_t gen);

/* Free a block. Returns 1 with its token and generation if p was a live
 * block, 0 otherwise (double free or not a block start: ignored). */
MT_HIDDEN int mtr_arena_free(void *p, uintptr_t *token, uint32_t *gen);

/* Bytes the program may use in the block (its slot size), 0 if not a block. */
MT_HIDDEN size_t mtr_arena_usable(const void *p);

/* Fork support: hold the arena lock across fork(). */
MT_HIDDEN void mtr_arena_lock(void);
MT_HIDDEN void mtr_arena_unlock(void);
MT_HIDDEN void mtr_arena_reset_lock(void);

#endif
