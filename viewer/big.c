/*
 * big.c - folds for the viewer on big traces (see big.h): one folded read
 * of the trace, with an on_fold hook that hands every allocation that
 * passes the filter to the engine's streaming accumulators (stats and
 * histograms: memtrace/stream.h) and to the downsampled curve (grid.h).
 * Stack clauses (inside:) are decided per allocation as it is folded
 * (mt_stream_filter), so every filter takes one read. The sums run on a
 * second thread (feed.h) while the reading thread goes on folding.
 *
 * The unfiltered read also writes the trace's allocation index (on the
 * summing thread: allocidx.h), or finds one written before; a filter is
 * then folded from the index (mt_alloc_index_fold, the same on_fold hook
 * and the same order, so the same answers) instead of read from the trace.
 */
#include "big.h"

#include <stdlib.h>
#include <string.h>

#include "allocidx.h"
#include "feed.h"
#include "grid.h"
#include "memtrace/stream.h"

struct vfold {
    mt_model *model;
    int shares_trie;             /* model folded from the index: base's trie */
    vidx *index;                 /* the unfiltered fold: its allocation index, or NULL */
    mt_alloc_index_writer *ixw;  /* while reading: the index being written */
    double bps;
    vgrid grid;
    /* while reading */
    mt_stream_filter *sf;        /* the filter's stack clauses, or NULL */
    mt_stats_acc *acc;
    vfeed *feed;                 /* acc and grid summed on a second thread, or NULL */
    int bound;                   /* acc bound to the model's constants */
    char *err;                   /* why on_fold stopped the read */
    /* once read */
    mt_stats stats;
    mt_histogram *hist[2];       /* MT_HIST_SIZE, MT_HIST_LIFETIME */
};

static int on_fold(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    vfold *v = ctx;
    if (mt_model_profile(m))
        return 0; /* a pprof profile: per-stack costs only, no allocations to sum */
    if (v->sf) {
        int pass = mt_stream_filter_passes(v->sf, m, a, &v->err);
        if (pass < 0)
            return -1;
        if (!pass)
            return 0;
    }
    if (v->feed) {
        if (!v->bound) {   /* before the first batch is handed over */
            if (mt_stats_acc_bind(v->acc, m) < 0)
                return -1;
            v->bound = 1;
        }
        return vfeed_put(v->feed, a, mt_model_end(m), seq);
    }
    if (v->ixw)   /* (a failed write shows when the index is finished) */
        mt_alloc_index_writer_add(v->ixw, a, seq);
    if (mt_stats_acc_add(v->acc, m, a) < 0)
        return -1;
    vgrid_add(&v->grid, a->time, a->collect, a->n_samples);
    return 0;
}

/* On the feed's thread: what on_fold does inline without it. */
static int sum_batch(void *ctx, const vfeed_rec *r, size_t n)
{
    vfold *v = ctx;
    if (v->ixw)
        for (size_t i = 0; i < n; i++)
            mt_alloc_index_writer_add(v->ixw, &r[i].a, r[i].seq);
    for (size_t i = 0; i < n; i++) {
        if (mt_stats_acc_add_bound(v->acc, &r[i].a, r[i].end) < 0)
            return -1;
        vgrid_add(&v->grid, r[i].a.time, r[i].a.collect, r[i].a.n_samples);
    }
    return 0;
}

static void quiet_warning(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
}

/* What a fold sums besides the model: set up before it (filter f, the
 * peak live:peak stands for). Returns 0, or -1 when out of memory. */
static int sums_begin(vfold *v, const mt_filter *f, mt_timedelta peak)
{
    if (f && mt_filter_uses_stacks(f)) {
        v->sf = mt_stream_filter_new(f, peak);
        if (!v->sf)
            return -1;
        if (mt_stream_filter_keeps_all(v->sf)) {   /* hide: only */
            mt_stream_filter_free(v->sf);
            v->sf = NULL;
        }
    }
    v->acc = mt_stats_acc_new(MT_TIME_END);
    if (!v->acc)
        return -1;
    /* the route one-thread (tests: mt_read_force): sum on the reading thread */
    if (!(mt_read_forced() & MT_ROUTE_ONE_THREAD))
        v->feed = vfeed_start(sum_batch, v);
    return 0;
}

/* The summing thread's end: m the folded model or NULL (*err set).
 * Returns m, or NULL (m freed with model_free) when the thread failed. */
