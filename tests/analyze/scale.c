/*
 * scale.c - unit test of mt_scale (lib/analyze/scale.c): the scale of a
 * trace (bytes per sample, word size), the estimates of one allocation at
 * a scale equal to a model's (mt_alloc_bytes, mt_alloc_objects,
 * mt_peak_scale), the same scale for a whole and a folded model of one
 * trace, and a folded model holding no allocation table.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/load.h"
#include "memtrace/analyze.h"
#include "testtrace.h"

static int resolve(void *ctx, mt_location_code code, const mt_location **l, size_t *n)
{
    (void)ctx;
    (void)code;
    (void)l;
    (void)n;
    return -1;
}

/* 300 allocations of assorted sizes and sources, every third freed. */
static int write_trace(const char *path, double rate, unsigned word_size)
{
    int fd;
    mt_writer *w = tt_writer_open_words(path, "scale-test", rate, word_size, resolve, &fd);
    if (!w)
        return -1;
    int rc = 0;
    mt_location_code codes[3] = {0x1000, 0x2000, 0x3000};
    for (int i = 0; i < 300 && rc == 0; i++) {
        mt_obj_id id;
        rc |= mt_writer_put_alloc(w, TT_START + 10 * (mt_timestamp)i, 1 + (i * 7) % 50,
                                  1 + i % 4, i % 3 == 0 ? MT_SOURCE_EXTERNAL : MT_SOURCE_MAJOR,
                                  codes, 1 + i % 3, &id);
        if (i % 3 == 0)
            rc |= mt_writer_put_collect(w, TT_START + 10 * (mt_timestamp)i + 5, id);
    }
    rc |= mt_writer_close(w);
    close(fd);
    return rc;
}

static mt_model *load(const char *path, int fold)
{
    mt_model_options mo = {0};
    mo.fold = fold;
    mo.fold_live_at = MT_TIME_END;
    char *err = NULL;
    mt_model *m = mt_model_load(path, &mo, &err);
    if (!m)
        printf("load %s: %s\n", path, err ? err : "?");
    free(err);
    return m;
}

static void of_info(void)
{
    mt_trace_info info = {0};
    info.sample_rate = 0.01;
    info.word_size = 64;
    mt_scale s = mt_scale_of(&info);
    CHECK(s.word_bytes == 8 && fabs(s.bytes_per_sample - 800) < 1e-9 &&
              fabs(s.inv_rate - 100) < 1e-9 && s.inv_word_bytes == 0.125,
          "rate 0.01, 64-bit words: 8 bytes a word, 800 bytes a sample");
    mt_alloc a = {.size = 80, .n_samples = 2, .source = MT_SOURCE_EXTERNAL};
    CHECK(fabs(mt_scale_alloc_bytes(&s, &a) - 1600) < 1e-9 &&
              fabs(mt_scale_alloc_objects(&s, &a) - 2 * 100 / 10.0) < 1e-9,
          "an external block of 10 words, 2 samples: 1600 bytes, 20 objects");
    a.source = MT_SOURCE_MAJOR;
    CHECK(fabs(mt_scale_alloc_objects(&s, &a) - 2 * 100 / 11.0) < 1e-9,
          "an OCaml block counts its header word");
    info.sample_rate = 0;
    s = mt_scale_of(&info);
    CHECK(s.bytes_per_sample == 0 && mt_scale_alloc_objects(&s, &a) == 0,
          "rate 0: no estimate (0, not a division by zero)");
    mt_peak p = {.bytes = 2, .lo = 1, .hi = 3, .curve_max = 2, .sd = 0.5, .readings = 4,
                 .samples = 2};
    info.sample_rate = 0.5;
    info.word_size = 32;
    s = mt_scale_of(&info);
    mt_scale_peak(&s, &p);
    CHECK(p.bytes == 16 && p.lo == 8 && p.hi == 24 && p.sd == 4 && p.readings == 4 &&
              p.samples == 2,
          "a peak in samples, in bytes: 8 bytes a sample at rate 0.5 with 32-bit words");
}

static void of_models(const char *path)
{
    mt_model *whole = load(path, 0), *folded = load(path, 1);
    if (!whole || !folded) {
        CHECK(0, "models of the test trace");
        mt_model_free(whole);
        mt_model_free(folded);
        return;
    }
    const mt_scale *sw = mt_model_scale(whole), *sf = mt_model_scale(folded);
    CHECK(memcmp(sw, sf, sizeof *sw) == 0 &&
              sw->bytes_per_sample == mt_model_bytes_per_sample(whole),
          "a whole and a folded model of one trace have the same scale");
    mt_scale own = mt_scale_of(mt_model_info(whole));
    CHECK(memcmp(&own, sw, sizeof own) == 0, "a model's scale is its trace info's");
    const mt_alloc *al = mt_model_allocs(whole);
    size_t n = mt_model_n_allocs(whole);
    int same = n == 300;
    for (size_t i = 0; i < n && same; i++)
        same = mt_alloc_bytes(whole, &al[i]) == mt_scale_alloc_bytes(sw, &al[i]) &&
               mt_alloc_objects(whole, &al[i]) == mt_scale_alloc_objects(sw, &al[i]);
    CHECK(same, "every allocation: the model's estimates are the scale's (300)");
    mt_peak pw, pf;
    mt_model_peak(whole, &pw);
    mt_model_peak(folded, &pf);
    CHECK(pw.bytes > 0 && pw.bytes == pf.bytes && pw.lo == pf.lo && pw.hi == pf.hi,
          "the peak's estimate, whole = folded");
    uint64_t nf = 0;
    mt_model_event_counts(folded, &nf, NULL, NULL);
    CHECK(mt_model_is_folded(folded) && mt_model_n_allocs(folded) == 0 &&
              mt_model_allocs(folded) == NULL && nf == 300,
          "a folded model has no allocation table (300 allocations read)");
    CHECK(mt_model_n_nodes(folded) == mt_model_n_nodes(whole) &&
              mt_model_n_funcs(folded) == mt_model_n_funcs(whole),
          "both have the same stacks (one interner each)");
    mt_model_free(whole);
    mt_model_free(folded);
}

int main(void)
{
    char path[4096];
    of_info();
    if (tt_scratch_file(path, sizeof path, "scale") < 0 || write_trace(path, 0.01, 64) < 0) {
        printf("FAIL: cannot write the test trace\n");
        return 1;
    }
    of_models(path);
    unlink(path);
    return failures ? 1 : 0;
}
