/*
 * temporary.c - which blocks count as temporary (freed within
 * MT_TEMPORARY_US = 1 ms of their allocation, scale.h's rule) in the
 * totals `stats` and `top --by temp` show, whole and folded: blocks living
 * 0, 1 and 999 us are temporary, 1000 us (exactly 1 ms), 1001 us, 1 s and
 * never freed are not; a block carried over from an earlier piece is not
 * either, however soon it is freed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "testtrace.h"

/* Lifetimes of the blocks (us; -1 never freed), each its own samples so
 * that sums tell them apart: block i has 1 << i samples. */
static const long long life[] = {0, 1, 999, 1000, 1001, 1000000, -1};
enum { N = sizeof life / sizeof life[0] };

static int write_trace(const char *path)
{
    int fd;
    mt_writer *w = tt_writer_open(path, "temporary-test", 1.0, tt_resolve, &fd);
    if (!w)
        return -1;
    mt_location_code bt[2] = {TT_MAIN, TT_TMP};
    int rc = 0;
    /* a carried block freed 10 us after the piece's start */
    mt_obj_id carried, id[N];
    rc |= mt_writer_set_carried(w, 1);
    rc |= mt_writer_put_alloc(w, TT_START, 1, 1u << N, MT_SOURCE_EXTERNAL, bt, 2, &carried);
    rc |= mt_writer_set_carried(w, 0);
    rc |= mt_writer_put_collect(w, TT_START + 10, carried);
    /* block i allocated at 10 s + i s, freed after life[i] */
    for (int i = 0; i < N; i++) {
        mt_timestamp t = TT_START + 10000000LL * (i + 1);
        rc |= mt_writer_put_alloc(w, t, 1, 1u << i, MT_SOURCE_EXTERNAL, bt, 2, &id[i]);
        if (life[i] >= 0)
            rc |= mt_writer_put_collect(w, t + life[i], id[i]);
    }
    rc |= mt_writer_close(w);
    close(fd);
    return rc;
}

int main(void)
{
    char path[4096];
    if (tt_scratch_file(path, sizeof path, "temporary") < 0 || write_trace(path) != 0) {
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
        /* samples of blocks 0, 1, 2: 1 + 2 + 4 */
        CHECK(s && bps > 0 && fabs(c.temp_bytes / bps - 7) < 1e-9,
              "%s: blocks freed after 0, 1 and 999 us are temporary, 1 ms and longer not, nor a carried block (%.0f samples of temporary blocks, want 7)",
              fold ? "folded" : "whole", bps > 0 ? c.temp_bytes / bps : -1);
        mt_selection_free(s);
        mt_model_free(m);
    }
    remove(path);
    return failures ? 1 : 0;
}
