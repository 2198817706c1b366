/*
 * curveacc.c - unit test of mt_curve_grid (lib/analyze/curveacc.c; its
 * mt_curve_acc is tested against whole models by tests/analyze/stream.c):
 * allocations given in any order (as a fold gives them), the curve of any
 * window is, per bucket, the highest of the live samples at the fine
 * buckets' ends inside it and the value carried in, the exactness the
 * viewer's page relies on (docs/viewer.md, "Big traces"); the same after
 * the fine buckets widened; the bytes allocated per bucket; the peak, its
 * time and its estimate as an mt_peak_acc fed the fine buckets' ends gives
 * them. The reference is a brute-force replay of the same blocks.
 */
#include <stdlib.h>
#include <string.h>

#include "memtrace/stream.h"
#include "testtrace.h"

#define N_BLOCKS 3000

typedef struct block {
    mt_timedelta time, collect;
    uint64_t samples;
} block;

static uint64_t state = 88172645463325252ULL;
static uint64_t rnd(void) { return tt_rnd(&state); }

/* Live samples at the end of every fine bucket of width fw, up to end. */
static int64_t *live_at_ends(const block *b, size_t n, mt_timedelta fw, size_t n_fine)
{
    int64_t *d = calloc(n_fine, sizeof *d);
    for (size_t i = 0; i < n; i++) {
        d[b[i].time / fw] += (int64_t)b[i].samples;
        if (b[i].collect != MT_TIME_NEVER)
            d[b[i].collect / fw] -= (int64_t)b[i].samples;
    }
    for (size_t k = 1; k < n_fine; k++)
        d[k] += d[k - 1];
    return d;
}

/* The grid's window (t0, w, n) against the brute force, bps 2. */
static int window_ok(const mt_curve_grid *g, const int64_t *live, const uint64_t *alloc,
                     mt_timedelta fw, size_t n_fine, mt_timedelta t0, mt_timedelta w, size_t n)
{
    double *out = malloc(n * sizeof *out), *al = malloc(n * sizeof *al);
    int ok = mt_curve_grid_curve(g, t0, w, n, 2.0, out, al) == 0;
    size_t k = 0;          /* the next fine bucket, by its end */
    int64_t carried = 0;   /* live at the last fine end before the bucket */
    for (size_t i = 0; ok && i < n; i++) {
        mt_timedelta bs = t0 + (mt_timedelta)i * w, be = bs + w;
        for (; k < n_fine && (mt_timedelta)(k + 1) * fw - 1 < bs; k++)
            carried = live[k];
        int64_t v = carried, a = 0;
        for (; k < n_fine && (mt_timedelta)(k + 1) * fw - 1 < be; k++) {
            carried = live[k];
            if (live[k] > v)
                v = live[k];
            a += (int64_t)alloc[k];
        }
        if (out[i] != 2.0 * (double)v || al[i] != 2.0 * (double)a) {
            printf("# window t0=%lld w=%lld bucket %zu: %g %g, expected %lld %lld\n",
                   (long long)t0, (long long)w, i, out[i], al[i], (long long)(2 * v),
                   (long long)(2 * a));
            ok = 0;
        }
    }
    free(out);
    free(al);
    return ok;
}

static void run(const char *what, mt_timedelta span, mt_timedelta fw)
{
    block *b = calloc(N_BLOCKS, sizeof *b);
    for (size_t i = 0; i < N_BLOCKS; i++) {
        b[i].time = (mt_timedelta)(rnd() % (uint64_t)span);
        b[i].samples = 1 + rnd() % 5;
        b[i].collect = rnd() % 4 == 0 ? MT_TIME_NEVER
                                      : b[i].time + (mt_timedelta)(rnd() % (uint64_t)(span / 8));
        if (b[i].collect != MT_TIME_NEVER && b[i].collect >= span)
            b[i].collect = span - 1;
    }
    b[0].time = span - 1;   /* the grid reaches its final width */
    b[0].collect = MT_TIME_NEVER;
    mt_curve_grid *g = mt_curve_grid_new();
    /* in any order: the order they finish, as a fold gives them */
    for (size_t i = N_BLOCKS; i-- > 0;)
        mt_curve_grid_add(g, b[i].time, b[i].collect, b[i].samples);
    mt_curve_grid_finish(g, 1.0);

    size_t n_fine = (size_t)((span + fw - 1) / fw);
    int64_t *live = live_at_ends(b, N_BLOCKS, fw, n_fine);
    uint64_t *alloc = calloc(n_fine, sizeof *alloc);
    for (size_t i = 0; i < N_BLOCKS; i++)
        alloc[b[i].time / fw] += b[i].samples;

    int ok = 1;
    mt_timedelta ws[3] = {fw, 7 * fw + 3, span / 50};
    for (int k = 0; k < 3; k++) {
        ok &= window_ok(g, live, alloc, fw, n_fine, 0, ws[k], (size_t)(span / ws[k]) + 1);
        ok &= window_ok(g, live, alloc, fw, n_fine, span / 3 + 1, ws[k], 40);
    }
    CHECK(ok, "%s: every window's buckets are the highest live value at the fine buckets' "
              "ends inside and the value carried in, and the bytes allocated", what);

    int64_t peak = 0;
    mt_timedelta peak_t = 0;
    mt_peak_acc *pa = mt_peak_acc_new();
    for (size_t k = 0; k < n_fine; k++) {
        mt_timedelta e = (mt_timedelta)(k + 1) * fw - 1;
        if (live[k] > peak) {
            peak = live[k];
            peak_t = e;
        }
        mt_peak_acc_time(pa, e, k ? live[k - 1] : 0, live[k], alloc[k]);
    }
    mt_peak want, got;
    mt_peak_acc_result(pa, 1.0, 1.0, &want);
    mt_peak_acc_free(pa);
    mt_timedelta t;
    int64_t p = mt_curve_grid_peak(g, &t, &got);
    CHECK(p == peak && t == peak_t, "%s: the peak at a fine bucket's end: %lld at %lld (got %lld "
          "at %lld)", what, (long long)peak, (long long)peak_t, (long long)p, (long long)t);
    CHECK(!memcmp(&want, &got, sizeof want), "%s: the peak's estimate as mt_peak_acc's", what);
    free(live);
    free(alloc);
    free(b);
    mt_curve_grid_free(g);
}

int main(void)
{
    /* fine buckets of 1 us: every time is a fine bucket's end */
    run("1 us buckets", 200000, 1);
    /* times up to 1.5 M us: the buckets widened three times, to 8 us */
    run("widened to 8 us", 1500000, 8);
    return failures ? 1 : 0;
}
