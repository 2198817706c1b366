/*
 * thread.h - the recorder's per-thread state: the sampling countdown (bytes
 * until the next sample point), the PRNG, the re-entrancy guard and the
 * thread's stack bounds.
 *
 * The state is one small initial-exec TLS struct (initial-exec because the
 * default TLS model can call malloc from __tls_get_addr and recurse). Fresh
 * threads see it zeroed: countdown 0 sends their first allocation to the
 * slow path, which initializes the rest.
 *
 * The re-entrancy guard is folded into the countdown: while the recorder
 * itself runs on a thread (a callback, the writer thread, libdw, fork
 * handlers) the countdown is parked at MT_PARKED, so every allocation made
 * meanwhile stays on the fast path and is never sampled.
 */
#ifndef MT_RECORD_THREAD_H
#define MT_RECORD_THREAD_H

#include <stdint.h>

#include "check.h"

#define MT_HIDDEN __attribute__((visibility("hidden")))
#define MT_PARKED ((uint64_t)1 << 62)
#define MT_MAX_PENDING 16

struct mtr_thread {
    uint64_t countdown;     /* bytes until the next sample point (fast path) */
    uint64_t saved;         /* countdown while parked */
    uint64_t rng;           /* xorshift64* state; 0 = thread not initialized */
    uintptr_t stack_lo;     /* stack bounds for the frame-pointer walk; 0 = unknown */
    uintptr_t stack_hi;
    uint32_t armed;         /* sampler generation the countdown was drawn for; 0 = none */
    int busy;               /* nesting depth of recorder code on this thread */
    int in_table;           /* holding a lock of the sampled-block table (sampled.h) */
    int npending;           /* frees deferred while busy (signal handlers) */
    uint64_t marked;        /* frees behind a set filter bit, not yet folded (sampled.h) */
    struct mtr_pending {
        void *block;        /* a block to free later (the table was locked), or NULL: */
        uintptr_t token;    /* a sampled block freed already, to report to the tracker */
        uint32_t gen;
    } pending[MT_MAX_PENDING];
};

extern __thread struct mtr_thread mtr_tls
    __attribute__((tls_model("initial-exec"))) MT_HIDDEN;

/* Enter / leave recorder code on this thread: nothing allocated in between
 * is sampled. Nestable. */
static inline void mtr_enter(void)
{
    struct mtr_thread *t = &mtr_tls;
    MT_ASSERT(t->busy >= 0);
    if (t->busy++ == 0) {
        t->saved = t->countdown;
        t->countdown = MT_PARKED;
    }
}

static inline void mtr_leave(void)
{
    struct mtr_thread *t = &mtr_tls;
    MT_ASSERT(t->busy > 0);   /* every leave has its enter */
    if (--t->busy == 0)
        t->countdown = t->saved;
}

#endif
