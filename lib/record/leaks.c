/*
 * leaks.c - the leak scan at exit or on request (leaks.h): which blocks,
 * stopping the program, and their verdicts written to TRACE.leaks with the
 * file's owner, lib/trace/verdicts.c (docs/format.md, "Leak verdicts").
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "leaks.h"
#include "real.h"
#include "sampled.h"
#include "tracer.h"
#include "../trace/verdicts.h"

#define MAX_EXCL 64

/* Why the last scan gave no verdicts ("" when it did): for ctl. */
static char why_not[512];

const char *mtr_leaks_why(void)
{
    return why_not;
}

void mtr_leaks_no_verdicts(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why_not, sizeof why_not, fmt, ap);
    va_end(ap);
    mtr_tracer_message("--leaks: %s: no leak verdicts", why_not);
}

struct gather {
    struct mtr_lk_block *b;
    size_t n, cap;
    uint64_t epoch;
    uintptr_t excl[2 * MAX_EXCL];
    size_t nexcl;
    int glibc;
};

static void take_block(void *ctx, uintptr_t addr, uintptr_t token)
{
    struct gather *g = ctx;
    uint64_t t = (uint64_t)token;
    if ((t >> MTR_TOKEN_ID_BITS) != (g->epoch & 0xffff) || !(t & MTR_TOKEN_ID_MASK) || g->n >= g->cap)
        return;
    struct mtr_lk_block *x = &g->b[g->n++];
    x->addr = addr;
    x->end = addr;
    x->qid = (t & MTR_TOKEN_ID_MASK) - 1;
    x->verdict = MTR_LK_UNKNOWN;
}

static void take_range(void *ctx, uintptr_t lo, uintptr_t hi)
{
    struct gather *g = ctx;
    if (g->nexcl < MAX_EXCL) {
        g->excl[2 * g->nexcl] = lo;
        g->excl[2 * g->nexcl + 1] = hi;
        g->nexcl++;
    }
}

static void count_block(void *ctx, uintptr_t addr, uintptr_t token)
{
    (void)addr;
    (void)token;
    ++*(size_t *)ctx;
}

static void no_range(void *ctx, uintptr_t lo, uintptr_t hi)
{
    (void)ctx;
    (void)lo;
    (void)hi;
}

static int64_t now_us(int clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- the verdict file (its format: lib/trace/verdicts.c) ---- */

static int write_verdicts(const char *trace_path, int64_t pid, int64_t start_us, int64_t scan_us,
                          const struct mtr_lk_result *res, const struct mtr_lk_block *b, size_t n,
                          int64_t took_us, int64_t cpu_us, const char **why)
{
    mtt_verdicts_out *o = mtr_lk_alloc(sizeof *o);
    if (!o) {
        *why = strerror(ENOMEM);
        return -1;
    }
    mtt_verdicts_scan sc = { .pid = pid, .start_us = start_us, .scan_us = scan_us,
                             .mode = res->mode, .duration_us = (uint64_t)took_us,
                             .memory = res->memory, .root_bytes = res->root_bytes,
                             .heap_bytes = res->heap_bytes, .cpu_us = (uint64_t)cpu_us };
    for (size_t i = 0; i < n; i++) {
        sc.lost += b[i].verdict == MTR_LK_LOST;
        sc.reachable += b[i].verdict == MTR_LK_REACHABLE;
        sc.unknown += b[i].verdict == MTR_LK_UNKNOWN;
    }
    int rc = mtt_verdicts_create(o, trace_path, &sc, why);
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            if (b[i].verdict != MTR_LK_UNKNOWN)
                mtt_verdicts_put(o, b[i].qid,
                                 b[i].verdict == MTR_LK_LOST ? MT_VERDICT_LOST
                                                             : MT_VERDICT_REACHABLE);
        rc = mtt_verdicts_finish(o, why);
    }
    mtr_lk_free(o, sizeof *o);
    return rc;
}

/* ---- the scan ---- */

