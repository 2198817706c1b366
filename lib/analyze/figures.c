/*
 * figures.c - mt_read_figures (memtrace/stream.h): the strategies of the
 * streaming reports' reads, chosen from what the request needs and what
 * the input allows, on the passes of figpass.c:
 *
 *   peak   the unfiltered peak, first, when the live time or the filter
 *          (live:peak) names it (mt_read_peak, read.c);
 *   main   the figures; the live-memory curve of the selected allocations
 *          comes in the same pass when the filter decides on an allocation
 *          as it is allocated, otherwise the main pass notes the selected
 *          allocations (one bit each) and another pass draws it;
 *   end    a curve's buckets and a scatter's axes need the trace's end
 *          before the first point: for a curve, when no allocation needs
 *          its end to be selected, the packets' headers give it
 *          (mt_trace_end_hint, checked after the pass); otherwise a first
 *          pass finds it (by the codec alone for one file); a caller
 *          that fixes the buckets' width (curve_width) needs no end first,
 *          and with the traces' info (a model it holds) the curve of every
 *          allocation of one file needs the codec alone, as does that of
 *          a selection on the blocks' times alone (lifetime:, collect:,
 *          live:, alloc:), noted by a first scan.
 *
 * A single file is scanned by the codec alone where a pass needs no
 * stacks; several files take folded passes of the merged stream instead. A
 * pipe has no second pass: what needs one (the peak first, the axes, a
 * filter that needs blocks' ends for the selection's peak) takes the
 * whole model, decided before anything is read.
 *
 * A trace whose times go back somewhere needs the whole model (its events
 * sorted): MTA_FIG_WHOLE, found before anything is handed to the caller
 * (but a read that needs no order, every selected allocation alone,
 * streams anyway); read from a pipe, the peaks then fail (the pipe cannot
 * be read again). The whole model is the one fallback, here, and the
 * forced route whole takes it: the caller never chooses.
 */
#include <stdlib.h>
#include <string.h>

#include "memtrace/compare.h"
#include "figpass.h"

/* The totals (MT_FIGURES_STATS): one pass with the statistics'
 * accumulator; with MT_FIGURES_PEAK, the trace's peak (its times in
 * order) and the selection's own, from the curve of the same pass or of
 * another. */
static int read_stats(mta_figrun *r, mt_figures *out)
{
    const mt_figures_request *rq = r->rq;
    int peaks = (rq->need & MT_FIGURES_PEAK) != 0;
    out->live_at = rq->live_at == MT_TIME_PEAK ? r->peak : rq->live_at;
    int filtered = !mt_stream_filter_keeps_all(r->sf), in_pass = mt_stream_filter_at_alloc(r->sf);
    if (!(r->stats = mt_stats_acc_new(out->live_at)) ||
        (peaks && filtered && in_pass && !(r->curve = mt_curve_acc_new(1, 1)))) {
        mta_fig_fail(r, 1, NULL);
        return 1;
    }
    r->bits_write = peaks && filtered && !in_pass;
    if (r->bits_write && !r->regular)
        return MTA_FIG_WHOLE; /* a pipe: no second pass for the selection's peak */
    r->hold = peaks;
    r->feed = 1;
    mt_model *m = out->m = mta_fig_pass(r, MTA_HOOKS_ALL, 1);
    if (m && peaks && !mt_model_peak_known(m)) {
        if (r->regular)
            return MTA_FIG_WHOLE;
        /* the whole model would sort the events, but a pipe cannot be
         * read again */
        mta_fig_release(r, 1);
        size_t n = strlen(r->path) + 256;
        char *why = malloc(n);
        if (why)
            snprintf(why, n, "%s: the trace's times go back somewhere: its peak needs the whole "
                             "model, and a pipe cannot be read again (give the file, or use "
                             "'memtrace --route=whole stats')", r->path);
        mta_fig_fail(r, 1, why);
        free(why);
        return 1;
    }
    mta_fig_release(r, 1);
    if (!m)
        return 1;
    if (mt_stats_acc_finish(r->stats, m, &out->stats, &out->sizes, &out->lifetimes) < 0) {
        mta_fig_fail(r, 1, NULL);
        return 1;
    }
    if (peaks && out->stats.total.allocs != out->stats.allocs) {
        /* the selected allocations' own peak: from the curve */
        double bps = mt_model_bytes_per_sample(m), rate = mt_model_info(m)->sample_rate;
        if (!r->curve)
            return mta_fig_peak_pass(r, bps, rate, &out->stats);
        mt_curve *c = mt_curve_acc_result(r->curve, bps, rate);
        if (!c) {
            mta_fig_fail(r, 1, NULL);
            return 1;
        }
        out->stats.peak_filtered = c->peak_filtered_est;
        out->stats.peak_filtered_bytes = c->peak_filtered_est.bytes;
        out->stats.peak_filtered_time = c->peak_filtered_time;
        mt_curve_free(c);
    }
    return 0;
}

