/*
 * read.c - one read of a trace (or of several, merged), many sinks: the
 * planner that chooses how a trace is read, and the loop that hands every
 * finished allocation to the sinks that asked for it (analyze.h, "Reading").
 *
 * Design. A report or the viewer says what it wants: the per-stack costs
 * of a filter at a time (the folded model: mt_select_sites), figures fed
 * allocation by allocation (sinks: mt_sink), and whether the peak's time is
 * needed before the pass (live:peak, --at peak). It never says how to read.
 * mt_read plans the passes from that and from what the input allows:
 *
 *   one pass       the default: a folded model, the sinks called as the
 *                  blocks are allocated (on_alloc) and finished (on_done:
 *                  collected, or live at the end), in file order;
 *   peak first     the peak's time first: by the codec alone for one file
 *                  (mt_scan_peak), else a folded pass of the merged stream;
 *   whole          a pipe cannot be read twice, and a trace whose times go
 *                  back has no peak in file order: then the whole model
 *                  (every allocation kept, its events sorted) is read, and
 *                  the sinks are not called: the caller queries the model.
 *
 * The sinks see an mt_alloc: a new per-allocation attribute goes into it
 * and every sink sees it; a new figure is a new sink, added to a request's
 * list without touching the loop. A sink that needs nothing of the model
 * but what it took once (on_bind) runs on a thread of the read's own
 * (on_done_apart: sinkthread.c, on pipe.c's ring) beside the folding one.
 * The request may also name the trace's allocation index: a folded pass
 * is then folded from it (allocindex.c) when it can stand for the trace.
 *
 * The viewer asks the plan of one file (mt_read_plan_view): a file
 * larger than its fold threshold, or a profile, is served from folded
 * models read for each filter; a smaller one or a pipe from the whole.
 *
 * The route can be forced for tests and benchmarks (mt_read_force), never
 * by the environment: the CLI's global option --route sets it.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "memtrace/analyze.h"
#include "memtrace/compare.h"
#include "memtrace/stream.h"
#include "load.h"
#include "sinkthread.h"

int mt_read_regular(const char *const *paths, size_t n)
{
    struct stat st;
    for (size_t i = 0; i < n; i++)
        if (stat(paths[i], &st) != 0 || !S_ISREG(st.st_mode))
            return 0;
    return 1;
}

mt_read_view_plan mt_read_plan_view(const char *path, uint64_t fold_above, int no_index)
{
    struct stat st;
    mt_read_view_plan p = {.no_index = no_index};
    /* folded: read again for each filter, so a regular file (not a pipe) */
    p.folded = stat(path, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size > fold_above;
    if (mt_path_is_profile(path)) {
        /* a pprof profile: per-stack views only, read as a folded model */
        p.folded = 1;
        p.no_index = 1;
    }
    return p;
}

int mt_read_may_fold(const char *const *paths, size_t n, int need_peak)
{
    if (mt_read_forced() & MT_ROUTE_WHOLE)
        return 0;
    /* the peak first reads the trace twice: a pipe cannot be */
    return !need_peak || mt_read_regular(paths, n);
}

static void no_warning(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
}

/* The sinks of one read, called in the order given; with the stream
 * filter when the sinks see only what passes it, and the thread of the
 * on_done_apart sinks. */
typedef struct fanout {
    const mt_sink *sinks;
    size_t n;
    mt_stream_filter *sf;        /* or NULL: every allocation the fold gives */
    char *err;                   /* why sf stopped the read */
    int any_apart;
    int bound;                   /* on_bind called */
    mta_sinkthread *apart;       /* or NULL: on_done_apart on this thread */
} fanout;

static int fan_alloc(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    fanout *f = ctx;
    for (size_t i = 0; i < f->n; i++)
        if (f->sinks[i].on_alloc && f->sinks[i].on_alloc(f->sinks[i].ctx, m, a, seq) < 0)
            return -1;
    return 0;
}

static int fan_done(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    fanout *f = ctx;
    if (f->sf) {
        int pass = mt_stream_filter_passes(f->sf, m, a, &f->err);
        if (pass <= 0)
            return pass;
    }
    for (size_t i = 0; i < f->n; i++)
        if (f->sinks[i].on_done && f->sinks[i].on_done(f->sinks[i].ctx, m, a, seq) < 0)
            return -1;
    if (!f->any_apart)
        return 0;
    if (!f->bound) {   /* before the first record is handed over */
        for (size_t i = 0; i < f->n; i++)
            if (f->sinks[i].on_bind && f->sinks[i].on_bind(f->sinks[i].ctx, m) < 0)
                return -1;
        f->bound = 1;
    }
    if (f->apart)
        return mta_sinkthread_put(f->apart, a, mt_model_end(m), seq);
    for (size_t i = 0; i < f->n; i++)
        if (f->sinks[i].on_done_apart &&
            f->sinks[i].on_done_apart(f->sinks[i].ctx, a, mt_model_end(m), seq) < 0)
            return -1;
    return 0;
}

/* Before a folded pass: the stream filter and the sinks' thread. Returns
 * 0, or -1 when out of memory. */
static int fan_begin(fanout *f, const mt_read_request *rq)
{
    memset(f, 0, sizeof *f);
    f->sinks = rq->sinks;
    f->n = rq->n_sinks;
    for (size_t i = 0; i < rq->n_sinks; i++)
        f->any_apart |= rq->sinks[i].on_done_apart != NULL;
    if (rq->sinks_filtered && rq->filter && mt_filter_uses_stacks(rq->filter)) {
        f->sf = mt_stream_filter_new(rq->filter, rq->peak_known ? rq->peak : 0);
        if (!f->sf)
            return -1;
        if (mt_stream_filter_keeps_all(f->sf)) {   /* hide: only */
            mt_stream_filter_free(f->sf);
            f->sf = NULL;
        }
    }
    if (f->any_apart && !(mt_read_forced() & MT_ROUTE_ONE_THREAD))
        f->apart = mta_sinkthread_start(rq->sinks, rq->n_sinks);
    return 0;
}

