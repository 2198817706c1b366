/*
 * big.c - folds for the viewer on big traces (see big.h): one request to
 * the analysis layer's read (a streaming mt_read: this trace, this filter, with
 * its stack clauses applied to the sinks) with the fold's sinks: the
 * engine's streaming accumulators (stats and histograms: memtrace/stream.h)
 * and the downsampled curve (mt_curve_grid), both on the read's summing
 * thread (mt_sink.on_done_apart) while the reading thread goes on folding.
 *
 * The unfiltered read also writes the trace's allocation index (a sink
 * beside them: allocidx.h), or finds one written before; a filter's
 * request then names the index, and the read folds it from there
 * (mt_alloc_index_fold: the same sink calls in the same order, so the same
 * answers) instead of reading the trace.
 */
#include "big.h"

#include <stdlib.h>
#include <string.h>

#include "allocidx.h"
#include "memtrace/stream.h"

struct vfold {
    mt_model *model;
    char *path;                  /* the trace's (the unfiltered fold) */
    vidx *index;                 /* the unfiltered fold: its allocation index, or NULL */
    mt_alloc_index_writer *ixw;  /* while reading: the index being written */
    double bps;
    int profile;                 /* a pprof profile: no allocations to sum */
    mt_curve_grid *grid;         /* the live-memory curve of the allocations that pass */
    mt_stats_acc *acc;           /* while reading */
    /* once read */
    mt_stats stats;
    mt_histogram *hist[2];       /* MT_HIST_SIZE, MT_HIST_LIFETIME */
};

/* The fold's sums (on the read's summing thread). */
static int sums_bind(void *ctx, const mt_model *m)
{
    vfold *v = ctx;
    v->profile = mt_model_profile(m);
    return mt_stats_acc_bind(v->acc, m);
}

static int sums_add(void *ctx, const mt_alloc *a, mt_timedelta end, uint64_t seq)
{
    vfold *v = ctx;
    (void)seq;
    if (v->profile)
        return 0; /* a pprof profile: per-stack costs only, no allocations to sum */
    if (mt_stats_acc_add_bound(v->acc, a, end) < 0)
        return -1;
    mt_curve_grid_add(v->grid, a->time, a->collect, a->n_samples);
    return 0;
}

/* The index being written (the unfiltered read: every allocation). */
static int index_add(void *ctx, const mt_alloc *a, mt_timedelta end, uint64_t seq)
{
    (void)end;
    mt_alloc_index_writer_add(ctx, a, seq);   /* (a failed write shows when it is finished) */
    return 0;
}

static void quiet_warning(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
}

static vfold *fold_new(void)
{
    vfold *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->grid = mt_curve_grid_new();
    v->acc = mt_stats_acc_new(MT_TIME_END);
    if (!v->grid || !v->acc) {
        vfold_free(v);
        return NULL;
    }
    return v;
}

/* The request both folded reads of one trace share: path folded and
 * streamed into sinks[0..n) with filter f, live:peak's time from base's
 * model, from index ix (base's) when there is one. */
static mt_read_request fold_request(const char *const *path, const mt_filter *f,
                                    const vfold *base, const mt_alloc_index *ix,
                                    const mt_sink *sinks, size_t n)
{
    int peak = f && mt_filter_uses_peak(f) && base;
    return (mt_read_request){
        .paths = path,
        .n = 1,
        .fold = 1,
        .stream = 1,
        .filter = f,
        .live_at = MT_TIME_END,
        .peak_known = peak,
        .peak = peak ? mt_model_peak_time(base->model) : 0,
        .sinks = sinks,
        .n_sinks = n,
        .index = ix,
        .index_base = ix ? base->model : NULL,
    };
}

/* Reads fold v of path with filter f (base: the unfiltered fold, for
 * live:peak; ix: the index to fold from, or NULL). Returns 0, or -1 with
 * *err as vfold_load. */
static int fold_read(vfold *v, const char *path, const mt_filter *f, const vfold *base,
                     const mt_alloc_index *ix, mt_progress_fn progress, void *pctx,
                     mt_warning_fn warn, void *warn_ctx, char **err)
{
    mt_sink sinks[2] = {
        {.on_done_apart = sums_add, .on_bind = sums_bind, .ctx = v},
        {.on_done_apart = index_add, .ctx = v->ixw},
    };
    mt_read_request rq = fold_request(&path, f, base, ix, sinks, v->ixw ? 2 : 1);
    rq.on_warning = warn;
    rq.warning_ctx = warn_ctx;
    rq.on_progress = progress;
    rq.progress_ctx = pctx;
    rq.sinks_filtered = 1;
    mt_model *m = mt_read(&rq, err);
    if (v->index) {   /* (the read is over: nothing writes the index now) */
        v->ixw = NULL;
        vidx_end(v->index, m);
    }
    if (m && mt_stats_acc_finish(v->acc, m, &v->stats, &v->hist[0], &v->hist[1]) < 0) {
        mt_model_free(m);
        m = NULL;
    }
    mt_stats_acc_free(v->acc);
    v->acc = NULL;
    if (!m)
        return -1;
    v->model = m;
    v->bps = mt_model_bytes_per_sample(m);
    mt_curve_grid_finish(v->grid, mt_model_info(m)->sample_rate);
    return 0;
}