/* MT_FIGURES_AXES: the axes first (the trace's end and the longest
 * lifetime, of every block: the codec alone will do when every block is
 * selected), then the selected allocations */
static int read_axes(mta_figrun *r, mt_figures *out)
{
    const mt_figures_request *rq = r->rq;
    mt_timedelta end = 0;
    mt_scan_result res;
    int scanned = 0;
    if (mt_stream_filter_keeps_all(r->sf) && r->one_file) {
        scanned = mta_fig_scan(r, &res) == 0;
        end = res.end;
        if (scanned && res.n_live && end - res.first_live > r->max_life)
            r->max_life = end - res.first_live;
    }
    if (!scanned) {
        r->max_life = 0;
        mt_model *m = mta_fig_pass(r, MTA_HOOKS_ALL, 0);
        if (!m)
            return 1;
        end = mt_model_end(m);
        mt_model_free(m);
    }
    if (rq->on_axes && rq->on_axes(rq->ctx, end, r->max_life) < 0) {
        mta_fig_fail(r, 1, NULL);
        return 1;
    }
    r->n_selected = 0;
    r->feed = 1;
    return (out->m = mta_fig_pass(r, MTA_HOOKS_ALL, 1)) ? 0 : 1;
}

/* The curve when the selection needs the blocks' ends: a model pass notes
 * it (and gives the end), then the codec alone draws the curve into n
 * buckets */
static int read_curve_noted(mta_figrun *r, size_t n, mt_figures *out)
{
    r->bits_write = 1;
    r->hold = 1;
    r->feed = 1;
    mt_model *m = out->m = mta_fig_pass(r, MTA_HOOKS_ALL, 1);
    if (m && !mt_model_peak_known(m))
        return MTA_FIG_WHOLE;
    mta_fig_release(r, 1);
    if (!m)
        return 1;
    mt_timedelta end = mt_model_end(m);
    mt_timedelta width = r->rq->curve_width ? r->rq->curve_width : end / (mt_timedelta)n + 1;
    if (!(r->curve = mt_curve_acc_new(n, width))) {
        mta_fig_fail(r, 1, NULL);
        return 1;
    }
    r->bits_write = 0;
    r->bits_read = 1;
    mt_scan_result res;
    int sc = -1;
    if (r->one_file) {
        sc = mta_fig_scan(r, &res);
    } else {
        /* several files: the merged stream again, for the curve */
        mt_model *m2 = mta_fig_pass(r, MTA_HOOKS_CURVE, 0);
        if (!m2)
            return 1;
        res.end = mt_model_end(m2);
        sc = 0;
        mt_model_free(m2);
    }
    if (sc < 0 || res.end != end) {
        size_t len = strlen(r->path) + 32;
        char *why = malloc(len);
        if (why)
            snprintf(why, len, "%s: cannot read it again", r->path);
        mta_fig_fail(r, 1, why);
        free(why);
        return 1;
    }
    return 0;
}

/* The curve when the selected allocations are known as they come: the
 * end first, from the packets' headers (a hint, checked after the pass)
 * or by the codec alone; then the model pass draws the curve into n
 * buckets */
