/*
 * figpass.c - the passes of mt_read_figures (figures.c chooses among
 * them): a folded read of the request's traces (mt_read, streaming) whose
 * sink puts each finished allocation through the filter (mt_stream_filter)
 * and into what the request needs (totals and histograms, the curve, the
 * caller's on_selected); the unfiltered peak first (mt_read_peak); and the
 * scans by the codec alone, for one file, where a pass needs no stacks:
 * the trace's end, the curve or peak of the allocations an earlier pass
 * noted (one bit each), and the noting itself for a filter on times
 * alone. Warnings may be held until a pass shows that the
 * trace streams (else the whole model says them).
 */
#include <stdlib.h>
#include <string.h>

#include "memtrace/compare.h"
#include "figpass.h"
#include "filter.h"
#include "warn.h"

static void quiet_warning(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
}

static void say_warning(void *ctx, const char *msg)
{
    mta_figrun *r = ctx;
    if (r->hold) {
        char **v = realloc(r->held, (r->n_held + 1) * sizeof *v);
        if (v && (v[r->n_held] = strdup(msg))) {
            r->held = v;
            r->n_held++;
            return;
        }
        if (v)
            r->held = v;
    }
    mt_warn(r->rq->on_warning, r->rq->warning_ctx, msg);
}

void mta_fig_release(mta_figrun *r, int say)
{
    for (size_t i = 0; i < r->n_held; i++) {
        if (say)
            mt_warn(r->rq->on_warning, r->rq->warning_ctx, r->held[i]);
        free(r->held[i]);
    }
    free(r->held);
    r->held = NULL;
    r->n_held = 0;
    r->hold = 0;
}

void mta_fig_fail(mta_figrun *r, int status, const char *why)
{
    if (r->why)
        return;
    r->status = status;
    r->why = strdup(why ? why : "out of memory");
}

/* 1, 0, or -1 (r->ferr set, or out of memory). */
static int selected(mta_figrun *r, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    if (r->prefiltered)
        return 1;
    if (r->bits_read)
        return seq / 64 < r->n_bits && (r->bits[seq / 64] >> (seq % 64) & 1);
    return mt_stream_filter_passes(r->sf, m, a, &r->ferr);
}

static int on_alloc(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    mta_figrun *r = ctx;
    int p = selected(r, m, a, seq);
    if (p < 0)
        return -1;
    int64_t s = (int64_t)a->n_samples;
    mt_curve_acc_event(r->curve, a->time, s, p ? s : 0, p ? a->n_samples : 0);
    return 0;
}

static int set_bit(mta_figrun *r, uint64_t seq)
{
    if (seq / 64 >= r->n_bits) {
        size_t n = r->n_bits ? r->n_bits : 1024;
        while (n <= seq / 64)
            n *= 2;
        uint64_t *b = realloc(r->bits, n * sizeof *b);
        if (!b)
            return -1;
        memset(b + r->n_bits, 0, (n - r->n_bits) * sizeof *b);
        r->bits = b;
        r->n_bits = n;
    }
    r->bits[seq / 64] |= 1ULL << (seq % 64);
    return 0;
}

static int on_fold(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    mta_figrun *r = ctx;
    int p = selected(r, m, a, seq);
    if (p < 0)
        return -1;
    if (r->curve && a->collect != MT_TIME_NEVER) {
        int64_t s = (int64_t)a->n_samples;
        mt_curve_acc_event(r->curve, a->collect, -s, p ? -s : 0, 0);
    }
    if (!p)
        return 0;
    r->n_selected++;
    mt_timedelta end = a->collect == MT_TIME_NEVER ? mt_model_end(m) : a->collect;
    if (end - a->time > r->max_life)
        r->max_life = end - a->time;
    if (r->bits_write && set_bit(r, seq) < 0)
        return -1;
    if (r->stats && mt_stats_acc_add(r->stats, m, a) < 0)
        return -1;
    if (r->feed && r->rq->on_selected && r->rq->on_selected(r->rq->ctx, m, a, seq) < 0)
        return -1;
    return 0;
}

/* A pass that only draws r->curve (of the allocations r->bits selects):
 * the collections, as on_fold gives them. */
static int curve_fold(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    mta_figrun *r = ctx;
    if (a->collect == MT_TIME_NEVER)
        return 0;
    int p = selected(r, m, a, seq);
    if (p < 0)
        return -1;
    int64_t s = (int64_t)a->n_samples;
    mt_curve_acc_event(r->curve, a->collect, -s, p ? -s : 0, 0);
    return 0;
}

/* What every pass reads: the traces, folded with all allocations (the
 * stream filter selects), stacks as deep as the filter needs. */
