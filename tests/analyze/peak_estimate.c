/*
 * peak_estimate.c - the peak's estimate (mt_peak, lib/analyze/peak.c)
 * against programs whose true peak is known: many sampled runs of each
 * shape at the C recorder's default rate (one sample per 512 KiB), written
 * with the trace writer and read back, each block's samples drawn as the
 * recorder draws them (Binomial(size, rate)). For each shape the 95%
 * interval must cover the true peak in at least 90% of the runs, with the
 * truth above it in at most 5%; the estimate must be the curve's highest
 * and at least its end in every run, unbiased (within 0.3 sd) where the top
 * is read once (held, spike, held + churn) and +0.5 to +1.2 sd for three
 * identical spikes (three readings: +0.85 expected); a budget
 * (check --max-peak) set at the true peak must fail in at most 8% of the
 * runs (alpha 5%); a folded model must give the same figures.
 * At rate 1 the peak is exact. Shapes:
 *   plateau    100 MiB in 256 KiB blocks held for 10 s, each block replaced
 *              after an exponential lifetime of mean 100 ms
 *   held       100 MiB allocated once and held (nothing replaced)
 *   spike      20 MiB replaced as the plateau, and 100 MiB more for 1 ms
 *   staircase  25, 50, 75, 100 MiB for 2.5 s each, replaced as the plateau
 *   slow       the plateau with blocks replaced every 2 s on average
 *   ramp       from 0 to 100 MiB in 10 s, one block more every 25 ms, the
 *              live ones replaced as the plateau's
 *   one        one 256 KiB block at a time, replaced every 5 ms for 10 s (a
 *              top of one or two samples: Poisson counts, not normal ones)
 *   held+churn 100 MiB held while 1 GiB of 1 KiB blocks is allocated and
 *              freed one at a time (the bulk drawn once)
 *   3 spikes   three identical spikes of 256 MiB
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/load.h"
#include "memtrace/analyze.h"
#include "memtrace/compare.h"
#include "testtrace.h"

#define RATE (1.0 / 524288)
#define MIB 1048576.0
#define BLOCK 262144ULL
#define MAXB 1024

typedef struct sim {
    uint64_t rng;
    mt_writer *w;
    uint64_t n[MAXB];        /* samples of block k (0: not recorded) */
    mt_obj_id id[MAXB];
    size_t k;                /* blocks live */
    double rate;
    int failed;
} sim;

static double unif(sim *s)
{
    return ((double)(tt_rnd(&s->rng) >> 11) + 0.5) / 9007199254740992.0;
}

/* Binomial(size, rate) by inversion (the mean is below a few samples). */
static uint64_t draw(sim *s, uint64_t size)
{
    if (s->rate >= 1)
        return size;
    double u = unif(s), p = exp((double)size * log1p(-s->rate)), c = p;
    uint64_t k = 0;
    while (u > c && k < size) {
        p *= (double)(size - k) / (double)(k + 1) * s->rate / (1 - s->rate);
        k++;
        c += p;
        if (p < 1e-300)
            break;
    }
    return k;
}

static const mt_location_code stack[] = {TT_MAIN, TT_LOAD};

static void put(sim *s, mt_timedelta t, size_t k, uint64_t size)
{
    s->n[k] = draw(s, size);
    if (s->n[k] &&
        mt_writer_put_alloc(s->w, TT_START + (mt_timestamp)t, size, s->n[k], MT_SOURCE_EXTERNAL,
                            stack, 2, &s->id[k]) < 0)
        s->failed = 1;
}

static void drop(sim *s, mt_timedelta t, size_t k)
{
    if (s->n[k] && mt_writer_put_collect(s->w, TT_START + (mt_timestamp)t, s->id[k]) < 0)
        s->failed = 1;
    s->n[k] = 0;
}

/* Blocks [from, to) replaced, one at a time at random, from t0 to t1 with
 * a mean lifetime of tau us. */
static void churn(sim *s, size_t from, size_t to, mt_timedelta t0, mt_timedelta t1, double tau)
{
    double t = (double)t0, per = tau / (double)(to - from);
    for (;;) {
        t += -per * log(unif(s));
        if (t >= (double)t1)
            break;
        size_t k = from + (size_t)(unif(s) * (double)(to - from));
        if (k >= to)
            k = to - 1;
        drop(s, (mt_timedelta)t, k);
        put(s, (mt_timedelta)t, k, BLOCK);
    }
}

static void fill(sim *s, size_t from, size_t to, mt_timedelta t)
{
    for (size_t k = from; k < to; k++)
        put(s, t, k, BLOCK);
}

static void empty(sim *s, size_t from, size_t to, mt_timedelta t)
{
    for (size_t k = from; k < to; k++)
        drop(s, t, k);
}

/* Churn of many small blocks, each freed before the next is allocated:
 * count blocks of size bytes from t0, one every step us, of which only the
 * sampled ones are written (the gap to the next sampled block drawn at
 * once: geometric, each block sampled with 1 - (1 - rate)^size). */