static int read_curve_direct(mta_figrun *r, size_t n, mt_figures *out)
{
    mt_timedelta end = 0, width = r->rq->curve_width;
    int monotone;
    if (width && r->rq->info && r->one_file && mt_stream_filter_keeps_all(r->sf)) {
        /* every allocation in the caller's buckets, its info known: the
         * codec alone draws them (a scan that fails leaves the model pass
         * to say why) */
        mt_scan_result res;
        if (!(r->curve = mt_curve_acc_new(n, width))) {
            mta_fig_fail(r, 1, NULL);
            return 1;
        }
        if (mta_fig_scan(r, &res) == 0) {
            r->n_selected = res.n_allocs;
            return res.monotone ? 0 : MTA_FIG_WHOLE;
        }
        mt_curve_acc_free(r->curve);
        r->curve = NULL;
    }
    int hinted = !width && r->one_file && r->regular && mt_trace_end_hint(r->path, &end) == 0;
    if (width) {
        monotone = 1;   /* the buckets are the caller's: the pass finds out */
        r->hold = 1;
    } else if (hinted) {
        monotone = 1;   /* the pass finds out */
        r->hold = 1;    /* its warnings wait for the check */
    } else if (mta_fig_scan_end(r, &end, &monotone) < 0) {
        mt_model *m = mta_fig_pass(r, MTA_HOOKS_NONE, 0);
        if (!m)
            return 1;
        monotone = mt_model_peak_known(m);
        end = mt_model_end(m);
        mt_model_free(m);
    }
    if (!monotone)
        return MTA_FIG_WHOLE;
    if (!(r->curve = mt_curve_acc_new(n, width ? width : end / (mt_timedelta)n + 1))) {
        mta_fig_fail(r, 1, NULL);
        return 1;
    }
    r->feed = 1;
    mt_model *m = out->m = mta_fig_pass(r, MTA_HOOKS_ALL, 1);
    if (!m)
        return 1;
    if ((width && !mt_model_peak_known(m)) ||
        (hinted && (!mt_model_peak_known(m) || mt_model_end(m) != end))) {
        /* times that go back, or packets the reader skipped: the
         * buckets were not the whole model's */
        mta_fig_release(r, 0);
        return MTA_FIG_WHOLE;
    }
    mta_fig_release(r, 1);
    return 0;
}

/* read_curve_scanned's answer when the model's passes must draw the curve */
#define BY_MODEL (-2)

/* The curve in the caller's buckets of one file whose info the caller
 * holds, of a selection on the blocks' times alone: the codec alone notes
 * it, then draws the curve; no stacks, no model. 0, MTA_FIG_WHOLE, 1, or
 * BY_MODEL (a scan that failed, whose reason the model pass gives; a
 * trace that is not the info's) with nothing kept. */
static int read_curve_scanned(mta_figrun *r, size_t n)
{
    mt_timedelta end = mt_model_end(r->rq->info);
    mt_scan_result res;
    int sc = mta_fig_scan_mark(r, &res);
    if (sc == 0 && !res.monotone)
        return MTA_FIG_WHOLE;   /* as the model's pass would find */
    if (sc == 0 && res.end == end) {
        if (!(r->curve = mt_curve_acc_new(n, r->rq->curve_width))) {
            mta_fig_fail(r, 1, NULL);
            return 1;
        }
        r->bits_read = 1;
        sc = mta_fig_scan(r, &res);
        if (sc == 0 && res.monotone && res.end == end) {
            for (size_t i = 0; i < r->n_bits; i++)
                r->n_selected += (uint64_t)__builtin_popcountll(r->bits[i]);
            return 0;
        }
    }
    mt_curve_acc_free(r->curve);
    r->curve = NULL;
    free(r->bits);
    r->bits = NULL;
    r->n_bits = 0;
    r->bits_read = 0;
    free(r->ferr);
    r->ferr = NULL;
    return BY_MODEL;
}

/* MT_FIGURES_CURVE: the end first (and which allocations are selected,
 * when that needs their collection), then the curve */
static int read_curve(mta_figrun *r, mt_figures *out)
{
    size_t n = r->rq->curve_buckets;
    int known = mt_stream_filter_at_alloc(r->sf);   /* the selection, as they come */
    int rc = BY_MODEL;
    if (known)
        rc = read_curve_direct(r, n, out);
    else if (r->rq->curve_width && r->rq->info && r->one_file && !r->rq->on_selected &&
             mta_fig_times_alone(r))
        rc = read_curve_scanned(r, n);
    if (rc == BY_MODEL)
        rc = read_curve_noted(r, n, out);
    if (rc)
        return rc;
    const mt_model *im = out->m ? out->m : r->rq->info;   /* (NULL: the codec alone drew it) */
    if (!(out->curve = mt_curve_acc_result(r->curve, mt_model_bytes_per_sample(im),
                                           mt_model_info(im)->sample_rate))) {
        mta_fig_fail(r, 1, NULL);
        return 1;
    }
    return 0;
}

