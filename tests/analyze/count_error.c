/*
 * count_error.c - a block count's own error (mt_cost's *_objects_var,
 * mt_cost_rse) against many sampled runs of a C program whose counts are
 * known, at the recorder's default rate (one sample per 512 KiB; each
 * block's samples Binomial(size, rate), as the recorder draws them),
 * written with the trace writer and read back whole and folded.
 *   mixed   100000 blocks of 64 B and 200 of 1 MiB: the bytes come from
 *           about 412 samples (±5%), the count from the 12 or so samples of
 *           small blocks, each standing for 8192 blocks (±29%)
 *   few     2656 blocks of 64 B and 200 of 1 MiB: a small block is sampled
 *           in about one run of four, and then makes most of the count
 *   spread  blocks of 64 B, 512 B, 4 KiB, 32 KiB, 256 KiB and 16 MiB: the
 *           count's +-1.96 se must cover the truth in at least 90% of 200
 *           runs
 * and at rate 1 a count and its bytes are exact (no +-41% on 6 bytes).
 * The reported error must match the spread of the estimates over the runs
 * (and not be the bytes' error, as reports showed it), the count stay
 * unbiased, and a count made mostly of one sample be marked "mostly noise".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/load.h"
#include "memtrace/analyze.h"
#include "memtrace/present.h"
#include "testtrace.h"

#define RATE (1.0 / 524288)

static uint64_t rng;

static double unif(void)
{
    return ((double)(tt_rnd(&rng) >> 11) + 0.5) / 9007199254740992.0;
}

static uint64_t draw(uint64_t size)
{
    double u = unif(), p = exp((double)size * log1p(-RATE)), c = p;
    uint64_t k = 0;
    while (u > c && k < size) {
        p *= (double)(size - k) / (double)(k + 1) * RATE / (1 - RATE);
        k++;
        c += p;
        if (p < 1e-300)
            break;
    }
    return k;
}

static const mt_location_code stack[] = {TT_MAIN, TT_PARSE};

/* The spread program: blocks of 64 B to 16 MiB, how many of each. */
static const struct { uint64_t size; unsigned count; } spread[] = {
    {64, 100000}, {512, 20000}, {4096, 3000}, {32768, 400}, {262144, 200}, {16777216, 5}};
#define SPREAD_BLOCKS 123605

/* One run: n_small blocks of 64 B and 200 of 1 MiB, all freed; n_small 0:
 * the spread program. */
static int write_run(const char *path, unsigned n_small)
{
    int fd;
    mt_writer *w = tt_writer_open_words(path, "count", RATE, 8, tt_resolve, &fd);
    if (!w)
        return -1;
    int rc = 0;
    mt_timestamp t = TT_START + 1000;
    unsigned total = n_small ? n_small + 200 : SPREAD_BLOCKS;
    for (unsigned i = 0, cls = 0, left = spread[0].count; i < total; i++) {
        uint64_t size = i < n_small ? 64 : 1048576;
        if (!n_small) {
            while (!left)
                left = spread[++cls].count;
            size = spread[cls].size;
            left--;
        }
        uint64_t n = draw(size);
        mt_obj_id id;
        if (!n)
            continue;
        rc |= mt_writer_put_alloc(w, t, size, n, MT_SOURCE_EXTERNAL, stack, 2, &id);
        rc |= mt_writer_put_collect(w, t + 10, id);
        t += 20;
    }
    rc |= mt_writer_close(w);
    close(fd);
    return rc;
}

static int totals(const char *path, int fold, mt_cost *out)
{
    mt_model_options mo = {0};
    mo.fold = fold;
    mo.fold_live_at = MT_TIME_END;
    char *err = NULL;
    mt_model *m = mt_model_load(path, &mo, &err);
    if (!m) {
        printf("FAIL: %s: %s\n", path, err ? err : "cannot load");
        free(err);
        return -1;
    }
    mt_selection *s = mt_select(m, NULL, MT_TIME_END);
    if (s)
        *out = mt_selection_total(s);
    mt_selection_free(s);
    mt_model_free(m);
    return s ? 0 : -1;
}

