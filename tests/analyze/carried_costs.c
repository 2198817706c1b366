/*
 * carried_costs.c - a block carried over from an earlier piece of a rotated
 * recording is live, not allocated, in the piece that carries it: on a
 * piece with 2 carried blocks (8 and 16 samples, one freed in the piece) and
 * 3 new ones (1, 2 and 4 samples, one freed), the totals are allocated 7
 * samples in 3 blocks and live at the end 16 + 2 + 4 = 22 samples, whole
 * and folded.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "testtrace.h"

static int write_trace(const char *path)
{
    int fd;
    mt_writer *w = tt_writer_open(path, "carried-test", 1.0, tt_resolve, &fd);
    if (!w)
        return -1;
    mt_location_code bt[2] = {TT_MAIN, TT_LOAD};
    mt_obj_id c8, c16, n1, n2, n4;
    int rc = mt_writer_set_carried(w, 1);
    rc |= mt_writer_put_alloc(w, TT_START, 1, 8, MT_SOURCE_EXTERNAL, bt, 2, &c8);
    rc |= mt_writer_put_alloc(w, TT_START, 1, 16, MT_SOURCE_EXTERNAL, bt, 2, &c16);
    rc |= mt_writer_set_carried(w, 0);
    rc |= mt_writer_put_alloc(w, TT_START + 100, 1, 1, MT_SOURCE_EXTERNAL, bt, 2, &n1);
    rc |= mt_writer_put_alloc(w, TT_START + 200, 1, 2, MT_SOURCE_EXTERNAL, bt, 2, &n2);
    rc |= mt_writer_put_alloc(w, TT_START + 300, 1, 4, MT_SOURCE_EXTERNAL, bt, 2, &n4);
    rc |= mt_writer_put_collect(w, TT_START + 5000, c8);
    rc |= mt_writer_put_collect(w, TT_START + 6000, n1);
    rc |= mt_writer_close(w);
    close(fd);
    (void)c16;
    (void)n2;
    (void)n4;
    return rc;
}

int main(void)
{
    char path[4096];
    if (tt_scratch_file(path, sizeof path, "carried") < 0 || write_trace(path) != 0) {
        CHECK(0, "the test trace is written");
        return 1;
    }
    for (int fold = 0; fold <= 1; fold++) {
        mt_model *m = tt_load(path, fold);
        if (!m)
            continue;
        mt_selection *s = mt_select_sites(m, NULL, MT_TIME_END, NULL, NULL);
        mt_cost c = s ? mt_selection_total(s) : (mt_cost){0};
        double bps = mt_model_bytes_per_sample(m);
        const char *how = fold ? "folded" : "whole";
        CHECK(s && bps > 0 && fabs(c.alloc_bytes / bps - 7) < 1e-9 && c.samples == 7,
              "%s: allocated in the piece: the new blocks' 7 samples, not the carried ones' (%.0f samples, %llu)",
              how, bps > 0 ? c.alloc_bytes / bps : -1, (unsigned long long)c.samples);
        CHECK(s && fabs(c.live_bytes / bps - 22) < 1e-9,
              "%s: live at the end: the carried block still live and the new ones (%.0f samples, want 22)",
              how, bps > 0 ? c.live_bytes / bps : -1);
        mt_selection_free(s);
        mt_model_free(m);
    }
    remove(path);
    return failures ? 1 : 0;
}