static __attribute__((noinline)) int scan(const char *trace_path, int64_t pid, int64_t start_us,
                                           uint64_t epoch, uintptr_t entry_sp,
                                           const ucontext_t *self)
{
    int64_t t0 = now_us(CLOCK_MONOTONIC), scan_us = now_us(CLOCK_REALTIME);
    int64_t c0 = now_us(CLOCK_THREAD_CPUTIME_ID);
    struct mtr_lk_threads th;
    why_not[0] = 0;
    if (mtr_lk_has_userfaultfd()) {
        mtr_leaks_no_verdicts("the program uses userfaultfd, whose pages the scan cannot read safely");
        return -1;
    }
    char why[400];
    if (mtr_lk_stop(&th, why, sizeof why) != 0) {
        mtr_leaks_no_verdicts("%s", why);
        return -1;
    }
    struct gather *g = mtr_lk_alloc(sizeof *g);
    struct mtr_lk_maps maps = { NULL, 0, 0 };
    size_t bbytes = 0;
    const char *fail = NULL;
    if (!g) {
        fail = "out of memory";
        goto resume;
    }
    g->epoch = epoch;
    size_t count = 0;
    mtr_sampled_each(count_block, no_range, &count);
    bbytes = (count + 1) * sizeof *g->b;
    g->b = mtr_lk_alloc(bbytes);
    if (!g->b) {
        fail = "out of memory";
        goto resume;
    }
    g->cap = count;
    mtr_sampled_each(take_block, take_range, g);
    /* The recorder's own threads run on (they touch no block of the
     * program's); their stacks, whole, count as roots: glibc's blocks for
     * those threads (their DTVs) hang from there. */
    if (mtr_lk_maps_read(&maps) != 0) {
        fail = "cannot read /proc/self/maps";
        goto resume;
    }
    g->glibc = mtr_real.image_lo == 0 && mtr_real.image_hi == 0;
#if defined(__SANITIZE_ADDRESS__)
    g->glibc = 0;   /* the allocator underneath is the sanitizer's */
#endif
    /* (with glibc too: a heap that does not walk sends the scan to the
     * conservative mode, whose nodes are the sampled blocks) */
    for (size_t i = 0; i < g->n; i++) {
        size_t us = mtr_real.usable_size((void *)g->b[i].addr);
        g->b[i].end = g->b[i].addr + us;
    }
    mtr_lk_sort((uintptr_t *)g->b, g->n, sizeof *g->b / sizeof(uintptr_t));
    struct mtr_lk_input in = {
        .maps = &maps,
        .threads = &th,
        .self_words = (const uint64_t *)self,
        .self_nwords = sizeof *self / 8,
        .self_sp = entry_sp,
        .self_tp = (uintptr_t)pthread_self(),
        .excl = g->excl,
        .nexcl = g->nexcl,
        .glibc = g->glibc,
    };
    struct mtr_lk_result res;
    memset(&res, 0, sizeof res);
    res.mode = g->glibc ? "heap" : "conservative";
    if (g->n && mtr_lk_mark(&in, g->b, g->n, &res) != 0)   /* nothing sampled: nothing to judge */
        fail = "out of memory";
resume:
    mtr_lk_resume(&th);
    mtr_lk_maps_free(&maps);
    int rc = -1;
    if (fail) {
        mtr_leaks_no_verdicts("the scan failed (%s)", fail);
    } else {
        /* In the order of the trace's ids. */
        for (size_t i = 0; i < g->n; i++) {
            uint64_t t = g->b[i].addr;
            g->b[i].addr = g->b[i].qid;
            g->b[i].qid = t;
        }
        mtr_lk_sort((uintptr_t *)g->b, g->n, sizeof *g->b / sizeof(uintptr_t));
        for (size_t i = 0; i < g->n; i++) {
            uint64_t t = g->b[i].addr;
            g->b[i].addr = g->b[i].qid;
            g->b[i].qid = t;
        }
        int64_t took = now_us(CLOCK_MONOTONIC) - t0, cpu = now_us(CLOCK_THREAD_CPUTIME_ID) - c0;
        const char *why = NULL;
        if (write_verdicts(trace_path, pid, start_us, scan_us, &res, g->b, g->n, took, cpu, &why) != 0)
            mtr_leaks_no_verdicts("%s.leaks: %s", trace_path, why);
        else
            rc = 0;
    }
    if (g) {
        mtr_lk_free(g->b, bbytes);
        mtr_lk_free(g, sizeof *g);
    }
    return rc;
}

int mtr_leaks_scan(const char *trace_path, int64_t pid, int64_t start_us, uint64_t epoch)
{
    /* What this thread holds in registers, and the stack above this frame:
     * the frames below (the scan's own) hold addresses it computed. */
    ucontext_t self;
    memset(&self, 0, sizeof self);
    getcontext(&self);
    int saved = errno;
    int rc = scan(trace_path, pid, start_us, epoch, (uintptr_t)__builtin_frame_address(0), &self);
    errno = saved;
    return rc;
}
