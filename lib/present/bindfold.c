/*
 * bindfold.c - the binding's queries of big traces (memtrace/bind.h, "big
 * traces"): each one a folded read of mt_read for its filter and time
 * instead of a selection of the whole model; the curve (the same buckets
 * as mt_query_curve) and the statistics from the planner of the streaming
 * reports (mt_read_figures), the allocations that pass a filter kept
 * alone.
 */
#include <stdlib.h>
#include <string.h>

#include "bindsel.h"
#include "memtrace/compare.h"
#include "memtrace/present.h"
#include "memtrace/stream.h"

static void quiet(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
}

/* The traces read folded (arg: int *folded), or the whole model when
 * they cannot be; the first read's warnings to warn. */
static mt_model *open_folded(const char *const *paths, size_t n, void *arg, mt_warning_fn warn,
                             void *warn_ctx, char **err)
{
    int *folded = arg;
    mt_read_request rq = {.paths = paths, .n = n, .on_warning = warn, .warning_ctx = warn_ctx};
    if (!mt_read_regular(paths, n))
        return mt_read(&rq, err);   /* a pipe is read once: the whole model */
    rq.fold = 1;
    rq.stream = 1;
    rq.live_at = MT_TIME_END;
    mt_model *m = mt_read(&rq, err);
    if (m && !mt_model_peak_known(m)) {
        /* times go back somewhere: only the whole model sorts the events
         * (the folded read said the warnings) */
        mt_model_free(m);
        rq = (mt_read_request){.paths = paths, .n = n, .on_warning = quiet};
        return mt_read(&rq, err);
    }
    *folded = m != NULL;
    return m;
}

mt_model *mt_bind_open_folded(const char *const *paths, size_t n, int *folded, char **err)
{
    *err = NULL;
    *folded = 0;
    if (!n) {
        *err = mta_bind_msg("no trace given", NULL);
        return NULL;
    }
    return open_folded(paths, n, folded, NULL, NULL, err);
}

mt_model *mt_bind_open_folded_warned(const char *const *paths, size_t n, int *folded,
                                     char **warnings, char **err)
{
    *folded = 0;
    return mta_bind_warned(open_folded, paths, n, folded, warnings, err);
}

static void reset_sums(void *ctx)
{
    mt_diff_fold_reset(ctx);
}

/* A folded read of the traces for filter f at live time at, whole stacks,
 * warnings quiet: the opening read of the same traces said them, once (a
 * warning per open, as the whole model gives; a query does not repeat
 * them). */
static mt_read_request query_request(const mt_model *base, const char *const *paths, size_t n,
                                     const mt_filter *f, mt_timedelta at)
{
    mt_read_request rq = {
        .paths = paths,
        .n = n,
        .fold = 1,
        .stream = 1,
        .filter = f,
        .live_at = at,
        .on_warning = quiet,
    };
    if (at == MT_TIME_PEAK || mt_filter_uses_peak(f)) {
        rq.need_peak = 1;
        if (base && mt_model_peak_known(base)) {
            rq.peak_known = 1;
            rq.peak = mt_model_peak_time(base);
        }
    }
    return rq;
}

mt_bind_sel *mt_bind_select_read(const mt_model *base, const char *const *paths, size_t n,
                                 const char *filter, const char *at, int sites, char **err)
{
    mt_filter *f;
    mt_timedelta t;
    if (mta_bind_parse(filter, at, &f, &t, err) < 0)
        return NULL;
    if (base && t == MT_TIME_END && (!filter || !filter[strspn(filter, " ")])) {
        /* the base's own costs: every allocation, live at the end */
        mt_filter_free(f);
        return mta_bind_select_with(base, NULL, filter, t, sites, err);
    }
    mt_read_request rq = query_request(base, paths, n, f, t);
    mt_model *m = mt_read(&rq, err);
    if (!m) {
        mt_filter_free(f);
        return NULL;
    }
    mt_bind_sel *b = mta_bind_select_with(m, f, filter, t, sites, err);
    if (!b) {
        mt_model_free(m);
        return NULL;
    }
    b->own = m;
    return b;
}

