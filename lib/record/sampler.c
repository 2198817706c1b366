/*
 * sampler.c - the sampler (the counterpart of OCaml's Gc.Memprof):
 * per-byte sampling of the allocation stream, the sampled-block slow paths
 * and the public mt_memprof_* API.
 *
 * Every allocated byte is sampled independently with probability `rate`,
 * so a block of s bytes holds Binomial(s, rate) sample points. Each thread
 * counts down the bytes to its next sampled byte (thread.h); the gaps are
 * geometric (draw.h). When an allocation of s bytes reaches the countdown
 * c, byte c of the block is sampled, the s - c bytes after it hold
 * Binomial(s - c, rate) more, and a geometric gap past the block's end
 * becomes the next countdown (exact: the bytes are independent, so the gap
 * after the block forgets what happened inside it).
 * A sampled block is the real allocator's own block, allocated exactly as
 * the program asked (real.h); its stack is captured (unwind.h), the
 * tracker's alloc callback decides whether to track it, and the table of
 * sampled blocks (sampled.h) remembers its token until it is freed.
 *
 * Start/stop publish a generation number: 0 means stopped. A thread whose
 * countdown was drawn for another generation draws afresh, and blocks
 * tracked under an old generation (before stop, or inherited over fork)
 * are freed without calling the free callback.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "draw.h"
#include "hash.h"
#include "lock.h"
#include "recconf.h"
#include "sampler.h"
#include "mmap.h"
#include "real.h"
#include "sampled.h"
#include "unwind.h"

#define DEFAULT_DEPTH MT_RECCONF_DEPTH_DEFAULT
#define MAX_DEPTH 1024
/* While stopped, threads re-check every IDLE_RECHECK bytes whether
 * sampling started. */
#define IDLE_RECHECK ((uint64_t)256 << 10)

__thread struct mtr_thread mtr_tls __attribute__((tls_model("initial-exec")));

static struct {
    uint32_t gen;          /* current generation while running, 0 when stopped */
    uint32_t last_gen;
    double rate;           /* probability that a byte is sampled */
    double scale;          /* mtr_geometric_scale(rate) */
    size_t depth;
    mt_tracker tracker;
    pid_t pid;             /* process that owns the sampling state */
    int control;           /* lock (lock.h) for start/stop */
} eng;

static void control_lock(void)
{
    mtr_lock(&eng.control);
}

static void control_unlock(void)
{
    mtr_unlock(&eng.control);
}

/* ---------------------------------------------------------------------- */
/* Random numbers                                                          */

static void seed(struct mtr_thread *t)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t s = mt_mix64_split((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
                       (uint64_t)(uintptr_t)t ^ ((uint64_t)syscall(SYS_gettid) << 17) ^
                       __builtin_ia32_rdtsc());
    t->rng = s ? s : 0x9e3779b97f4a7c15ULL;
}

/* The gap to the next sampled byte. */
static uint64_t draw_gap(struct mtr_thread *t)
{
    return mtr_geometric(&t->rng, eng.scale);
}

/* ---------------------------------------------------------------------- */
/* The sampling decision                                                   */

static void thread_init(struct mtr_thread *t)
{
    seed(t);
    if (!t->stack_hi)
        mtr_unwind_init_main_thread();
}

/* The countdown cannot cover `bytes` (or the thread is new). Returns the
 * number of sample points in the block, with the thread entered (mtr_enter)
 * and its next countdown saved, or 0 if the block is not sampled. */
static uint64_t decide(struct mtr_thread *t, size_t size)
{
    uint64_t bytes = size ? size : 1;

    if (t->busy)
        return 0;   /* the recorder's own allocation (huge request while parked) */
    if (!t->rng)
        thread_init(t);
    uint32_t gen = __atomic_load_n(&eng.gen, __ATOMIC_ACQUIRE);
    /* No getpid() here: it is a system call (a tenth of the cost of a
     * sample). fork children are reset by the atfork handler; a vfork child
     * may only exec or _exit, and posix_spawn's child does not allocate. */
    if (!gen) {
        t->armed = 0;
        t->countdown = IDLE_RECHECK;
        return 0;
    }
    if (t->armed != gen) {
        t->armed = gen;
        t->countdown = draw_gap(t);
    }
    uint64_t c = t->countdown;
    if (bytes < c) {
        t->countdown = c - bytes;
        return 0;
    }
    /* Byte number c of the block is sampled; so is each byte after it
     * with probability rate. With few expected samples in the rest, walk
     * the gaps: the one that overshoots the block, less the bytes it
     * covered in the block, is again a geometric gap (memorylessness), the
     * next countdown. Otherwise draw the count at once. */
    uint64_t rest = bytes - c, n = 1, next;
    if ((double)rest * eng.rate < 16.0) {
        for (;;) {
            uint64_t e = draw_gap(t);
            if (e > rest) {
                next = e - rest;
                break;
            }
            rest -= e;
            n++;
        }
    } else {
        n += mtr_binomial(&t->rng, rest, eng.rate);
        next = draw_gap(t);
    }
    t->countdown = next;
    mtr_enter();
    return n;
}