static mt_model *join_feed(vfold *v, mt_model *m, void (*model_free)(mt_model *), char **err)
{
    if (v->feed) {
        int rc = vfeed_finish(v->feed);
        v->feed = NULL;
        if (rc < 0) {   /* out of memory on the summing thread */
            model_free(m);
            m = NULL;
            free(*err);
            *err = NULL;
        }
    }
    return m;
}

/* ... and after it: m the folded model or NULL (*err set). Returns m, or
 * NULL (freeing m with model_free). */
static mt_model *sums_end(vfold *v, mt_model *m, void (*model_free)(mt_model *), char **err)
{
    m = join_feed(v, m, model_free, err);
    if (!m && v->err) {   /* the hook's reason, rather than "stopped by the caller" */
        free(*err);
        *err = v->err;
        v->err = NULL;
    }
    if (m && mt_stats_acc_finish(v->acc, m, &v->stats, &v->hist[0], &v->hist[1]) < 0) {
        model_free(m);
        m = NULL;
    }
    if (m)
        v->bps = mt_model_bytes_per_sample(m);
    mt_stats_acc_free(v->acc);
    v->acc = NULL;
    mt_stream_filter_free(v->sf);
    v->sf = NULL;
    return m;
}

static mt_timedelta peak_for(const mt_filter *f, const vfold *base)
{
    return f && mt_filter_uses_peak(f) && base ? mt_model_peak_time(base->model) : 0;
}

/* The folded read of path into v. */
static mt_model *read_folded(vfold *v, const char *path, const mt_filter *f, const vfold *base,
                             mt_progress_fn progress, void *pctx, int quiet, char **err)
{
    mt_model_options mo = {0};
    if (quiet)
        mo.on_warning = quiet_warning;
    mo.on_progress = progress;
    mo.progress_ctx = pctx;
    mo.fold = 1;
    mo.fold_filter = f;
    mo.fold_live_at = MT_TIME_END;
    mt_timedelta peak = peak_for(f, base);
    if (f && mt_filter_uses_peak(f) && base) {
        mo.fold_peak_known = 1;
        mo.fold_peak = peak;
    }
    mo.on_fold = on_fold;
    mo.fold_ctx = v;
    if (sums_begin(v, f, peak) < 0)
        return NULL;
    mt_model *m = mt_model_load(path, &mo, err);
    if (v->index) {
        /* (the summing thread is done with the writer once joined) */
        m = join_feed(v, m, mt_model_free, err);
        v->ixw = NULL;
        vidx_end(v->index, m);
    }
    return sums_end(v, m, mt_model_free, err);
}

vfold *vfold_load(const char *path, const mt_filter *f, const vfold *base, int index,
                  mt_progress_fn progress, void *progress_ctx, int quiet, char **err)
{
    *err = NULL;
    if (f && mt_filter_uses_peak(f) && !base) {
        *err = strdup("live:peak needs the trace's peak (internal: no base fold)");
        return NULL;
    }
    vfold *v = calloc(1, sizeof *v);
    if (!v || vgrid_init(&v->grid) < 0) {
        free(v);
        return NULL;
    }
    if (index && !f && !base) {
        v->index = vidx_begin(path);
        v->ixw = vidx_writer(v->index);
    }
    v->model = read_folded(v, path, f, base, progress, progress_ctx, quiet, err);
    if (!v->model) {
        vfold_free(v);
        return NULL;
    }
    vgrid_finish(&v->grid, mt_model_info(v->model)->sample_rate);
    return v;
}

static void unshared_free(mt_model *m)
{
    mt_alloc_index_model_free(m);
}

void vfold_report_index(const vfold *base)
{
    vidx_report(base->index);
}

int vfold_indexed(const vfold *base)
{
    return vidx_get(base->index) != NULL;
}

vfold *vfold_from_index(const vfold *base, const mt_filter *f, mt_progress_fn progress,
                        void *progress_ctx, char **err, int *broken)
{
    *err = NULL;
    *broken = 0;
    const mt_alloc_index *ix = vidx_get(base->index);
    if (!ix) {
        *broken = 1;
        return NULL;
    }
    vfold *v = calloc(1, sizeof *v);
    if (!v || vgrid_init(&v->grid) < 0) {
        free(v);
        return NULL;
    }
    mt_alloc_index_fold_options o = {0};
    o.filter = f;
    o.peak = peak_for(f, base);
    o.on_fold = on_fold;
    o.ctx = v;
    o.progress = progress;
    o.progress_ctx = progress_ctx;
    mt_model *m = NULL;
    if (sums_begin(v, f, o.peak) == 0) {
        m = mt_alloc_index_fold(ix, base->model, &o, err);
        if (!m && *err && !strncmp(*err, "allocation index:", 17)) {
            vidx_broken(base->index, *err + 18);
            *broken = 1;
        }
    }
    v->model = sums_end(v, m, unshared_free, err);
    v->shares_trie = 1;
    if (!v->model) {
        if (*broken) {
            free(*err);
            *err = NULL;
        }
        vfold_free(v);
        return NULL;
    }
    vgrid_finish(&v->grid, mt_model_info(v->model)->sample_rate);
    return v;
}