mt_bind_sel *mt_bind_select_diff_read(const mt_model *base, const char *const *paths, size_t n,
                                      const char *filter, const char *at, const char *by,
                                      int side, char **err)
{
    *err = NULL;
    int metric = mta_bind_metric(by ? by : "alloc");
    if (metric < 0) {
        *err = mta_bind_msg("unknown measure", by);
        return NULL;
    }
    mt_filter *f;
    mt_timedelta t;
    if (mta_bind_parse(filter, at, &f, &t, err) < 0)
        return NULL;
    mt_diff_side spec = mt_diff_side_all(NULL, t);
    mt_diff_fold *sums = mt_diff_fold_new(side ? NULL : &spec, side ? &spec : NULL,
                                          (mt_metric)metric);
    if (!sums) {
        mt_filter_free(f);
        return NULL;
    }
    mt_read_request rq = query_request(base, paths, n, f, t);
    mt_sink sink = {.on_done = mt_diff_fold_alloc, .on_reset = reset_sums, .ctx = sums};
    rq.sinks = &sink;
    rq.n_sinks = 1;
    mt_model *m = mt_read(&rq, err);
    if (m && !rq.sinks_fed) {
        *err = mta_bind_msg("the trace's times go back somewhere: diff needs the whole model",
                            NULL);
        mt_model_free(m);
        m = NULL;
    }
    if (!m) {
        mt_diff_fold_free(sums);
        mt_filter_free(f);
        return NULL;
    }
    mt_bind_sel *b = mta_bind_select_with(m, f, filter, t, 1, err);
    if (!b) {
        mt_diff_fold_free(sums);
        mt_model_free(m);
        return NULL;
    }
    b->own = m;
    b->fold = sums;
    return b;
}

/* ------------------------------------------------------------------------ */
/* The curve and the statistics: the planner's reads (mt_read_figures)       */
/*
 * The planner chooses the passes (the peak first, which allocations a
 * filter that needs the blocks' ends selects, the codec alone for one
 * file) and falls back to the whole model's selection where the traces
 * cannot stream; the figures are then that selection's, as the whole
 * model's queries give them.
 */

/* The planner's figures of the traces (base: their opening model, for
 * their info) for filter f at live time at: 0, or -1 with *err. */
static int read_figures(const mt_model *base, const char *const *paths, size_t n,
                        const mt_filter *f, mt_timedelta at, unsigned need, size_t buckets,
                        mt_timedelta width, mt_figures *fig, char **err)
{
    mt_figures_request rq = {
        .paths = paths,
        .n = n,
        .filter = f,
        .live_at = at,
        .need = need,
        .curve_buckets = buckets,
        .curve_width = width,
        .info = base,
        .on_warning = quiet,   /* the opening read said them, once */
    };
    char *why = NULL;
    if (mt_read_figures(&rq, fig, &why) != 0) {
        if (!why && fig->profile)
            why = mta_bind_msg("a pprof profile has no allocations to read", fig->profile);
        *err = why;
        mt_figures_free(fig);
        return -1;
    }
    return 0;
}

size_t mt_bind_curve_read(const mt_model *base, const char *const *paths, size_t n,
                          const char *filter, size_t buckets, int64_t *time, double *total,
                          double *filtered, char **err)
{
    *err = NULL;
    mt_filter *f;
    mt_timedelta t;
    if (!buckets) {
        *err = mta_bind_msg("a curve needs at least one bucket", NULL);
        return 0;
    }
    if (mta_bind_parse(filter, NULL, &f, &t, err) < 0)
        return 0;
    /* mt_query_curve(s, 0, end, buckets): [0, end) in buckets of the width
     * rounded up; one more bucket takes an event at the end itself, which
     * that window counts for nothing but its peak */
    mt_timedelta end = mt_model_end(base), width = end > 0 ? end : 1;
    width = (width + (mt_timedelta)buckets - 1) / (mt_timedelta)buckets;
    mt_figures fig;
    size_t k = 0;
    mt_curve *c = NULL;
    if (read_figures(base, paths, n, f, MT_TIME_END, MT_FIGURES_CURVE, buckets + 1, width, &fig,
                     err) < 0)
        goto out;
    c = fig.sel ? mt_query_curve(fig.sel, 0, MT_TIME_END, buckets) : fig.curve;
    for (; c && k < buckets && k < c->n; k++) {
        time[k] = c->time[k];
        total[k] = c->total[k];
        filtered[k] = c->filtered[k];
    }
    if (fig.sel)
        mt_curve_free(c);
    mt_figures_free(&fig);
out:
    if (!k && !*err)
        *err = mta_bind_msg("out of memory", NULL);
    mt_filter_free(f);
    return k;
}

