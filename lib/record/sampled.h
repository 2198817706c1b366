/*
 * sampled.h - the sampled blocks the program holds. A sampled block is an
 * ordinary block of the real allocator (real.h); only this table sets it
 * apart: block address -> the tracker's token and the sampler generation.
 *
 * In front of the table sits a counting filter that free() reads with one
 * load: a bit per 1 KiB of address space, set while some sampled block (or
 * a boot block, pinned for good) starts in a granule that maps there. A clear
 * bit means "not sampled" for certain; a set one sends free() to the table,
 * which has the answer. With the default sampling interval a program
 * holds a few hundred sampled blocks, so almost every free() sees a zero.
 * A free() behind a set bit counts itself in mtr_tls.marked, which the
 * thread's next table lookup folds into its shard (mt_memprof_free_marked).
 *
 * The table is split into shards, each an open-addressing array under its
 * own lock (a short spin, then a futex), mapped with the raw system call so that it never calls the
 * allocator it sits beside. A thread holding a shard lock is marked
 * (mtr_thread.in_table): a signal handler that frees on that thread must not
 * wait for the lock it interrupted.
 */
#ifndef MT_RECORD_SAMPLED_H
#define MT_RECORD_SAMPLED_H

#include <stddef.h>
#include <stdint.h>

#include "thread.h"

#define MTR_FILTER_BITS 17
#define MTR_GRANULE_SHIFT 10   /* a filter bit covers 1 KiB */

/* One bit per 1 KiB granule of address space, modulo 128 MiB: 16 KiB of
 * bits, of which a program's frees touch the few words that cover its heap
 * (a free() reads the bit of a granule it has just touched). (A byte per
 * hashed address, 256 KiB, made every free() a cache miss: 1.7 % of cc1's
 * time.) A sampled block sets the bit of the granule it starts in; frees of
 * its neighbours there, and of granules 128 MiB apart, look further. (With
 * a bit per 4 KiB page, 0.66 % of mallocbench's frees did, 0.17 % now: a page of small
 * blocks holds a dozen or more.) Counts per bit (the bit is set while its
 * count is nonzero) live beside it, touched only when the table changes,
 * under the lock of the one shard that holds every block of that bit's
 * granules. */
extern uint64_t mtr_filter[((size_t)1 << MTR_FILTER_BITS) / 64] MT_HIDDEN;
extern uint8_t mtr_filter_count[(size_t)1 << MTR_FILTER_BITS] MT_HIDDEN;
/* Behind a set bit, which 64-byte lines of the granule start a sampled
 * block (a bit per line, 256 KiB in all, read only by a free() whose
 * granule's bit is set): without them every neighbour there would search
 * the table (bench/free_filter.c counts them). */
extern uint16_t mtr_filter_lines[(size_t)1 << MTR_FILTER_BITS] MT_HIDDEN;

static inline size_t mtr_filter_slot(const void *p)
{
    return (size_t)((uintptr_t)p >> MTR_GRANULE_SHIFT) & (((size_t)1 << MTR_FILTER_BITS) - 1);
}

static inline uint16_t mtr_filter_line_bit(const void *p)
{
    return (uint16_t)(1u << (((uintptr_t)p >> 6) & ((1u << (MTR_GRANULE_SHIFT - 6)) - 1)));
}

/* The granule's bit was set: 0 if p's line starts no sampled block for
 * certain. */
static inline int mtr_line_maybe_sampled(const void *p)
{
    return (__atomic_load_n(&mtr_filter_lines[mtr_filter_slot(p)], __ATOMIC_RELAXED) &
            mtr_filter_line_bit(p)) != 0;
}

/* 0: p is certainly not a sampled block (nor a boot block). */
static inline int mtr_maybe_sampled(const void *p)
{
    size_t s = mtr_filter_slot(p);
    return (int)(__atomic_load_n(&mtr_filter[s >> 6], __ATOMIC_RELAXED) >> (s & 63)) & 1;
}

/* Mark p's granule for good (a saturated count is never decremented): a
 * boot block. Takes the lock of p's shard, the writer of p's slot, unless
 * this thread holds a table lock already (a signal handler). */
MT_HIDDEN void mtr_filter_pin(const void *p);

/* Enter p as sampled. Returns 0; 1 if p was already in the table (a block
 * freed behind the recorder's back, say by jemalloc's dallocx, whose address
 * came back): *old_token and *old_gen then say what it held, and the caller
 * reports that block freed; -1 if there is no memory for the table (p is
 * not entered). The caller is inside the recorder (mtr_enter). */
MT_HIDDEN int mtr_sampled_add(const void *p, uintptr_t token, uint32_t gen,
                              uintptr_t *old_token, uint32_t *old_gen);

/* Take p out of the table: 1 with its token and generation if it was
 * there, 0 if it was not, -1 if this thread already holds a table lock (a
 * signal handler interrupted the table: the answer is unknown). */
MT_HIDDEN int mtr_sampled_take(const void *p, uintptr_t *token, uint32_t *gen);


/* The leak scan (leaks.c), with the program's other threads stopped: calls
 * fn on every block of the table (address, token) and range on the memory
 * of every shard's array, which holds block addresses and so must never
 * count as a reference. A shard whose lock is held (a thread stopped inside
 * it) is left out: its blocks get no verdict. No lock is taken. */
MT_HIDDEN void mtr_sampled_each(void (*fn)(void *ctx, uintptr_t addr, uintptr_t token),
                                void (*range)(void *ctx, uintptr_t lo, uintptr_t hi), void *ctx);

/* fork: hold every shard lock across fork(); the child starts unlocked. */
MT_HIDDEN void mtr_sampled_lock_all(void);
MT_HIDDEN void mtr_sampled_unlock_all(void);
MT_HIDDEN void mtr_sampled_reset_locks(void);

#endif
