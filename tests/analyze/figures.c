/*
 * figures.c - unit test of the streaming reports' planner (mt_read_figures,
 * lib/analyze/figures.c) and of the viewer's fold choice
 * (mt_read_plan_view, read.c), on read.c's trace of three allocations whose
 * figures are worked out by hand:
 *   t=10  a0  1 sample, main > parse     freed at t=30 (lifetime 20)
 *   t=20  a1  2 samples, main > leak     never freed (to the end, 50: 30)
 *   t=40  a2  3 samples, main > parse    freed at t=50 (lifetime 10)
 * Live samples: 1, 3, 2, 5, 2: the trace's peak is at t=40.
 *
 * The totals, the trace's peak and a selection's own peak come from folded
 * passes: a selection known as blocks are allocated (inside:parse: peak 3
 * samples at t=40) in the same pass, one known only when they end
 * (lifetime:>15us, a0 and a1: peak 3 samples at t=20) by a second pass;
 * every selected allocation goes to on_selected once; a curve in buckets
 * of a width the caller fixes is mt_query_curve's (every allocation's by
 * the codec alone, given a model for the trace's info); the axes (end 50,
 * longest lifetime 30) come before the first of them; a pipe that would
 * have to be read twice and the forced route whole give the whole model's
 * selection instead, without a call of the caller's callbacks. A pass that
 * draws no curve folds only the allocations its filter selects (the folded
 * model's costs count those alone, mt_model_folded_by_source); one that
 * draws it folds every allocation, which the curve of all needs. A curve
 * in the caller's buckets of a selection on times alone is noted by the
 * codec alone against the info's end, unless the info is another trace's
 * (end 60): then a model pass notes it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memtrace/analyze.h"
#include "memtrace/stream.h"
#include "testtrace.h"

/* The trace above; with later, one more block from t=55 to t=60 (the
 * end 60: another trace's info). */
static int write_trace(const char *path, int later)
{
    int fd;
    mt_writer *w = tt_writer_open(path, "figures-test", 1.0, tt_resolve, &fd);
    if (!w)
        return -1;
    uint64_t parse[2] = {TT_MAIN, TT_PARSE}, leak[2] = {TT_MAIN, TT_LEAK};
    mt_obj_id a0, a1, a2;
    int rc = 0;
    rc |= mt_writer_put_alloc(w, TT_START + 10, 8, 1, MT_SOURCE_EXTERNAL, parse, 2, &a0);
    rc |= mt_writer_put_alloc(w, TT_START + 20, 16, 2, MT_SOURCE_EXTERNAL, leak, 2, &a1);
    rc |= mt_writer_put_collect(w, TT_START + 30, a0);
    rc |= mt_writer_put_alloc(w, TT_START + 40, 24, 3, MT_SOURCE_EXTERNAL, parse, 2, &a2);
    rc |= mt_writer_put_collect(w, TT_START + 50, a2);
    if (later) {
        mt_obj_id a3;
        rc |= mt_writer_put_alloc(w, TT_START + 55, 8, 1, MT_SOURCE_EXTERNAL, parse, 2, &a3);
        rc |= mt_writer_put_collect(w, TT_START + 60, a3);
    }
    rc |= mt_writer_close(w);
    close(fd);
    return rc;
}

/* What the callbacks saw. */
typedef struct seen {
    int axes, selected, selected_before_axes;
    mt_timedelta end, max_life;
    uint64_t samples;
} seen;

static int on_axes(void *ctx, mt_timedelta end, mt_timedelta max_life)
{
    seen *s = ctx;
    s->axes++;
    s->end = end;
    s->max_life = max_life;
    return 0;
}

static int on_selected(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    seen *s = ctx;
    (void)m;
    (void)seq;
    if (!s->axes)
        s->selected_before_axes++;
    s->selected++;
    s->samples += a->n_samples;
    return 0;
}

static void quiet(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
}

static mt_filter *filter(const char *text)
{
    char *err = NULL;
    mt_filter *f = mt_filter_parse(text, &err, NULL);
    CHECK(f != NULL, "filter %s parses (%s)", text, err ? err : "");
    free(err);
    return f;
}

/* The allocations a folded model folded (costed into their nodes), or
 * UINT64_MAX for no model or a whole one. */
static uint64_t folded_allocs(const mt_model *m)
{
    mt_cost c[3];
    if (!m || !mt_model_folded_by_source(m, c))
        return UINT64_MAX;
    return c[0].allocs + c[1].allocs + c[2].allocs;
}