char *mt_bind_stats_read(const mt_model *base, const char *const *paths, size_t n,
                         const char *filter, const char *at, char **err)
{
    mt_filter *f;
    mt_timedelta t;
    if (mta_bind_parse(filter, at, &f, &t, err) < 0)
        return NULL;
    char *text = NULL;
    size_t len = 0;
    mt_figures fig;
    if (read_figures(base, paths, n, f, t, MT_FIGURES_STATS | MT_FIGURES_PEAK, 0, 0, &fig,
                     err) < 0)
        goto out;
    FILE *out = open_memstream(&text, &len);
    if (out) {
        int rc = fig.sel ? mt_report_stats(out, fig.sel, 1)
                         : mt_report_stats_figures(out, fig.m, &fig.stats, fig.sizes,
                                                   fig.lifetimes,
                                                   mt_model_resolve_time(fig.m, fig.live_at),
                                                   NULL, 1);
        if (fclose(out) != 0 || rc < 0) {
            free(text);
            text = NULL;
        }
    }
    mt_figures_free(&fig);
out:
    if (!text && !*err)
        *err = mta_bind_msg("out of memory", NULL);
    mt_filter_free(f);
    return text;
}

/* ------------------------------------------------------------------------ */
/* The allocations that pass a filter                                        */

typedef struct row {
    mt_alloc a;
    uint64_t seq;
} row;

struct mt_bind_rows {
    mt_model *m;
    row *v;
    size_t n, cap;
    mt_alloc *allocs;        /* v's records in file order */
    uint32_t *sites;
};

static int row_done(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    (void)m;
    mt_bind_rows *r = ctx;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 1024;
        row *v = realloc(r->v, cap * sizeof *v);
        if (!v)
            return -1;
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n].a = *a;
    r->v[r->n++].seq = seq;
    return 0;
}

static int by_seq(const void *x, const void *y)
{
    uint64_t a = ((const row *)x)->seq, b = ((const row *)y)->seq;
    return a < b ? -1 : a > b;
}

mt_bind_rows *mt_bind_rows_read(const char *const *paths, size_t n, const char *filter,
                                const char *at, char **err)
{
    *err = NULL;
    mt_filter *f;
    mt_timedelta t;
    if (mta_bind_parse(filter, at, &f, &t, err) < 0)
        return NULL;
    mt_bind_rows *r = calloc(1, sizeof *r);
    mt_bind_sel *b = NULL;
    if (!r)
        goto fail;
    mt_read_request rq = query_request(NULL, paths, n, f, t);
    rq.sinks_filtered = 1;   /* the sink gets the selected allocations alone */
    mt_sink sink = {.on_done = row_done, .ctx = r};
    rq.sinks = &sink;
    rq.n_sinks = 1;
    if (!(r->m = mt_read(&rq, err)))
        goto fail;
    if (!rq.sinks_fed) {
        *err = mta_bind_msg("the trace's times go back somewhere: its allocations need the "
                            "whole model", NULL);
        goto fail;
    }
    qsort(r->v, r->n, sizeof *r->v, by_seq);
    b = mta_bind_select_with(r->m, f, filter, t, 1, err);   /* (takes f) */
    f = NULL;
    if (!b)
        goto fail;
    r->allocs = malloc((r->n ? r->n : 1) * sizeof *r->allocs);
    r->sites = malloc((r->n ? r->n : 1) * sizeof *r->sites);
    if (!r->allocs || !r->sites)
        goto fail;
    const mt_selection *s = mt_bind_selection(b);
    const mt_node *nodes = mt_selection_nodes(s);
    for (size_t i = 0; i < r->n; i++) {
        r->allocs[i] = r->v[i].a;
        mt_node_id node = mt_selection_node_of(s, r->v[i].a.stack);
        r->sites[i] = node ? nodes[node].frame : MT_NO_FRAME;
    }
    free(r->v);
    r->v = NULL;
    mt_bind_sel_free(b);
    return r;
fail:
    if (!*err)
        *err = mta_bind_msg("out of memory", NULL);
    mt_bind_sel_free(b);
    mt_bind_rows_free(r);
    mt_filter_free(f);
    return NULL;
}

size_t mt_bind_rows_n(const mt_bind_rows *r)
{
    return r->n;
}

const mt_alloc *mt_bind_rows_allocs(const mt_bind_rows *r)
{
    return r->allocs;
}

const uint32_t *mt_bind_rows_sites(const mt_bind_rows *r)
{
    return r->sites;
}

const mt_model *mt_bind_rows_model(const mt_bind_rows *r)
{
    return r->m;
}

void mt_bind_rows_free(mt_bind_rows *r)
{
    if (!r)
        return;
    mt_model_free(r->m);
    free(r->v);
    free(r->allocs);
    free(r->sites);
    free(r);
}