static void churn_small(sim *s, uint64_t count, uint64_t size, mt_timedelta t0, double step)
{
    double q = -expm1((double)size * log1p(-s->rate));   /* a block has a sample */
    size_t k = MAXB - 1;                                 /* the slot churn uses */
    for (double j = 0;;) {
        if (q < 1)
            j += floor(log(unif(s)) / log1p(-q));
        if (j >= (double)count)
            break;
        mt_timedelta t = t0 + (mt_timedelta)(j * step);
        do   /* at least one sample: the block is in the trace */
            put(s, t, k, size);
        while (!s->n[k]);
        drop(s, t + 1, k);
        j++;
    }
}

enum { PLATEAU, HELD, SPIKE, STAIRCASE, SLOW, RAMP, ONE, HELD_CHURN, SPIKES3, N_SHAPES };
static const char *const shape_name[N_SHAPES] = {"plateau", "held",  "spike", "staircase",
                                                 "slow",    "ramp",  "one",   "held+churn",
                                                 "3 spikes"};

/* Writes one run of a shape; returns its true peak in bytes. */
static double run_shape(sim *s, int shape)
{
    const size_t full = (size_t)(100 * MIB / BLOCK);   /* 400 blocks */
    const mt_timedelta T = 10000000;
    switch (shape) {
    case PLATEAU:
    case SLOW:
        fill(s, 0, full, 1000);
        churn(s, 0, full, 1000, T, shape == SLOW ? 2e6 : 1e5);
        empty(s, 0, full, T + 1000);
        return 100 * MIB;
    case HELD:
        fill(s, 0, full, 1000);
        empty(s, 0, full, T);
        return 100 * MIB;
    case SPIKE: {
        size_t base = full / 5;   /* 20 MiB */
        fill(s, 0, base, 1000);
        churn(s, 0, base, 1000, T / 2, 1e5);
        fill(s, base, base + full, T / 2);
        empty(s, base, base + full, T / 2 + 1000);
        churn(s, 0, base, T / 2 + 2000, T, 1e5);
        empty(s, 0, base, T + 1000);
        return 120 * MIB;
    }
    case RAMP:
        /* one block more every 25 ms, the live ones replaced meanwhile */
        for (size_t k = 0; k < full; k++) {
            mt_timedelta t0 = 1000 + (mt_timedelta)k * (T / (mt_timedelta)full);
            put(s, t0, k, BLOCK);
            churn(s, 0, k + 1, t0 + 1, t0 + T / (mt_timedelta)full, 1e5);
        }
        empty(s, 0, full, T + 2000);
        return 100 * MIB;
    case ONE:
        /* one 256 KiB block at a time, replaced every 5 ms: a top of a
         * sample or two, read two thousand times */
        fill(s, 0, 1, 1000);
        churn(s, 0, 1, 1001, T, 5000);
        empty(s, 0, 1, T + 1000);
        return (double)BLOCK;
    case HELD_CHURN:
        /* 100 MiB held while 1 GiB of 1 KiB blocks churns, one live at a
         * time: the bulk was drawn once, however much was renewed */
        fill(s, 0, full, 1000);
        churn_small(s, 1ULL << 20, 1024, 2000, 9.0);
        empty(s, 0, full, T + 1000);
        return 100 * MIB + 1024;
    case SPIKES3:
        /* three identical spikes of 256 MiB: three readings of one top */
        for (int k = 0; k < 3; k++) {
            fill(s, 0, MAXB - 1, 1000 + k * (T / 3));
            empty(s, 0, MAXB - 1, 2000 + k * (T / 3));
        }
        return (double)(MAXB - 1) * BLOCK;
    default: /* STAIRCASE */
        for (int step = 1; step <= 4; step++) {
            mt_timedelta t0 = (step - 1) * (T / 4), t1 = step * (T / 4);
            fill(s, (size_t)(step - 1) * full / 4, (size_t)step * full / 4, t0 + 1000);
            churn(s, 0, (size_t)step * full / 4, t0 + 1001, t1, 1e5);
        }
        empty(s, 0, full, T + 1000);
        return 100 * MIB;
    }
}

typedef struct tally {
    int runs, covered, curve_covered, below, above, not_max;
    int false_fail, old_false_fail;   /* a budget at the true peak failed (alpha 5%) */
    double err, curve_err;   /* sums of errors in standard errors */
    double readings;
} tally;

static const char *path;

static int one(int shape, double rate, uint64_t seed, mt_peak *out, double *truth,
               mt_peak *folded)
{
    static sim s;
    memset(&s, 0, sizeof s);
    s.rng = seed * 0x9e3779b97f4a7c15ULL + 1;
    s.rate = rate;
    int fd;
    s.w = tt_writer_open_words(path, "peak", rate, 8, tt_resolve, &fd);
    if (!s.w)
        return -1;
    *truth = run_shape(&s, shape);
    int rc = mt_writer_close(s.w);
    close(fd);
    if (rc < 0 || s.failed)
        return -1;
    char *err = NULL;
    mt_model *m = mt_model_load(path, NULL, &err);
    if (!m) {
        printf("FAIL: %s: %s\n", path, err ? err : "cannot load");
        free(err);
        return -1;
    }
    mt_model_peak(m, out);
    mt_model_free(m);
    if (folded) {
        mt_model_options fo = {0};
        fo.fold = 1;
        if (!(m = mt_model_load(path, &fo, &err))) {
            free(err);
            return -1;
        }
        mt_model_peak(m, folded);
        mt_model_free(m);
    }
    return 0;
}

