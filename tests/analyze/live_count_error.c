/*
 * live_count_error.c - the error of a live block count is the variance of
 * the blocks live, not of those allocated (mt_cost.live_objects_var,
 * mt_cost_rse), on a trace worked out by hand, whole and folded: at one
 * sample per 1 KiB, a 64 B block with 1 sample held to the end and one with
 * 2 samples freed. Each sample of a 64 B block stands for 16 blocks:
 *   allocated 48 blocks, variance (16^2/1 + 32^2/2)(1 - rate) = 768(1 - rate),
 *     relative error sqrt(768(1 - rate)) / 48 = 0.5772;
 *   live at the end 16 blocks, variance 256(1 - rate), relative error
 *     sqrt(1 - rate) = 0.9995 (from the allocated count's variance it
 *     would read 1.7316).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyze/load.h"
#include "memtrace/analyze.h"
#include "testtrace.h"

#define RATE (1.0 / 1024)

static const mt_location_code stack[] = {TT_MAIN, TT_PARSE};

static int write_trace(const char *path)
{
    int fd;
    mt_writer *w = tt_writer_open_words(path, "live", RATE, 8, tt_resolve, &fd);
    if (!w)
        return -1;
    mt_obj_id held, freed;
    int rc = mt_writer_put_alloc(w, TT_START + 1000, 64, 1, MT_SOURCE_EXTERNAL, stack, 2, &held);
    rc |= mt_writer_put_alloc(w, TT_START + 2000, 64, 2, MT_SOURCE_EXTERNAL, stack, 2, &freed);
    rc |= mt_writer_put_collect(w, TT_START + 3000, freed);
    rc |= mt_writer_close(w);
    close(fd);
    return rc;
}

int main(void)
{
    char path[4096];
    if (tt_scratch_file(path, sizeof path, "mt-livecount") < 0 || write_trace(path) < 0) {
        CHECK(0, "the trace is written");
        return 1;
    }
    for (int fold = 0; fold <= 1; fold++) {
        const char *how = fold ? "folded" : "whole";
        mt_model_options mo = {0};
        mo.fold = fold;
        mo.fold_live_at = MT_TIME_END;
        char *err = NULL;
        mt_model *m = mt_model_load(path, &mo, &err);
        if (!m) {
            CHECK(0, "%s: %s", how, err ? err : "cannot load");
            free(err);
            continue;
        }
        mt_selection *s = mt_select(m, NULL, MT_TIME_END);
        if (!s) {
            CHECK(0, "%s: selected", how);
            mt_model_free(m);
            continue;
        }
        mt_cost c = mt_selection_total(s);
        double live = mt_cost_rse(&c, MT_METRIC_LIVE_OBJECTS);
        double alloc = mt_cost_rse(&c, MT_METRIC_ALLOC_OBJECTS);
        CHECK(fabs(c.alloc_objects - 48) < 1e-9 && fabs(c.live_objects - 16) < 1e-9,
              "%s: 48 blocks allocated, 16 live (%.3f, %.3f)", how, c.alloc_objects,
              c.live_objects);
        CHECK(fabs(alloc - 0.5772) < 0.0005, "%s: the allocated count's error is 57.72%% (%.4f)",
              how, alloc);
        CHECK(fabs(live - 0.9995) < 0.0005,
              "%s: the live count's error is 99.95%%, its own blocks' (%.4f)", how, live);
        mt_selection_free(s);
        mt_model_free(m);
    }
    unlink(path);
    return failures != 0;
}
