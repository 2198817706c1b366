/*
 * carry.h - the sampled blocks still live in a rotating recording, kept by
 * the writer so that the next piece can start by announcing them again
 * (carry.c; docs/recorder.md, "Long runs: rotation"). Used only when
 * rotation is on, only by whoever holds the tracer's writer lock (the
 * writer thread, or the thread that stops the trace): never in an
 * allocation.
 */
#ifndef MT_RECORD_CARRY_H
#define MT_RECORD_CARRY_H

#include <stddef.h>
#include <stdint.h>

#include "thread.h"

/* A live block: qid is its id in the recording's queue (queue.h), piece_id
 * its id in the piece being written. */
struct mtr_carried {
    uint64_t qid;
    uint64_t piece_id;
    uint64_t size;
    uint64_t n_samples;
    int source;                /* MT_REC_SOURCE_* */
    const uint64_t *frames;    /* caller first */
    size_t nframes;
};

/* A block was written to the current piece. 0, or -1 out of memory. */
MT_HIDDEN int mtr_carry_add(uint64_t qid, uint64_t piece_id, uint64_t size,
                            uint64_t n_samples, int source, const uint64_t *frames,
                            size_t nframes);
/* A block was freed: 1 with *piece_id set (and the block forgotten), or 0
 * if it is not known. */
MT_HIDDEN int mtr_carry_take(uint64_t qid, uint64_t *piece_id);
/* Live blocks. */
MT_HIDDEN size_t mtr_carry_count(void);
/* Calls fn on every live block in allocation order; fn may change
 * c->piece_id (the block's id in a new piece). Stops at fn's first
 * non-zero return and returns it; -1 out of memory. Afterwards only the
 * stacks of live blocks are kept. */
MT_HIDDEN int mtr_carry_each(int (*fn)(void *ctx, struct mtr_carried *c), void *ctx);
/* Forget everything and free the memory (a new recording). */
MT_HIDDEN void mtr_carry_reset(void);
/* Bytes of memory held. */
MT_HIDDEN size_t mtr_carry_memory(void);

#endif