int main(void)
{
    char path[4096];
    if (tt_scratch_file(path, sizeof path, "mt-count") < 0)
        return 1;
    const int runs = 300;

    /* mixed */
    rng = 12345;
    double truth = 100200, sum = 0, sum2 = 0, rse_sum = 0, bytes_rse_sum = 0;
    int covered = 0, n = 0, same = 1;
    for (int r = 0; r < runs; r++) {
        mt_cost c, f;
        if (write_run(path, 100000) < 0 || totals(path, 0, &c) < 0) {
            CHECK(0, "mixed: run %d written and read", r);
            break;
        }
        if (r < 5 && (totals(path, 1, &f) < 0 || f.alloc_objects != c.alloc_objects ||
                      f.alloc_objects_var != c.alloc_objects_var))
            same = 0;
        double se = sqrt(c.alloc_objects_var);
        sum += c.alloc_objects;
        sum2 += c.alloc_objects * c.alloc_objects;
        rse_sum += mt_cost_rse(&c, MT_METRIC_ALLOC_OBJECTS);
        bytes_rse_sum += mt_noise(c.samples);
        covered += fabs(c.alloc_objects - truth) <= 1.96 * se;
        n++;
    }
    if (n == runs) {
        double mean = sum / n, sd = sqrt(sum2 / n - mean * mean);
        printf("mixed: count %.0f (truth %.0f), spread %.1f%%, reported %.1f%% (bytes' %.1f%%), "
               "+-1.96 se covers %.1f%%\n",
               mean, truth, 100 * sd / truth, 100 * rse_sum / n, 100 * bytes_rse_sum / n,
               100.0 * covered / n);
        CHECK(fabs(mean - truth) < 0.06 * truth, "mixed: the count is unbiased (%.0f for %.0f)",
              mean, truth);
        CHECK(fabs(rse_sum / n - sd / truth) < 0.2 * sd / truth,
              "mixed: the count's reported error %.1f%% is its spread over the runs %.1f%%",
              100 * rse_sum / n, 100 * sd / truth);
        CHECK(rse_sum > 4 * bytes_rse_sum,
              "mixed: the count's error (%.1f%%) is not the bytes' (%.1f%%)", 100 * rse_sum / n,
              100 * bytes_rse_sum / n);
        CHECK(covered >= 0.85 * n, "mixed: the count +-1.96 se covers the truth in %.1f%% of runs",
              100.0 * covered / n);
        CHECK(same, "mixed: a folded model gives the same count and error");
    }

    /* few: when a small block was sampled it makes most of the count */
    rng = 777;
    int with_small = 0, marked = 0;
    for (int r = 0; r < 100; r++) {
        mt_cost c;
        if (write_run(path, 2656) < 0 || totals(path, 0, &c) < 0) {
            CHECK(0, "few: run %d written and read", r);
            break;
        }
        if (c.alloc_objects > 1000) {   /* a 64 B block was sampled: 8192 blocks */
            with_small++;
            marked += !strcmp(mt_rse_mark(mt_cost_rse(&c, MT_METRIC_ALLOC_OBJECTS)), "?");
        }
    }
    CHECK(with_small > 5 && marked == with_small,
          "few: each of the %d counts made of one sampled small block is marked mostly noise (%d)",
          with_small, marked);

    /* spread: six sizes from 64 B to 16 MiB, each carrying part of the
     * count; the count's error must cover the truth at its stated level */
    rng = 4242;
    int sp_cov = 0, sp_n = 0;
    double sp_sum = 0, sp_rse = 0;
    for (int r = 0; r < 200; r++) {
        mt_cost c;
        if (write_run(path, 0) < 0 || totals(path, 0, &c) < 0) {
            CHECK(0, "spread: run %d written and read", r);
            break;
        }
        sp_cov += fabs(c.alloc_objects - SPREAD_BLOCKS) <= 1.96 * sqrt(c.alloc_objects_var);
        sp_sum += c.alloc_objects;
        sp_rse += mt_cost_rse(&c, MT_METRIC_ALLOC_OBJECTS);
        sp_n++;
    }
    if (sp_n) {
        printf("spread: count %.0f (truth %d), reported error %.1f%%, +-1.96 se covers %d of %d\n",
               sp_sum / sp_n, SPREAD_BLOCKS, 100 * sp_rse / sp_n, sp_cov, sp_n);
        CHECK(sp_cov >= 0.90 * sp_n, "spread: the count +-1.96 se covers the truth in %d of %d runs",
              sp_cov, sp_n);
        CHECK(fabs(sp_sum / sp_n - SPREAD_BLOCKS) < 0.05 * SPREAD_BLOCKS,
              "spread: the count is unbiased (%.0f for %d)", sp_sum / sp_n, SPREAD_BLOCKS);
    }

    /* rate 1: every count exact */
    {
        mt_cost c = {0};
        c.alloc_objects = 3;
        CHECK(mt_cost_rse(&c, MT_METRIC_ALLOC_OBJECTS) == 0 &&
                  mt_cost_rse(&c, MT_METRIC_LIVE_OBJECTS) == 1.0,
              "a count without variance is exact; a count of 0 is all noise");
        /* and so are the bytes of blocks sampled whole: 6 samples of a
         * 6-byte block at rate 1 are 6 bytes exactly, not +-41% */
        c.alloc_bytes = 6;
        c.samples = 6;
        CHECK(mt_cost_rse(&c, MT_METRIC_ALLOC_BYTES) == 0 && mt_noise_at(6, 1.0) == 0 &&
                  fabs(mt_noise_at(6, RATE) - 0.40825) < 1e-4,
              "at rate 1 bytes are exact (%.3f); at the default rate 6 samples are +-40.8%%",
              mt_cost_rse(&c, MT_METRIC_ALLOC_BYTES));
    }
    unlink(path);
    return failures != 0;
}