static mt_read_request request(mta_figrun *r, int loud)
{
    const mt_figures_request *q = r->rq;
    mt_read_request rq = {
        .paths = q->paths,
        .n = q->n,
        .by_process = q->by_process,
        .fold = 1,
        .stream = 1,
        .live_at = MT_TIME_END,
        /* by process: whole stacks, as the whole model (a filter may name
         * the process frame) */
        .max_depth = mt_filter_uses_stacks(q->filter) || q->by_process ? 0 : 1,
        .on_warning = loud ? say_warning : quiet_warning,
        .warning_ctx = r,
        .on_progress = q->on_progress,
        .progress_ctx = q->progress_ctx,
    };
    return rq;
}

mt_model *mta_fig_pass(mta_figrun *r, int hooks, int loud)
{
    char *err = NULL;
    mt_read_request rq = request(r, loud);
    mt_sink sink = {0};
    r->prefiltered = 0;
    if (hooks == MTA_HOOKS_ALL && !r->curve && !r->bits_read) {
        /* no curve in this pass: on_fold does nothing with an allocation
         * the filter leaves out, so the fold leaves it out first (by the
         * filter's allocation-level clauses, before it is costed or handed
         * to the sink); on_fold applies the stack-level ones, if any */
        rq.filter = r->rq->filter;
        if (mt_filter_uses_peak(rq.filter)) {
            rq.peak_known = 1;
            rq.peak = r->peak;
        }
        r->prefiltered = !mt_filter_uses_stacks(rq.filter);
    }
    if (hooks) {
        sink.on_done = hooks == MTA_HOOKS_CURVE ? curve_fold : on_fold;
        sink.on_alloc = r->curve ? on_alloc : NULL;
        sink.ctx = r;
        rq.sinks = &sink;
        rq.n_sinks = 1;
    }
    mt_model *m = mt_read(&rq, &err);
    r->prefiltered = 0;
    if (m && hooks && mt_stream_filter_sync(r->sf, m, &r->ferr) < 0) {
        mt_model_free(m);
        m = NULL;
    }
    if (!m) {
        mta_fig_release(r, 1); /* the whole model would fail the same way */
        mta_fig_fail(r, r->ferr ? 2 : 1, r->ferr ? r->ferr : err);
    }
    free(err);
    return m;
}

int mta_fig_scan_end(mta_figrun *r, mt_timedelta *end, int *monotone)
{
    if (!r->one_file)
        return -1; /* several files merge into one stream: a model pass */
    mt_reader_options o = {.on_warning = quiet_warning, .skip_backtraces = 1};
    mt_reader *rd = mt_reader_open(r->path, &o, NULL);
    if (!rd)
        return -1;
    mt_event ev;
    mt_timedelta last = 0;
    uint64_t n = 0;
    int rc;
    *end = 0;
    *monotone = 1;
    while ((rc = mt_reader_next(rd, &ev)) == 1) {
        if (ev.time < last)
            *monotone = 0;
        last = ev.time;
        if (ev.time > *end)
            *end = ev.time;
        if (++n % (1u << 20) == 0 && r->rq->on_progress)
            r->rq->on_progress(r->rq->progress_ctx, mt_reader_offset(rd), mt_reader_size(rd));
    }
    if (rc == 0 && mt_reader_end_time(rd) > *end)
        *end = mt_reader_end_time(rd);
    mt_reader_close(rd);
    return rc < 0 ? -1 : 0;
}

/* mt_scan_events: every block into r->curve, selected when r->bits has it
 * (with bits_read; else all are); without a curve, the longest lifetime of
 * a freed block into r->max_life. */
static int scan_event(void *ctx, mt_timedelta t, uint64_t seq, uint64_t samples, int collect,
                      mt_timedelta alloc_time)
{
    mta_figrun *r = ctx;
    if (!r->curve) {
        /* the lifetime scatter's axes: the longest lifetime of a freed block */
        if (collect && t - alloc_time > r->max_life)
            r->max_life = t - alloc_time;
        return 0;
    }
    int p = !r->bits_read || (seq / 64 < r->n_bits && (r->bits[seq / 64] >> (seq % 64) & 1));
    int64_t d = collect ? -(int64_t)samples : (int64_t)samples;
    mt_curve_acc_event(r->curve, t, d, p ? d : 0, p && !collect ? samples : 0);
    return 0;
}

int mta_fig_scan(mta_figrun *r, mt_scan_result *res)
{
    return mt_scan_events(r->path, scan_event, r, r->rq->on_progress, r->rq->progress_ctx, res,
                          NULL);
}

int mta_fig_times_alone(const mta_figrun *r)
{
    const mt_filter *f = r->rq->filter;
    for (size_t k = 0; f && k < f->n; k++)
        switch (f->c[k].kind) {
        case MTA_ALLOC:
        case MTA_LIVE_AT:
        case MTA_LIVE_RANGE:
        case MTA_COLLECT:
        case MTA_COLLECT_NEVER:
        case MTA_LIFETIME: break;
        default: return 0;
        }
    return 1;
}

/* mt_scan_events: a block is judged as never collected when allocated,
 * again when collected (each block is collected once or never). */
