/*
 * tracer_sample.c - the sampler's callbacks of the tracer (tracer_state.h),
 * on the program's threads with sampling disabled: a sampled allocation
 * queued with its stack (a stack cut at the depth limit ends with the
 * [truncated] frame) and given a token naming its recording; its free
 * queued when the token is the current recording's. A child's file is
 * opened at its first sample.
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "sampler.h"
#include "tracer_state.h"

/* Asked only when the queue is full. A child made by a raw clone or
 * _Fork (no atfork handlers) has no writer thread: don't wait for one. */
static int consumer_alive(void)
{
    return __atomic_load_n(&mtr_tr.thread_alive, __ATOMIC_ACQUIRE) &&
           __atomic_load_n(&mtr_tr.state, __ATOMIC_ACQUIRE) == ACTIVE && mtr_tr.pid == getpid();
}

/* The queue's source of a sampled block. */
static int rec_source(const mt_allocation *a)
{
    return a->kind == MT_ALLOC_MMAP || a->kind == MT_ALLOC_MREMAP ? MT_REC_SOURCE_MMAP
                                                                   : MT_REC_SOURCE_MALLOC;
}

/* Queues an allocation whose stack was cut at the depth limit, with the
 * [truncated] frame after its outermost frame. Out of line, so that the
 * copy's stack space is only taken on this path (threads may have small
 * stacks). */
static __attribute__((noinline)) int64_t queue_truncated(const mt_allocation *a)
{
    size_t n = a->callstack_length;
    uintptr_t cut[n + 1];
    memcpy(cut, a->callstack, n * sizeof *cut);   /* innermost first */
    cut[n] = TRUNCATED_CODE;
    return mtr_queue_alloc_from(a->size, a->n_samples, cut, n + 1, rec_source(a), consumer_alive);
}

/* A sampled block's token: its id + 1, and in the top 16 bits the
 * recording it belongs to, so that a block of an earlier recording of this
 * process (on/off control) is never taken for one of the current recording
 * when it is freed, even once the sampler's 7-bit generation has wrapped. */

static uint64_t token_of(int64_t id)
{
    uint64_t e = __atomic_load_n(&mtr_tr.epoch, __ATOMIC_RELAXED) & 0xffff;
    return (e << MTR_TOKEN_ID_BITS) | (((uint64_t)id + 1) & MTR_TOKEN_ID_MASK);
}

void *mtr_tr_on_alloc(void *ctx, const mt_allocation *a)
{
    (void)ctx;
    int st = __atomic_load_n(&mtr_tr.state, __ATOMIC_ACQUIRE);
    if (st == CHILD_PENDING) {
        pthread_mutex_lock(&mtr_tr.wlock);
        if (mtr_tr.state == CHILD_PENDING && mtr_tr_open_trace(0) != 0) {
            mtr_tr.state = IDLE;
            mt_memprof_stop();
        }
        pthread_mutex_unlock(&mtr_tr.wlock);
        st = __atomic_load_n(&mtr_tr.state, __ATOMIC_ACQUIRE);
    }
    if (st != ACTIVE)
        return NULL;
    int64_t id = a->callstack_truncated && a->callstack_length <= MAX_FRAMES
                     ? queue_truncated(a)
                     : mtr_queue_alloc_from(a->size, a->n_samples, a->callstack,
                                            a->callstack_length, rec_source(a), consumer_alive);
    return id < 0 ? NULL : (void *)(uintptr_t)token_of(id);
}

void mtr_tr_on_free(void *ctx, void *token)
{
    (void)ctx;
    uint64_t t = (uint64_t)(uintptr_t)token;
    if (__atomic_load_n(&mtr_tr.state, __ATOMIC_ACQUIRE) == ACTIVE &&
        (t >> MTR_TOKEN_ID_BITS) == (__atomic_load_n(&mtr_tr.epoch, __ATOMIC_RELAXED) & 0xffff))
        mtr_queue_collect((t & MTR_TOKEN_ID_MASK) - 1, consumer_alive);
}
