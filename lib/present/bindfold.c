/*
 * bindfold.c - the binding's queries of big traces (memtrace/bind.h, "big
 * traces"): each one a folded read of mt_read for its filter and time
 * instead of a selection of the whole model; the curve fed in file order
 * (the same buckets as mt_query_curve), the statistics from the engine's
 * accumulator, the allocations that pass a filter kept alone.
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
/* The curve                                                                 */
/*
 * A filter that leaves allocations out is read first, folded with the
 * filter (its stack clauses, live:peak...), into one bit per selected
 * allocation; then the events in file order into the curve: by the codec
 * alone for one file (mt_scan_events), by a folded read of the merged
 * stream for several.
 */

typedef struct curve_run {
    mt_curve_acc *acc;
    uint64_t *bits;          /* the selected allocations by index; NULL: all */
    size_t n_bits;
} curve_run;

static int set_bit(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    (void)m;
    (void)a;
    curve_run *r = ctx;
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

static int curve_event(void *ctx, mt_timedelta t, uint64_t seq, uint64_t samples, int collect,
                       mt_timedelta alloc_time)
{
    (void)alloc_time;
    curve_run *r = ctx;
    int p = !r->bits || (seq / 64 < r->n_bits && (r->bits[seq / 64] >> (seq % 64) & 1));
    int64_t d = collect ? -(int64_t)samples : (int64_t)samples;
    mt_curve_acc_event(r->acc, t, d, p ? d : 0, p && !collect ? samples : 0);
    return 0;
}

static int curve_alloc(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    (void)m;
    return curve_event(ctx, a->time, seq, a->n_samples, 0, a->time);
}

static int curve_done(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    (void)m;
    if (a->collect == MT_TIME_NEVER)
        return 0;   /* live at the end: no event */
    return curve_event(ctx, a->collect, seq, a->n_samples, 1, a->time);
}

/* A folded read of the traces for sink (filter f; NULL: all, shallow
 * stacks). 0, or -1 with *err. */
static int curve_read(const mt_model *base, const char *const *paths, size_t n,
                      const mt_filter *f, const mt_sink *sink, char **err)
{
    mt_read_request rq = query_request(base, paths, n, f, MT_TIME_END);
    rq.max_depth = f && mt_filter_uses_stacks(f) ? 0 : 1;
    rq.sinks = sink;
    rq.n_sinks = 1;
    rq.sinks_filtered = 1;
    mt_model *m = mt_read(&rq, err);
    if (m && (!rq.sinks_fed || !mt_model_peak_known(m))) {
        *err = mta_bind_msg("the trace's times go back somewhere: its curve needs the whole "
                            "model", NULL);
        mt_model_free(m);
        return -1;
    }
    int ok = m != NULL;
    mt_model_free(m);
    return ok ? 0 : -1;
}

/* The events of every allocation into r->acc, in file order. 0, or -1
 * with *err. */
static int curve_draw(curve_run *r, const mt_model *base, const char *const *paths, size_t n,
                      char **err)
{
    if (n == 1) {
        mt_scan_result res;
        return mt_scan_events(paths[0], curve_event, r, NULL, NULL, &res, err);
    }
    mt_sink draw = {.on_alloc = curve_alloc, .on_done = curve_done, .ctx = r};
    return curve_read(base, paths, n, NULL, &draw, err);
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
    curve_run r = {0};
    size_t k = 0;
    mt_curve *c = NULL;
    mt_stream_filter *sf = mt_stream_filter_new(f, 0);
    r.acc = mt_curve_acc_new(buckets + 1, width);
    if (!sf || !r.acc)
        goto out;
    if (!mt_stream_filter_keeps_all(sf)) {
        /* which allocations pass: a bit each */
        mt_sink note = {.on_done = set_bit, .ctx = &r};
        if (curve_read(base, paths, n, f, &note, err) < 0)
            goto out;
        if (!r.bits && set_bit(&r, 0, NULL, 0) == 0)
            r.bits[0] = 0;   /* none passes */
        if (!r.bits)
            goto out;
    }
    if (curve_draw(&r, base, paths, n, err) < 0)
        goto out;
    c = mt_curve_acc_result(r.acc, mt_model_bytes_per_sample(base),
                            mt_model_info(base)->sample_rate);
    for (; c && k < buckets && k < c->n; k++) {
        time[k] = c->time[k];
        total[k] = c->total[k];
        filtered[k] = c->filtered[k];
    }
out:
    if (!k && !*err)
        *err = mta_bind_msg("out of memory", NULL);
    mt_curve_free(c);
    mt_curve_acc_free(r.acc);
    mt_stream_filter_free(sf);
    mt_filter_free(f);
    free(r.bits);
    return k;
}

/* ------------------------------------------------------------------------ */
/* Statistics                                                                */
/*
 * The selected allocations into the engine's stats accumulator as a read
 * folded with the filter gives them (and, when the filter leaves some out,
 * a bit each); then, for those, their own peak from a curve of one bucket
 * drawn as the curve above: the figures of mt_query_stats.
 */

typedef struct stats_run {
    mt_stats_acc *acc;
    curve_run *marks;        /* NULL: everything passes */
} stats_run;

static int stats_done(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    stats_run *r = ctx;
    if (mt_stats_acc_add(r->acc, m, a) < 0)
        return -1;
    return r->marks ? set_bit(r->marks, m, a, seq) : 0;
}

static int write_stats(FILE *out, const mt_model *m, const mt_stats *st, const mt_histogram *hs,
                       const mt_histogram *hl, mt_timedelta live_at)
{
    return mt_report_stats_figures(out, m, st, hs, hl, mt_model_resolve_time(m, live_at), NULL, 1);
}

char *mt_bind_stats_read(const mt_model *base, const char *const *paths, size_t n,
                         const char *filter, const char *at, char **err)
{
    mt_filter *f;
    mt_timedelta t;
    if (mta_bind_parse(filter, at, &f, &t, err) < 0)
        return NULL;
    mt_timedelta live_at = t == MT_TIME_PEAK ? mt_model_peak_time(base) : t;
    curve_run marks = {0};
    stats_run r = {mt_stats_acc_new(live_at), NULL};
    mt_stream_filter *sf = mt_stream_filter_new(f, 0);
    mt_model *m = NULL;
    mt_histogram *hs = NULL, *hl = NULL;
    mt_curve *c = NULL;
    char *text = NULL;
    size_t len = 0;
    mt_stats st;
    if (!r.acc || !sf)
        goto out;
    if (!mt_stream_filter_keeps_all(sf))
        r.marks = &marks;
    mt_read_request rq = query_request(base, paths, n, f, MT_TIME_END);
    rq.max_depth = mt_filter_uses_stacks(f) ? 0 : 1;
    mt_sink sink = {.on_done = stats_done, .ctx = &r};
    rq.sinks = &sink;
    rq.n_sinks = 1;
    rq.sinks_filtered = 1;   /* the selected allocations alone */
    if (!(m = mt_read(&rq, err)))
        goto out;
    if (!rq.sinks_fed) {
        *err = mta_bind_msg("the trace's times go back somewhere: its statistics need the "
                            "whole model", NULL);
        goto out;
    }
    if (mt_stats_acc_finish(r.acc, m, &st, &hs, &hl) < 0)
        goto out;
    if (st.total.allocs != st.allocs) {
        /* the selected allocations' own peak */
        if (!marks.bits && set_bit(&marks, m, NULL, 0) == 0)
            marks.bits[0] = 0;   /* none passes */
        if (!marks.bits || !(marks.acc = mt_curve_acc_new(1, 1)) ||
            curve_draw(&marks, base, paths, n, err) < 0 ||
            !(c = mt_curve_acc_result(marks.acc, 1.0, mt_model_info(m)->sample_rate)))
            goto out;
        st.peak_filtered = c->peak_filtered_est;
        mt_peak_scale(&st.peak_filtered, mt_model_bytes_per_sample(m));
        st.peak_filtered_bytes = st.peak_filtered.bytes;
        st.peak_filtered_time = c->peak_filtered_time;
    }
    FILE *out = open_memstream(&text, &len);
    if (!out)
        goto out;
    int rc = write_stats(out, m, &st, hs, hl, live_at);
    if (fclose(out) != 0 || rc < 0) {
        free(text);
        text = NULL;
    }
out:
    if (!text && !*err)
        *err = mta_bind_msg("out of memory", NULL);
    mt_curve_free(c);
    mt_curve_acc_free(marks.acc);
    free(marks.bits);
    mt_histogram_free(hs);
    mt_histogram_free(hl);
    mt_model_free(m);
    mt_stream_filter_free(sf);
    mt_stats_acc_free(r.acc);
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