/* mt_read_figures of paths[0] with need and the filter; 0 or its status. */
static int figures(const char *path, unsigned need, const char *ftext, mt_timedelta live_at,
                   seen *s, mt_figures *fig)
{
    const char *paths[1] = {path};
    mt_filter *f = ftext ? filter(ftext) : NULL;
    memset(s, 0, sizeof *s);
    mt_figures_request rq = {
        .paths = paths, .n = 1, .filter = f, .live_at = live_at, .need = need,
        .curve_buckets = 5, .on_axes = need & MT_FIGURES_AXES ? on_axes : NULL,
        .on_selected = on_selected, .ctx = s, .on_warning = quiet,
    };
    char *err = NULL;
    int rc = mt_read_figures(&rq, fig, &err);
    CHECK(rc == 0, "read the figures (need %u, filter %s): %s", need, ftext ? ftext : "none",
          err ? err : "ok");
    free(err);
    mt_filter_free(f); /* (the figures keep no reference to it) */
    return rc;
}

/* mt_read_figures' curve of 6 buckets of width 10 for ftext (NULL: every
 * allocation) against the whole model's mt_query_curve of 5 buckets over
 * [0, 50): the same buckets, with no end first; given the whole model for
 * its info, every allocation's curve is the codec's alone (no model), and
 * so is that of a selection on times alone (no stacks read at all).
 * selected: the allocations the filter selects; folded: those the model
 * read folds (UINT64_MAX: no model). info_path: the trace whose whole
 * model is given as the info (NULL: path's). */
static void curve_fixed(const char *path, const char *info_path, const char *ftext,
                        uint64_t selected, uint64_t folded)
{
    const char *paths[1] = {path};
    mt_filter *f = ftext ? filter(ftext) : NULL;
    char *err = NULL;
    mt_read_request wq = {.paths = paths, .n = 1, .on_warning = quiet};
    mt_model *w = mt_read(&wq, &err);
    free(err);
    err = NULL;
    mt_selection *s = w ? mt_select_sites(w, f, MT_TIME_END, NULL, &err) : NULL;
    free(err);
    err = NULL;
    mt_curve *c = s ? mt_query_curve(s, 0, MT_TIME_END, 5) : NULL;
    CHECK(c && c->n >= 5, "the whole model's curve of %s in 5 buckets", ftext ? ftext : "all");
    mt_model *other = NULL;
    if (info_path) {
        const char *ip[1] = {info_path};
        mt_read_request iq = {.paths = ip, .n = 1, .on_warning = quiet};
        other = mt_read(&iq, &err);
        free(err);
        err = NULL;
        CHECK(other != NULL, "the other trace's whole model");
    }
    mt_figures_request rq = {
        .paths = paths, .n = 1, .filter = f, .live_at = MT_TIME_END,
        .need = MT_FIGURES_CURVE, .curve_buckets = 6, .curve_width = 10,
        .info = info_path ? other : w,
        .on_warning = quiet,
    };
    mt_figures fig;
    int rc = mt_read_figures(&rq, &fig, &err);
    CHECK(rc == 0 && !fig.sel && fig.curve && fig.curve->n == 6 && fig.n_selected == selected &&
              (fig.m == NULL) == (folded == UINT64_MAX),
          "curve of %s in 6 buckets of width 10: streamed, %s (%s)", ftext ? ftext : "all",
          folded != UINT64_MAX ? "a model pass" : "by the codec alone", err ? err : "ok");
    free(err);
    if (rc == 0)
        CHECK(folded_allocs(fig.m) == folded,
              "curve of %s in 6 buckets: the model folds %llu allocations (got %llu)",
              ftext ? ftext : "all", (unsigned long long)folded,
              (unsigned long long)folded_allocs(fig.m));
    if (rc == 0 && fig.curve && c && w) {
        int same = 1;
        for (size_t k = 0; k < 5 && k < c->n; k++)
            same &= fig.curve->time[k] == (mt_timedelta)(10 * k) &&
                    fig.curve->time[k] == c->time[k] && fig.curve->total[k] == c->total[k] &&
                    fig.curve->filtered[k] == c->filtered[k];
        /* live samples 1, 3, 2, 5 from t=10, 20, 30, 40: the bucket [40, 50) peaks at 5 */
        same &= fig.curve->total[4] == 5 * mt_model_bytes_per_sample(w);
        CHECK(same, "curve of %s: buckets at 0, 10, ..., 40 as mt_query_curve's, the "
              "[40, 50) one at 5 samples (got %g)", ftext ? ftext : "all", fig.curve->total[4]);
    }
    mt_curve_free(c);
    mt_selection_free(s);
    mt_figures_free(&fig);
    mt_model_free(w);
    mt_model_free(other);
    mt_filter_free(f);
}