/* The tracker hears that a tracked block was freed, unless it belongs to
 * another generation (tracked before a stop, or by the parent of a fork).
 * The thread is inside the recorder, in code of its own (not a signal
 * handler that interrupted the tracker). */
static void tracker_free(uintptr_t token, uint32_t gen)
{
    uint32_t cur = __atomic_load_n(&eng.gen, __ATOMIC_ACQUIRE);
    if (token && cur && gen == cur && eng.tracker.free)
        eng.tracker.free(eng.tracker.ctx, (void *)token);
}

static void defer(struct mtr_thread *t, void *block, uintptr_t token, uint32_t gen)
{
    if (t->npending < MT_MAX_PENDING) {
        struct mtr_pending *e = &t->pending[t->npending++];
        e->block = block;
        e->token = token;
        e->gen = gen;
    }
    /* else dropped: the block stays allocated, or is reported live; a
     * deadlock would be worse */
}

/* A sampled block was freed: tell the tracker, now or, when this thread is
 * inside the recorder already (a signal handler interrupted it, maybe inside
 * the tracker and its locks), once it leaves. */
static void report_free(struct mtr_thread *t, uintptr_t token, uint32_t gen)
{
    if (t->busy) {
        defer(t, NULL, token, gen);
        return;
    }
    mtr_enter();
    tracker_free(token, gen);
    mtr_leave();
}

static void run_pending(struct mtr_thread *t)
{
    while (t->npending > 0 && !t->busy) {
        struct mtr_pending e = t->pending[--t->npending];
        if (e.block)
            mtr_free_slow(e.block);
        else
            report_free(t, e.token, e.gen);
    }
}

/* Stack, callback, table entry; then leave the recorder. p is the real
 * allocator's block. */
static MT_HOOK void finish_sample(struct mtr_thread *t, void *p, size_t size,
                                  uint64_t n, mt_alloc_kind kind)
{
    size_t depth = eng.depth;
    uintptr_t frames[depth];
    mt_allocation a;
    uint32_t gen = __atomic_load_n(&eng.gen, __ATOMIC_ACQUIRE);

    a.n_samples = n;
    a.size = size;
    a.kind = kind;
    a.ptr = p;
    a.callstack = frames;
    a.callstack_length = mtr_unwind(frames, depth, &a.callstack_truncated);
    if (gen && eng.tracker.alloc) {
        void *token = eng.tracker.alloc(eng.tracker.ctx, &a);
        if (token) {
            uintptr_t old_token;
            uint32_t old_gen;
            int r = mtr_sampled_add(p, (uintptr_t)token, gen, &old_token, &old_gen);
            if (r > 0)
                tracker_free(old_token, old_gen);   /* freed where we could not see it */
            else if (r < 0)
                tracker_free((uintptr_t)token, gen);   /* cannot follow it: not live */
        }
    }
    mtr_leave();
    run_pending(t);
}

MT_HOOK void *mtr_sample_new(void *p, size_t size, mt_alloc_kind kind)
{
    if (!p)
        return NULL;
    struct mtr_thread *t = &mtr_tls;
    int saved = errno;
    uint64_t n = decide(t, size);
    if (n)
        finish_sample(t, p, size, n, kind);
    errno = saved;
    return p;
}

MT_HOOK void mtr_free_slow(void *p)
{
    uintptr_t token = 0;
    uint32_t gen = 0;

    mtr_enter();
    int r = mtr_sampled_take(p, &token, &gen);
    mtr_leave();
    mtr_free_taken(p, r, token, gen);
}

MT_HOOK void mtr_free_taken(void *p, int r, uintptr_t token, uint32_t gen)
{
    struct mtr_thread *t = &mtr_tls;

    if (r < 0) {
        /* A signal handler interrupted this thread inside the table. */
        defer(t, p, 0, 0);
        return;
    }
    if (r > 0)
        report_free(t, token, gen);
    mtr_real.free(p);
    run_pending(t);
}

MT_HOOK void *mtr_realloc_taken(void *p, size_t size, uintptr_t token, uint32_t gen)
{
    struct mtr_thread *t = &mtr_tls;
    void *q = mtr_real.realloc(p, size);
    if (!q && size) {
        /* Failed: p is intact and still the sampled block it was. */
        uintptr_t old_token;
        uint32_t old_gen;
        mtr_enter();
        if (mtr_sampled_add(p, token, gen, &old_token, &old_gen) < 0)
            tracker_free(token, gen);
        mtr_leave();
        return NULL;
    }
    /* The old block is gone, in place or not: freed first, then the new
     * size counted as an allocation of its own. */
    report_free(t, token, gen);
    run_pending(t);
    return mtr_sample_new(q, size, MT_ALLOC_REALLOC);
}

/* ---------------------------------------------------------------------- */
/* Byte ranges other than malloc blocks (anonymous mappings)               */

MT_HOOK uint64_t mtr_range_decide(size_t size)
{
    return decide(&mtr_tls, size);
}

/* Given n points of a Poisson process in a range, their positions are
 * independent and uniform over it. */