const char *mt_read_figures_refuses(const char *const *paths, size_t n)
{
    if (mt_read_forced() & MT_ROUTE_WHOLE)
        return NULL; /* the whole model reads a profile, and says what it lacks */
    for (size_t i = 0; i < n; i++)
        if (mt_path_is_profile(paths[i]))
            return paths[i];
    return NULL;
}

/* The figures by folded passes: 0, MTA_FIG_WHOLE, or a failure's status. */
static int read_streamed(mta_figrun *r, const mt_figures_request *rq, mt_figures *out)
{
    if ((out->profile = mt_read_figures_refuses(rq->paths, rq->n)))
        return 1;
    int rc = mta_fig_start(r, rq);
    if (rc)
        return rc;
    if (rq->need & (MT_FIGURES_CURVE | MT_FIGURES_AXES) && !r->regular)
        return MTA_FIG_WHOLE; /* a pipe: the curve's buckets and the axes need a first pass */
    if (rq->need & MT_FIGURES_STATS)
        rc = read_stats(r, out);
    else if (rq->need & MT_FIGURES_AXES)
        rc = read_axes(r, out);
    else if (rq->need & MT_FIGURES_CURVE)
        rc = read_curve(r, out);
    else {
        r->feed = 1;
        rc = (out->m = mta_fig_pass(r, MTA_HOOKS_ALL, 1)) ? 0 : 1;
    }
    out->n_selected = r->n_selected;
    return rc;
}

/* The whole model and its selection, where the input cannot stream. */
static int read_whole(const mt_figures_request *rq, mt_figures *out, char **err)
{
    mt_read_request q = {
        .paths = rq->paths,
        .n = rq->n,
        .by_process = rq->by_process,
        .filter = rq->filter,
        .live_at = rq->live_at,
        .need_peak = rq->live_at == MT_TIME_PEAK || mt_filter_uses_peak(rq->filter),
        /* the figures need the innermost frame alone, unless the filter
         * looks at stacks */
        .max_depth = !rq->by_process && !mt_filter_uses_stacks(rq->filter) ? 1 : 0,
        .on_warning = rq->on_warning,
        .warning_ctx = rq->warning_ctx,
        .on_progress = rq->on_progress,
        .progress_ctx = rq->progress_ctx,
    };
    char *e = NULL;
    if (!(out->m = mt_read(&q, &e))) {
        *err = e ? e : strdup("cannot read the trace");
        return 1;
    }
    free(e);
    e = NULL;
    out->live_at = rq->live_at;
    if (!(out->sel = mt_select_sites(out->m, rq->filter, rq->live_at, NULL, &e))) {
        /* a regex over its limits is the filter's fault: a usage error */
        *err = e ? e : strdup("out of memory");
        return e ? 2 : 1;
    }
    return 0;
}

int mt_read_figures(const mt_figures_request *rq, mt_figures *out, char **err)
{
    memset(out, 0, sizeof *out);
    *err = NULL;
    if (mt_read_forced() & MT_ROUTE_WHOLE)
        return read_whole(rq, out, err);
    mta_figrun r;
    memset(&r, 0, sizeof r);
    int rc = read_streamed(&r, rq, out);
    if (rc > 0 && r.why) {
        *err = r.why;
        r.why = NULL;
        rc = r.status;
    }
    mta_fig_finish(&r);
    if (rc == 0)
        return 0;
    /* nothing of a streamed read that failed, or gave way, is kept */
    const char *profile = out->profile;
    mt_figures_free(out);
    out->profile = profile;
    return rc == MTA_FIG_WHOLE ? read_whole(rq, out, err) : rc;
}

void mt_figures_free(mt_figures *fig)
{
    mt_selection_free(fig->sel);
    mt_histogram_free(fig->sizes);
    mt_histogram_free(fig->lifetimes);
    mt_curve_free(fig->curve);
    mt_model_free(fig->m);
    memset(fig, 0, sizeof *fig);
}