int main(void)
{
    char path[4096];
    if (tt_scratch_file(path, sizeof path, "figures") < 0 || write_trace(path, 0) < 0)
        return 1;
    seen s;
    mt_figures fig;

    /* the totals and the trace's peak, every allocation selected */
    if (figures(path, MT_FIGURES_STATS | MT_FIGURES_PEAK, NULL, MT_TIME_END, &s, &fig) == 0) {
        CHECK(!fig.sel && fig.m && fig.stats.total.allocs == 3 && fig.n_selected == 3 &&
                  fig.stats.peak_time == 40 && s.selected == 3 && s.samples == 6,
              "stats: folded, 3 allocations, peak at 40, each selected once (got sel %p, %llu, "
              "%lld, %d)", (void *)fig.sel, (unsigned long long)fig.stats.total.allocs,
              (long long)fig.stats.peak_time, s.selected);
        mt_figures_free(&fig);
    }
    /* a selection known as it is allocated: its own peak in the same pass */
    if (figures(path, MT_FIGURES_STATS | MT_FIGURES_PEAK, "inside:parse", MT_TIME_END, &s,
                &fig) == 0) {
        CHECK(!fig.sel && fig.stats.total.allocs == 2 && s.selected == 2 && s.samples == 4 &&
                  fig.stats.peak_filtered_time == 40 && fig.stats.peak_filtered.samples == 3,
              "inside:parse: a0 and a2, their peak 3 samples at 40 (got %llu at %lld)",
              (unsigned long long)fig.stats.peak_filtered.samples,
              (long long)fig.stats.peak_filtered_time);
        mt_figures_free(&fig);
    }
    /* a selection known only when blocks end: noted, its peak by a scan */
    if (figures(path, MT_FIGURES_STATS | MT_FIGURES_PEAK, "lifetime:>15us", MT_TIME_END, &s,
                &fig) == 0) {
        CHECK(!fig.sel && fig.stats.total.allocs == 2 && s.selected == 2 && s.samples == 3 &&
                  fig.stats.peak_filtered_time == 20 && fig.stats.peak_filtered.samples == 3,
              "lifetime:>15us: a0 and a1, their peak 3 samples at 20 (got %llu at %lld)",
              (unsigned long long)fig.stats.peak_filtered.samples,
              (long long)fig.stats.peak_filtered_time);
        /* the pass that notes them draws no curve: it folds them alone */
        CHECK(folded_allocs(fig.m) == 2,
              "lifetime:>15us: the noting pass folds a0 and a1 alone (got %llu)",
              (unsigned long long)folded_allocs(fig.m));
        mt_figures_free(&fig);
    }
    /* live at the peak: found first */
    if (figures(path, MT_FIGURES_STATS | MT_FIGURES_PEAK, NULL, MT_TIME_PEAK, &s, &fig) == 0) {
        CHECK(!fig.sel && fig.live_at == 40, "--at peak: the peak's time first (got %lld)",
              (long long)fig.live_at);
        mt_figures_free(&fig);
    }
    /* the axes before the selected allocations */
    if (figures(path, MT_FIGURES_AXES, NULL, MT_TIME_END, &s, &fig) == 0) {
        CHECK(s.axes == 1 && s.end == 50 && s.max_life == 30 && s.selected == 3 &&
                  !s.selected_before_axes && fig.n_selected == 3,
              "axes: end 50, longest lifetime 30, then 3 allocations (got %d: %lld, %lld; %d)",
              s.axes, (long long)s.end, (long long)s.max_life, s.selected);
        mt_figures_free(&fig);
    }
    if (figures(path, MT_FIGURES_AXES, "inside:leak", MT_TIME_END, &s, &fig) == 0) {
        CHECK(s.axes == 1 && s.end == 50 && s.max_life == 30 && s.selected == 1,
              "axes of a selection by a folded pass: end 50, a1's lifetime 30 (got %lld, %lld)",
              (long long)s.end, (long long)s.max_life);
        mt_figures_free(&fig);
    }
    /* the curve: its buckets over the trace, the selection's peak */
    if (figures(path, MT_FIGURES_CURVE, "lifetime:>15us", MT_TIME_END, &s, &fig) == 0) {
        CHECK(fig.curve && fig.curve->n == 5 && fig.curve->peak_filtered_time == 20 &&
                  fig.n_selected == 2,
              "curve of lifetime:>15us: 5 buckets, its peak at 20 (got %lld)",
              fig.curve ? (long long)fig.curve->peak_filtered_time : -1LL);
        /* the pass that notes the selection folds it alone (the codec
         * draws the curve afterwards) */
        CHECK(folded_allocs(fig.m) == 2,
              "curve of lifetime:>15us: the noting pass folds a0 and a1 alone (got %llu)",
              (unsigned long long)folded_allocs(fig.m));
        mt_figures_free(&fig);
    }
    if (figures(path, MT_FIGURES_CURVE, "inside:parse", MT_TIME_END, &s, &fig) == 0) {
        CHECK(fig.curve && fig.curve->n == 5 && fig.curve->peak_filtered_time == 40 &&
                  fig.n_selected == 2,
              "curve of inside:parse in one pass: its peak at 40 (got %lld)",
              fig.curve ? (long long)fig.curve->peak_filtered_time : -1LL);
        /* that pass draws the curve of every allocation: it folds all 3 */
        CHECK(folded_allocs(fig.m) == 3,
              "curve of inside:parse: the pass drawing it folds all 3 (got %llu)",
              (unsigned long long)folded_allocs(fig.m));
        mt_figures_free(&fig);
    }
    /* the curve in buckets of a width the caller fixes (the Python API's:
     * mt_query_curve's 5 buckets of 10 over [0, 50), one more for the end) */
    /* known as allocated: one model pass, which folds all 3 */
    curve_fixed(path, NULL, "inside:parse", 2, 3);
    /* known as they end, on times alone: the codec notes them, then draws */
    curve_fixed(path, NULL, "lifetime:>15us", 2, UINT64_MAX);
    curve_fixed(path, NULL, "collect:never", 1, UINT64_MAX);
    /* with a size (a1 and a2 have 128 and 192 bytes): a model pass notes
     * a1 (folding it alone), then the codec draws */
    curve_fixed(path, NULL, "size:>=100 lifetime:>15us", 1, 1);
    /* every allocation: the codec alone */
    curve_fixed(path, NULL, NULL, 3, UINT64_MAX);
    /* the info of another trace (its end 60, not 50: a1 would live 40, not
     * 30): the codec's noting does not hold, a model pass notes a0 and a1 */
    char other[4096];
    if (tt_scratch_file(other, sizeof other, "figures-other") == 0 && write_trace(other, 1) == 0) {
        curve_fixed(path, other, "lifetime:>15us", 2, 2);
        curve_fixed(path, other, "lifetime:>35us", 0, 0);
        unlink(other);
    }

    /* the forced route whole: the whole model's selection, no callback */
    mt_read_force("whole");
    if (figures(path, MT_FIGURES_AXES, NULL, MT_TIME_END, &s, &fig) == 0) {
        CHECK(fig.sel && mt_model_n_allocs(fig.m) == 3 && s.axes == 0 && s.selected == 0,
              "route whole: the whole model's selection, no callback called");
        mt_figures_free(&fig);
    }
    mt_read_force("auto");

    /* a pipe and the peak first: the whole model, decided before reading */
    int pfd[2];
    if (pipe(pfd) == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            close(pfd[0]);
            FILE *in = fopen(path, "rb");
            char buf[4096];
            size_t n;
            while (in && (n = fread(buf, 1, sizeof buf, in)) > 0)
                if (write(pfd[1], buf, n) != (ssize_t)n)
                    break;
            _exit(0);
        }
        close(pfd[1]);
        char piped[64];
        snprintf(piped, sizeof piped, "/dev/fd/%d", pfd[0]);
        if (pid > 0 &&
            figures(piped, MT_FIGURES_STATS | MT_FIGURES_PEAK, NULL, MT_TIME_PEAK, &s, &fig) == 0) {
            CHECK(fig.sel && mt_model_n_allocs(fig.m) == 3 && s.selected == 0 &&
                      mt_selection_live_at(fig.sel) == 40 &&
                      mt_model_peak_time(fig.m) == 40,
                  "a pipe with the peak first: the whole model's selection, live at its peak, 40");
            mt_figures_free(&fig);
        }
        mt_read_view_plan vp = mt_read_plan_view(piped, 0, 0);
        CHECK(!vp.folded && !vp.no_index, "view: a pipe is never folded");
        close(pfd[0]);
        if (pid > 0)
            waitpid(pid, NULL, 0);
    }

    /* the viewer's fold: by size against the threshold, the caller's no_index kept */
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size > 0, "the trace has a size");
    mt_read_view_plan vp = mt_read_plan_view(path, 0, 0);
    CHECK(vp.folded && !vp.no_index, "view: a file above the threshold is folded");
    vp = mt_read_plan_view(path, (uint64_t)st.st_size, 1);
    CHECK(!vp.folded && vp.no_index, "view: a file of the threshold's size is whole");
    vp = mt_read_plan_view(path, MT_READ_FOLD_ABOVE, 0);
    CHECK(!vp.folded && MT_READ_FOLD_ABOVE == (uint64_t)128 << 20,
          "view: the default threshold is 128 MB, a small file whole");
    unlink(path);
    return failures != 0;
}