void vfold_free(vfold *v)
{
    if (!v)
        return;
    if (v->shares_trie)
        mt_alloc_index_model_free(v->model);
    else
        mt_model_free(v->model);
    vidx_free(v->index);
    mt_histogram_free(v->hist[0]);
    mt_histogram_free(v->hist[1]);
    mt_stats_acc_free(v->acc);
    mt_stream_filter_free(v->sf);
    free(v->err);
    vgrid_free(&v->grid);
    free(v);
}

const mt_model *vfold_model(const vfold *v)
{
    return v->model;
}

size_t vfold_bytes(const vfold *v)
{
    if (v->shares_trie)
        return sizeof *v + vgrid_bytes() + mt_alloc_index_model_memory(v->model);
    return sizeof *v + vgrid_bytes() + mt_model_memory(v->model);
}

/* The exact peak, where a whole curve has it, into a downsampled one. */
static void put_peak(const mt_curve *c, double *vals, mt_timedelta t, double bytes)
{
    if (t < c->t0)
        return;
    size_t b = (size_t)((t - c->t0) / c->width);
    if (b < c->n && bytes > vals[b])
        vals[b] = bytes;
}

mt_curve *vfold_curve(const vfold *v, const vfold *base, mt_timedelta t0, mt_timedelta t1,
                      size_t n)
{
    mt_curve *c = mt_curve_span(v->model, t0, t1, n);
    if (!c)
        return NULL;
    vgrid_curve(&base->grid, c->t0, c->width, c->n, base->bps, c->total, NULL);
    vgrid_curve(&v->grid, c->t0, c->width, c->n, v->bps, c->filtered, c->filtered_alloc);
    const mt_model *bm = base->model;
    put_peak(c, c->total, mt_model_peak_time(bm), mt_model_peak_bytes(bm));
    if (v == base) {
        c->peak_filtered = mt_model_peak_bytes(bm);
        c->peak_filtered_time = mt_model_peak_time(bm);
        mt_model_peak(bm, &c->peak_filtered_est);
        put_peak(c, c->filtered, c->peak_filtered_time, c->peak_filtered);
    } else {
        c->peak_filtered = (double)v->grid.peak * v->bps;
        c->peak_filtered_time = v->grid.peak_time;
        c->peak_filtered_est = v->grid.peak_est;
        mt_peak_scale(&c->peak_filtered_est, v->bps);
    }
    return c;
}

mt_histogram *vfold_histogram(const vfold *v, mt_hist_kind kind)
{
    const mt_histogram *o = v->hist[kind];
    mt_histogram *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    *h = *o;
    h->lo = malloc(o->n * sizeof *h->lo);
    h->hi = malloc(o->n * sizeof *h->hi);
    h->cost = malloc(o->n * sizeof *h->cost);
    h->by_source = malloc(o->n * 3 * sizeof *h->by_source);
    if (!h->lo || !h->hi || !h->cost || !h->by_source) {
        mt_histogram_free(h);
        return NULL;
    }
    memcpy(h->lo, o->lo, o->n * sizeof *h->lo);
    memcpy(h->hi, o->hi, o->n * sizeof *h->hi);
    memcpy(h->cost, o->cost, o->n * sizeof *h->cost);
    memcpy(h->by_source, o->by_source, o->n * 3 * sizeof *h->by_source);
    return h;
}

void vfold_stats(const vfold *v, const vfold *base, const mt_selection *sel, mt_stats *o)
{
    (void)sel;
    *o = v->stats;
    mt_model_peak(base->model, &o->peak);
    o->peak_bytes = o->peak.bytes;
    o->peak_time = mt_model_peak_time(base->model);
    if (v == base) {
        o->peak_filtered_bytes = o->peak_bytes;
        o->peak_filtered_time = o->peak_time;
        o->peak_filtered = o->peak;
    } else {
        o->peak_filtered = v->grid.peak_est;
        mt_peak_scale(&o->peak_filtered, v->bps);
        o->peak_filtered_bytes = o->peak_filtered.bytes;
        o->peak_filtered_time = v->grid.peak_time;
    }
}