MT_HOOK uint32_t mtr_range_track(void *base, size_t size, uint64_t n, size_t max, mt_alloc_kind kind,
                                 uint64_t *offsets, uintptr_t *tokens)
{
    struct mtr_thread *t = &mtr_tls;
    size_t depth = eng.depth;
    uintptr_t frames[depth];
    mt_allocation a;
    uint32_t gen = __atomic_load_n(&eng.gen, __ATOMIC_ACQUIRE);

    a.n_samples = 1;
    a.size = size;
    a.kind = kind;
    a.callstack = frames;
    a.callstack_length = mtr_unwind(frames, depth, &a.callstack_truncated);
    size_t k = n < max ? (size_t)n : max;
    for (size_t i = 0; i < k; i++) {
        if (i == k - 1)
            a.n_samples = n - (k - 1);   /* beyond max points, the last one carries the rest */
        offsets[i] = size ? (uint64_t)(mtr_uniform(&t->rng) * (double)size) : 0;
        if (offsets[i] >= size)
            offsets[i] = size ? size - 1 : 0;
        tokens[i] = 0;
        if (gen && eng.tracker.alloc) {
            a.ptr = (char *)base + offsets[i];
            tokens[i] = (uintptr_t)eng.tracker.alloc(eng.tracker.ctx, &a);
        }
    }
    mtr_leave();
    run_pending(t);
    return gen;
}

MT_HOOK void mtr_range_untrack(uintptr_t token, uint32_t gen)
{
    uint32_t cur = __atomic_load_n(&eng.gen, __ATOMIC_ACQUIRE);
    if (token && cur && gen == cur && eng.tracker.free) {
        mtr_enter();
        eng.tracker.free(eng.tracker.ctx, (void *)token);
        mtr_leave();
    }
}

uint32_t mtr_sampler_gen(void)
{
    return __atomic_load_n(&eng.gen, __ATOMIC_ACQUIRE);
}

/* ---------------------------------------------------------------------- */
/* Public API                                                              */

static uint32_t new_gen(void)
{
    uint32_t g = ++eng.last_gen;
    if (g == 0)
        g = ++eng.last_gen;   /* 0 means stopped */
    return g;
}

int mt_memprof_start(double rate, size_t callstack_size, const mt_tracker *tracker)
{
    if (!(rate > 0.0 && rate <= 1.0) || !tracker)
        return -1;
    mtr_unwind_setup();   /* loads the unwinder outside the malloc path */
    mtr_real_resolve();
    control_lock();
    if (eng.gen) {
        control_unlock();
        return -1;
    }
    eng.rate = rate;
    eng.scale = mtr_geometric_scale(rate);
    eng.depth = callstack_size ? callstack_size : DEFAULT_DEPTH;
    if (eng.depth > MAX_DEPTH)
        eng.depth = MAX_DEPTH;
    eng.tracker = *tracker;
    eng.pid = getpid();
    uint32_t gen = new_gen();
    __atomic_store_n(&eng.gen, gen, __ATOMIC_RELEASE);
    control_unlock();
    /* The calling thread samples from its very next byte on. Other threads
     * notice the start when their countdown runs out: the one drawn for an
     * earlier run, or IDLE_RECHECK if they reached it while stopped. */
    struct mtr_thread *t = &mtr_tls;
    if (!t->rng)
        thread_init(t);
    t->armed = gen;
    if (t->busy)
        t->saved = draw_gap(t);
    else
        t->countdown = draw_gap(t);
    return 0;
}

int mt_memprof_stop(void)
{
    control_lock();
    int was = eng.gen != 0;
    __atomic_store_n(&eng.gen, 0, __ATOMIC_RELEASE);
    control_unlock();
    return was ? 0 : -1;
}

int mt_memprof_running(void)
{
    return __atomic_load_n(&eng.gen, __ATOMIC_ACQUIRE) != 0;
}

/* ---------------------------------------------------------------------- */
/* fork                                                                    */

void mtr_sampler_fork_prepare(void)
{
    mtr_unwind_fork_prepare();
    control_lock();
    mtr_mmap_fork_prepare();
    mtr_sampled_lock_all();
}

void mtr_sampler_fork_parent(void)
{
    mtr_sampled_unlock_all();
    mtr_mmap_fork_parent();
    control_unlock();
    mtr_unwind_fork_parent();
}

void mtr_sampler_fork_child(void)
{
    struct mtr_thread *t = &mtr_tls;
    mtr_sampled_reset_locks();
    mtr_mmap_fork_child();
    mtr_unwind_fork_child();
    eng.pid = getpid();
    /* Blocks tracked by the parent are not the child's business. */
    if (eng.gen)
        __atomic_store_n(&eng.gen, new_gen(), __ATOMIC_RELEASE);
    seed(t);        /* otherwise parent and child draw the same sample points */
    uint64_t c = eng.gen ? draw_gap(t) : IDLE_RECHECK;
    if (t->busy)
        t->saved = c;
    else
        t->countdown = c;
    t->armed = eng.gen;
    t->npending = 0;
    eng.control = 0;
}