static int mark_event(void *ctx, mt_timedelta t, uint64_t seq, uint64_t samples, int collect,
                      mt_timedelta alloc_time)
{
    mta_figrun *r = ctx;
    mt_alloc a = {
        .time = alloc_time,
        .collect = collect ? t : MT_TIME_NEVER,
        .promote = MT_TIME_NEVER,
        .n_samples = samples,
    };
    int p = mt_stream_filter_passes(r->sf, r->rq->info, &a, &r->ferr);
    if (p < 0)
        return -1;
    if (p)
        return set_bit(r, seq);
    if (collect && seq / 64 < r->n_bits)
        r->bits[seq / 64] &= ~(1ULL << (seq % 64));
    return 0;
}

int mta_fig_scan_mark(mta_figrun *r, mt_scan_result *res)
{
    return mt_scan_events(r->path, mark_event, r, r->rq->on_progress, r->rq->progress_ctx, res,
                          NULL);
}

/* A scan into a fresh r->curve of one bucket: its peak (of all blocks, or
 * of those in r->bits). 0, MTA_FIG_WHOLE (the times go back), or -1 when
 * the trace cannot be read or out of memory (a model pass then says why). */
static int scan_peak(mta_figrun *r, double rate, mt_timedelta *t, int64_t *samples, mt_peak *est)
{
    mt_scan_result res;
    mt_curve_acc_free(r->curve);
    if (!(r->curve = mt_curve_acc_new(1, 1)))
        return -1;
    if (mta_fig_scan(r, &res) < 0)
        return -1;
    if (!res.monotone)
        return MTA_FIG_WHOLE;
    mt_curve *c = mt_curve_acc_result(r->curve, 1.0, rate); /* in samples */
    if (!c)
        return -1;
    *t = c->peak_filtered_time;
    *samples = (int64_t)c->peak_filtered;
    *est = c->peak_filtered_est;
    mt_curve_free(c);
    return 0;
}

int mta_fig_start(mta_figrun *r, const mt_figures_request *rq)
{
    memset(r, 0, sizeof *r);
    r->rq = rq;
    r->path = rq->paths[0];
    r->one_file = rq->n == 1 && !rq->by_process;
    r->regular = mt_read_regular(rq->paths, rq->n);
    if (rq->live_at == MT_TIME_PEAK || mt_filter_uses_peak(rq->filter)) {
        if (!mt_read_may_fold(rq->paths, rq->n, 1))
            return MTA_FIG_WHOLE; /* a pipe: no first pass for the peak */
        mt_read_request q = request(r, 0);
        char *err = NULL;
        int sc = mt_read_peak(&q, &r->peak, &err);
        if (sc == 1)
            return MTA_FIG_WHOLE; /* times go back: only the whole model has a peak */
        if (sc < 0) {
            mta_fig_fail(r, 1, err);
            free(err);
            return 1;
        }
    }
    if (!(r->sf = mt_stream_filter_new(rq->filter, r->peak))) {
        mta_fig_fail(r, 1, NULL);
        return 1;
    }
    return 0;
}

void mta_fig_finish(mta_figrun *r)
{
    mt_stream_filter_free(r->sf);
    mt_stats_acc_free(r->stats);
    mt_curve_acc_free(r->curve);
    free(r->bits);
    free(r->ferr);
    free(r->why);
    mta_fig_release(r, 0);
}

int mta_fig_peak_pass(mta_figrun *r, double bps, double rate, mt_stats *st)
{
    mt_timedelta t;
    int64_t samples;
    r->bits_read = 1;
    if (r->one_file && scan_peak(r, rate, &t, &samples, &st->peak_filtered) == 0) {
        mt_peak_scale(&st->peak_filtered, bps);
        st->peak_filtered_bytes = st->peak_filtered.bytes;
        st->peak_filtered_time = t;
        return 0;
    }
    if (!r->one_file) {
        /* several files: the merged stream again, folded for the curve alone */
        mt_curve_acc_free(r->curve);
        if (!(r->curve = mt_curve_acc_new(1, 1))) {
            mta_fig_fail(r, 1, NULL);
            return 1;
        }
        mt_model *m = mta_fig_pass(r, MTA_HOOKS_CURVE, 0);
        if (!m)
            return 1;
        mt_model_free(m);
        mt_curve *c = mt_curve_acc_result(r->curve, 1.0, rate); /* in samples */
        if (!c) {
            mta_fig_fail(r, 1, NULL);
            return 1;
        }
        st->peak_filtered = c->peak_filtered_est;
        mt_peak_scale(&st->peak_filtered, bps);
        st->peak_filtered_bytes = st->peak_filtered.bytes;
        st->peak_filtered_time = c->peak_filtered_time;
        mt_curve_free(c);
        return 0;
    }
    mt_model *m = mta_fig_pass(r, MTA_HOOKS_NONE, 0);
    if (m) {
        size_t n = strlen(r->path) + 32;
        char *why = malloc(n);
        if (why)
            snprintf(why, n, "%s: cannot read it again", r->path);
        mta_fig_fail(r, 1, why);
        free(why);
        mt_model_free(m);
    }
    return 1;
}