vfold *vfold_load(const char *path, const mt_filter *f, const vfold *base, int index,
                  mt_progress_fn progress, void *progress_ctx, mt_warning_fn warn,
                  void *warn_ctx, char **err)
{
    *err = NULL;
    if (f && mt_filter_uses_peak(f) && !base) {
        *err = strdup("live:peak needs the trace's peak (internal: no base fold)");
        return NULL;
    }
    vfold *v = fold_new();
    if (!v)
        return NULL;
    if (!base && !(v->path = strdup(path))) {
        vfold_free(v);
        return NULL;
    }
    if (index && !f && !base && !mt_path_is_profile(path)) { /* (a profile: no allocations to index) */
        v->index = vidx_begin(path);
        v->ixw = vidx_writer(v->index);
    }
    if (fold_read(v, path, f, base, NULL, progress, progress_ctx, warn, warn_ctx, err) < 0) {
        vfold_free(v);
        return NULL;
    }
    return v;
}

void vfold_report_index(const vfold *base)
{
    vidx_report(base->index);
}

/* The fold of filter f from base's allocation index, without reading the
 * trace: the same answers as vfold_load. progress: bytes of the index.
 * NULL with *broken = 1 when there is no index or it proved damaged (it
 * is then dropped: read the trace instead), else NULL as vfold_load. */
static vfold *fold_indexed(const vfold *base, const mt_filter *f, mt_progress_fn progress,
                           void *progress_ctx, char **err, int *broken)
{
    *err = NULL;
    *broken = 0;
    const mt_alloc_index *ix = vidx_get(base->index);
    if (!ix) {
        *broken = 1;
        return NULL;
    }
    vfold *v = fold_new();
    if (!v)
        return NULL;
    /* (the trace is not read: the request names the index) */
    if (fold_read(v, base->path, f, base, ix, progress, progress_ctx, quiet_warning, NULL,
                  err) < 0) {
        if (*err && !strncmp(*err, "allocation index:", 17)) {
            vidx_broken(base->index, *err + 18);
            *broken = 1;
            free(*err);
            *err = NULL;
        }
        vfold_free(v);
        return NULL;
    }
    return v;
}

mt_model *vfold_read(const vfold *base, const mt_filter *f, const mt_sink *sinks, size_t n,
                     int sinks_filtered, char **err)
{
    *err = NULL;
    const mt_alloc_index *ix = vidx_get(base->index);
    const char *path = base->path;
    mt_read_request rq = fold_request(&path, f, base, ix, sinks, n);
    rq.on_warning = quiet_warning;
    rq.sinks_filtered = sinks_filtered;
    mt_model *m = mt_read(&rq, err);
    if (!m && ix && *err && !strncmp(*err, "allocation index:", 17)) {
        /* a damaged index: the trace itself */
        free(*err);
        *err = NULL;
        rq.index = NULL;
        rq.index_base = NULL;
        m = mt_read(&rq, err);
    }
    if (m && (mt_model_n_nodes(m) < mt_model_n_nodes(base->model) ||
              mt_model_end(m) != mt_model_end(base->model))) {
        mt_model_free(m);   /* not the trace base read: the file changed */
        m = NULL;
        *err = strdup("the trace file changed since it was loaded: restart the viewer to see "
                      "the new trace");
    }
    return m;
}

vfold *vfold_refold(const vfold *base, const mt_filter *f, int (*unchanged)(void *ctx),
                    void *uctx, mt_progress_fn progress, void *progress_ctx, char **err,
                    int *changed)
{
    *err = NULL;
    *changed = 0;
    /* from the allocation index (about the trace as loaded, whatever
     * became of the file since), else from the trace */
    int broken = 1;
    vfold *v = NULL;
    if (vidx_get(base->index))
        v = fold_indexed(base, f, progress, progress_ctx, err, &broken);
    if (!v && broken) {
        if (!unchanged(uctx)) {
            *changed = 1;
            return NULL;
        }
        v = vfold_load(base->path, f, base, 0, progress, progress_ctx, quiet_warning, NULL, err);
        if (v && !unchanged(uctx)) {
            vfold_free(v);
            *changed = 1;
            return NULL;
        }
    }
    return v;
}

void vfold_free(vfold *v)
{
    if (!v)
        return;
    mt_model_free(v->model);
    vidx_free(v->index);
    free(v->path);
    mt_histogram_free(v->hist[0]);
    mt_histogram_free(v->hist[1]);
    mt_stats_acc_free(v->acc);
    mt_curve_grid_free(v->grid);
    free(v);
}

const mt_model *vfold_model(const vfold *v)
{
    return v->model;
}

size_t vfold_bytes(const vfold *v)
{
    return sizeof *v + mt_curve_grid_bytes() + mt_model_memory(v->model);
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
    if (mt_curve_grid_curve(base->grid, c->t0, c->width, c->n, base->bps, c->total, NULL) < 0 ||
        mt_curve_grid_curve(v->grid, c->t0, c->width, c->n, v->bps, c->filtered,
                            c->filtered_alloc) < 0) {
        mt_curve_free(c);
        return NULL;
    }
    const mt_model *bm = base->model;
    put_peak(c, c->total, mt_model_peak_time(bm), mt_model_peak_bytes(bm));
    if (v == base) {
        c->peak_filtered = mt_model_peak_bytes(bm);
        c->peak_filtered_time = mt_model_peak_time(bm);
        mt_model_peak(bm, &c->peak_filtered_est);
        put_peak(c, c->filtered, c->peak_filtered_time, c->peak_filtered);
    } else {
        c->peak_filtered = (double)mt_curve_grid_peak(v->grid, &c->peak_filtered_time,
                                                      &c->peak_filtered_est) * v->bps;
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
        mt_curve_grid_peak(v->grid, &o->peak_filtered_time, &o->peak_filtered);
        mt_peak_scale(&o->peak_filtered, v->bps);
        o->peak_filtered_bytes = o->peak_filtered.bytes;
    }
}