/* After it: m the model or NULL (*err set). Returns m, or NULL (m freed)
 * when a sink on the sinks' thread failed; the filter's reason rather
 * than "stopped by the caller" when it stopped the read. */
static mt_model *fan_end(fanout *f, mt_model *m, char **err)
{
    if (f->apart && mta_sinkthread_finish(f->apart) < 0 && m) {
        /* (after the last hand-off: else the read failed at the next) */
        mt_model_free(m);
        m = NULL;
        *err = strdup("stopped by the caller");
    }
    f->apart = NULL;
    if (!m && f->err) {
        free(*err);
        *err = f->err;
        f->err = NULL;
    }
    free(f->err);
    mt_stream_filter_free(f->sf);
    f->sf = NULL;
    return m;
}

/* A folded pass from the request's allocation index. */
static mt_model *index_pass(const mt_read_request *rq, fanout *f, char **err)
{
    mt_alloc_index_fold_options o = {
        .filter = rq->filter,
        .peak = rq->peak_known ? rq->peak : 0,
        .on_fold = fan_done,
        .ctx = f,
        .progress = rq->on_progress,
        .progress_ctx = rq->progress_ctx,
    };
    return mt_alloc_index_fold(rq->index, rq->index_base, &o, err);
}

/* One pass as planned: folded (fold) with the request's sinks, or whole. */
static mt_model *read_pass(mt_read_request *rq, int fold, char **err)
{
    mt_model_options mo = {
        .on_warning = rq->on_warning,
        .warning_ctx = rq->warning_ctx,
        .on_progress = rq->on_progress,
        .progress_ctx = rq->progress_ctx,
        .max_depth = rq->max_depth,
    };
    int any_alloc = 0, any_done = 0;
    for (size_t i = 0; i < rq->n_sinks; i++) {
        any_alloc |= rq->sinks[i].on_alloc != NULL;
        any_done |= rq->sinks[i].on_done || rq->sinks[i].on_done_apart;
    }
    if (!fold)
        return mt_model_load_many(rq->paths, rq->n, rq->by_process, &mo, err);
    for (size_t i = 0; i < rq->n_sinks; i++)
        if (rq->sinks[i].on_reset)
            rq->sinks[i].on_reset(rq->sinks[i].ctx);
    fanout f;
    *err = NULL;
    if (fan_begin(&f, rq) < 0)
        return NULL;
    /* the index stands for one trace read whole, live at the end */
    int ix = rq->index && rq->index_base && rq->n == 1 && !rq->by_process && !any_alloc &&
             !rq->max_depth && rq->live_at == MT_TIME_END;
    mt_model *m;
    if (ix) {
        m = fan_end(&f, index_pass(rq, &f, err), err);
    } else {
        mo.fold = 1;
        mo.fold_filter = rq->filter;
        mo.fold_live_at = rq->live_at;
        mo.fold_peak_known = rq->peak_known;
        mo.fold_peak = rq->peak;
        if (any_done || any_alloc) {
            mo.on_fold = any_done ? fan_done : NULL;
            mo.on_alloc = any_alloc ? fan_alloc : NULL;
            mo.fold_ctx = &f;
        }
        m = fan_end(&f, mt_model_load_many(rq->paths, rq->n, rq->by_process, &mo, err), err);
    }
    return m;
}

int mt_read_peak(const mt_read_request *rq, mt_timedelta *peak, char **err)
{
    if (rq->n == 1 && !rq->by_process) {
        /* the peak by the codec alone (no stacks): about the time of
         * reading the file; a model pass below when that fails, to say why */
        int sc = mt_scan_peak(rq->paths[0], rq->on_progress, rq->progress_ctx, peak, NULL);
        if (sc >= 0)
            return sc;
    }
    mt_read_request p = *rq;
    p.filter = NULL;
    p.live_at = MT_TIME_END;
    p.peak_known = 0;
    p.sinks = NULL;
    p.n_sinks = 0;
    p.on_warning = no_warning; /* the pass that follows says them */
    char *e = NULL;
    mt_model *pm = read_pass(&p, 1, &e);
    if (!pm) {
        if (err)
            *err = e;
        else
            free(e);
        return -1;
    }
    free(e);
    int known = mt_model_peak_known(pm);
    *peak = mt_model_peak_time(pm);
    mt_model_free(pm);
    return known ? 0 : 1;
}

mt_model *mt_read(mt_read_request *rq, char **err)
{
    /* a streaming read folds whatever the route forced: its figures come
     * from the fold and the sinks alone */
    int fold = rq->stream || (rq->fold && mt_read_may_fold(rq->paths, rq->n, rq->need_peak));
    if (fold && rq->need_peak && !rq->peak_known) {
        mt_timedelta peak;
        int rc = mt_read_peak(rq, &peak, NULL);
        if (rc == 0) {
            rq->peak_known = 1;
            rq->peak = peak;
        } else if (!rq->stream) {
            fold = 0; /* times go back somewhere: the whole model finds the peak */
        }
    }
    rq->sinks_fed = fold;
    return read_pass(rq, fold, err);
}

mt_model *mt_read_again(mt_read_request *rq, char **err)
{
    return read_pass(rq, rq->sinks_fed, err);
}