int main(void)
{
    char tmpl[4096];
    if (tt_scratch_file(tmpl, sizeof tmpl, "mt-peak") < 0)
        return 1;
    path = tmpl;
    const int runs = 150;
    for (int shape = 0; shape < N_SHAPES; shape++) {
        tally t = {0};
        int same_routes = 1;
        for (int r = 0; r < runs; r++) {
            mt_peak p, f;
            double truth;
            if (one(shape, RATE, (uint64_t)(shape * 1000 + r + 1), &p, &truth,
                    r < 5 ? &f : NULL) < 0) {
                CHECK(0, "%s: run %d written and read", shape_name[shape], r);
                break;
            }
            if (r < 5 && memcmp(&p, &f, sizeof p) != 0)
                same_routes = 0;
            double sd = sqrt(truth * RATE) / RATE;   /* the curve's sd at the true peak */
            t.runs++;
            t.covered += p.lo <= truth && truth <= p.hi;
            t.below += truth < p.lo;
            t.above += truth > p.hi;
            t.not_max += !(p.bytes == p.curve_max && p.bytes >= p.end);
            t.curve_covered += fabs(p.curve_max - truth) <= 1.96 * sd;
            t.err += (p.bytes - truth) / sd;
            t.curve_err += (p.curve_max - truth) / sd;
            t.readings += p.readings;
            /* check --max-peak with the budget at the true peak: the
             * peak's own test, and the Poisson test of the curve's highest
             * that check made before */
            t.false_fail += mt_test_peak_above(&p, truth) < 0.05;
            mt_estimate old = {p.curve_max, p.curve_max / RATE, 1 / RATE, 0};
            t.old_false_fail += mt_test_above(&old, truth) < 0.05;
        }
        if (!t.runs)
            continue;
        double cov = (double)t.covered / t.runs, err = t.err / t.runs;
        printf("%s: interval covers %.1f%% (truth below it %d, above it %d; curve's highest "
               "+-1.96 sd: %.1f%%), mean error %+.2f sd, %.1f readings\n",
               shape_name[shape], 100 * cov, t.below, t.above, 100.0 * t.curve_covered / t.runs,
               err, t.readings / t.runs);
        CHECK(cov >= 0.90, "%s: the 95%% interval covers the true peak in %.1f%% of %d runs",
              shape_name[shape], 100 * cov, t.runs);
        CHECK(t.above <= 0.05 * t.runs,
              "%s: the true peak is above the interval in %d of %d runs (at most 2.5%% expected)",
              shape_name[shape], t.above, t.runs);
        CHECK(t.not_max == 0, "%s: the estimate is the curve's highest, at least its end, "
              "in every run (%d not)", shape_name[shape], t.not_max);
        /* where the top was read once the estimate is unbiased (a churn
         * of small blocks beside a held bulk adds at most a block); three
         * identical spikes are three readings: the highest of three
         * standard normals is +0.85 on average */
        if (shape == HELD || shape == SPIKE || shape == HELD_CHURN)
            CHECK(fabs(err) < 0.3, "%s: the estimate's mean error is %+.2f sd", shape_name[shape],
                  err);
        if (shape == SPIKES3)
            CHECK(err > 0.5 && err < 1.2, "%s: the estimate's mean error is %+.2f sd (+0.85 "
                  "expected)", shape_name[shape], err);
        CHECK(same_routes, "%s: a folded model gives the same estimate as the whole model",
              shape_name[shape]);
        printf("%s: a budget at the true peak fails %.1f%% of runs (the curve's highest with "
               "a Poisson test: %.1f%%)\n", shape_name[shape], 100.0 * t.false_fail / t.runs,
               100.0 * t.old_false_fail / t.runs);
        CHECK(t.false_fail <= 0.08 * t.runs,
              "%s: check --max-peak at the true peak fails %d of %d runs (alpha 5%%)",
              shape_name[shape], t.false_fail, t.runs);
        if (shape == PLATEAU)
            CHECK(t.curve_err / t.runs > 2,
                  "plateau: the curve's highest is %+.2f sd off (the selection the lower bound "
                  "allows for)", t.curve_err / t.runs);
    }
    /* every byte sampled: the exact peak */
    for (int shape = 0; shape < N_SHAPES; shape++) {
        mt_peak p;
        double truth;
        if (one(shape, 1.0, 7, &p, &truth, NULL) < 0) {
            CHECK(0, "%s at rate 1: written and read", shape_name[shape]);
            continue;
        }
        CHECK(p.bytes == truth && p.lo == truth && p.hi == truth && p.curve_max == truth &&
                  p.sd == 0,
              "%s at rate 1: the peak is exact (%.0f, [%.0f, %.0f], want %.0f)",
              shape_name[shape], p.bytes, p.lo, p.hi, truth);
    }
    unlink(path);
    return failures != 0;
}
