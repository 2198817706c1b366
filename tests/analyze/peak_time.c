/*
 * peak_time.c - the time of the peak is the first time live memory reaches
 * its highest (mt_model_peak_time; `stats`, `top --at peak`, live:peak):
 * on a trace whose live samples go 0, 5, 3, 5, 2, 5 at 10, 20, ..., 60 ms
 * the peak is 5 samples at 10 ms, for a whole model (before and after its
 * time-sorted events are built) and a folded one.
 */
#include <stdio.h>
#include <stdlib.h>

#include "testtrace.h"

#define MS 1000

static int write_trace(const char *path)
{
    int fd;
    mt_writer *w = tt_writer_open(path, "peak-test", 1.0, tt_resolve, &fd);
    if (!w)
        return -1;
    mt_location_code bt[2] = {TT_MAIN, TT_GROW};
    mt_obj_id a, b, c, d;
    int rc = mt_writer_put_alloc(w, TT_START + 10 * MS, 1, 5, MT_SOURCE_EXTERNAL, bt, 2, &a);
    rc |= mt_writer_put_collect(w, TT_START + 20 * MS, a);        /* 0 */
    rc |= mt_writer_put_alloc(w, TT_START + 20 * MS, 1, 3, MT_SOURCE_EXTERNAL, bt, 2, &b);
    rc |= mt_writer_put_alloc(w, TT_START + 30 * MS, 1, 2, MT_SOURCE_EXTERNAL, bt, 2, &c);
    rc |= mt_writer_put_collect(w, TT_START + 40 * MS, b);        /* 2 */
    rc |= mt_writer_put_alloc(w, TT_START + 50 * MS, 1, 3, MT_SOURCE_EXTERNAL, bt, 2, &d);
    rc |= mt_writer_put_collect(w, TT_START + 60 * MS, c);        /* 3 */
    rc |= mt_writer_put_alloc(w, TT_START + 60 * MS, 1, 2, MT_SOURCE_EXTERNAL, bt, 2, NULL);
    rc |= mt_writer_close(w);
    close(fd);
    (void)d;
    return rc;
}

int main(void)
{
    char path[4096];
    if (tt_scratch_file(path, sizeof path, "peak-time") < 0 || write_trace(path) != 0) {
        CHECK(0, "the test trace is written");
        return 1;
    }
    mt_model *m = tt_load(path, 0);
    if (m) {
        double bps = mt_model_bytes_per_sample(m);
        CHECK(mt_model_peak_time(m) == 10 * MS && mt_model_peak_bytes(m) == 5 * bps,
              "whole: three peaks of 5 samples; the first, at 10 ms, is the peak (%lld us, %.0f samples)",
              (long long)mt_model_peak_time(m), mt_model_peak_bytes(m) / bps);
        mt_model_free(m);
    }
    m = tt_load(path, 0);
    if (m) {
        /* the events sorted by time first (as a curve query does) */
        mt_selection *s = mt_select(m, NULL, MT_TIME_END);
        mt_curve *cv = s ? mt_query_curve(s, 0, mt_model_end(m), 6) : NULL;
        CHECK(cv && mt_model_peak_time(m) == 10 * MS,
              "whole, events sorted first: the first of the tied peaks, at 10 ms (%lld us)",
              (long long)mt_model_peak_time(m));
        mt_curve_free(cv);
        mt_selection_free(s);
        mt_model_free(m);
    }
    m = tt_load(path, 1);
    if (m) {
        CHECK(mt_model_peak_time(m) == 10 * MS,
              "folded: the first of the tied peaks, at 10 ms (%lld us)",
              (long long)mt_model_peak_time(m));
        mt_model_free(m);
    }
    remove(path);
    return failures ? 1 : 0;
}
