/*
 * big.c - folds for the viewer on big traces (see big.h): one folded read
 * of the trace, with an on_fold hook that sums, for every allocation that
 * passes the filter, its curve, histogram and lifetime figures the same way
 * the engine's whole-model queries do (hist.c, mt_query_stats).
 */
#include "big.h"

#include <stdlib.h>
#include <string.h>

#include "grid.h"

#define HIST_BUCKETS 66
/* Lifetimes for the median: exact below 64 us, then 64 buckets per power
 * of two (the lower bound of a bucket is within 1/64 of its values). */
#define LIFE_SUB 64
#define LIFE_FINE (LIFE_SUB + 58 * LIFE_SUB)

struct vfold {
    mt_model *model;
    const uint8_t *verdict;      /* second read: model node passes inside:, or NULL */
    size_t n_verdict;
    double bps;
    vgrid grid;
    mt_cost hist[2][HIST_BUCKETS];          /* MT_HIST_SIZE, MT_HIST_LIFETIME */
    mt_cost hist_src[2][HIST_BUCKETS * 3];
    size_t hist_n[2];
    mt_cost never;               /* lifetime histogram: never collected */
    mt_cost by_source[3];
    uint64_t samples;
    double promoted_bytes, collected_bytes, never_bytes, life_sum, life_w;
    uint64_t life_fine[LIFE_FINE];
};

static size_t hist_bucket(uint64_t v)
{
    return v == 0 ? 0 : (size_t)(64 - __builtin_clzll(v));
}

static size_t life_bucket(uint64_t v)
{
    if (v < LIFE_SUB)
        return (size_t)v;
    int e = 63 - __builtin_clzll(v);    /* >= 6 */
    return LIFE_SUB + (size_t)(e - 6) * LIFE_SUB + (size_t)((v >> (e - 6)) & (LIFE_SUB - 1));
}

static uint64_t life_bucket_low(size_t b)
{
    if (b < LIFE_SUB)
        return b;
    size_t e = (b - LIFE_SUB) / LIFE_SUB + 6, mant = (b - LIFE_SUB) % LIFE_SUB;
    return ((uint64_t)LIFE_SUB + mant) << (e - 6);
}

static void cost_add(mt_cost *d, const mt_cost *s)
{
    d->alloc_bytes += s->alloc_bytes;
    d->alloc_objects += s->alloc_objects;
    d->live_bytes += s->live_bytes;
    d->live_objects += s->live_objects;
    d->samples += s->samples;
    d->live_samples += s->live_samples;
    d->allocs += s->allocs;
    d->temp_bytes += s->temp_bytes;
    d->temp_objects += s->temp_objects;
    d->temp_samples += s->temp_samples;
}

static int on_fold(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    (void)seq;
    vfold *v = ctx;
    if (!v->bps)
        v->bps = mt_model_bytes_per_sample(m);
    if (v->verdict && (a->stack >= v->n_verdict || !v->verdict[a->stack]))
        return 0;
    /* its cost with live measured at the end, as mta_cost_of */
    mt_cost c = {0};
    int never = a->collect == MT_TIME_NEVER;
    int temp = !never && a->collect - a->time < MT_TEMPORARY_US;
    c.alloc_bytes = (double)a->n_samples * v->bps;
    c.alloc_objects = mt_alloc_objects(m, a);
    c.samples = a->n_samples;
    c.allocs = 1;
    if (never) {
        c.live_bytes = c.alloc_bytes;
        c.live_objects = c.alloc_objects;
        c.live_samples = a->n_samples;
    }
    if (temp) {
        c.temp_bytes = c.alloc_bytes;
        c.temp_objects = c.alloc_objects;
        c.temp_samples = a->n_samples;
    }
    unsigned src = a->source < 3 ? a->source : 2;
    mt_timedelta end = never ? mt_model_end(m) : a->collect;
    uint64_t life = end > a->time ? (uint64_t)(end - a->time) : 0;
    for (int k = 0; k < 2; k++) {
        size_t b = hist_bucket(k == MT_HIST_SIZE ? a->size : life);
        cost_add(&v->hist[k][b], &c);
        cost_add(&v->hist_src[k][b * 3 + src], &c);
        if (b + 1 > v->hist_n[k])
            v->hist_n[k] = b + 1;
    }
    if (never)
        cost_add(&v->never, &c);
    cost_add(&v->by_source[src], &c);
    v->samples += a->n_samples;
    if (a->promote != MT_TIME_NEVER)
        v->promoted_bytes += c.alloc_bytes;
    if (never) {
        v->never_bytes += c.alloc_bytes;
    } else {
        v->collected_bytes += c.alloc_bytes;
        v->life_sum += (double)(a->collect - a->time) * (double)a->n_samples;
        v->life_w += (double)a->n_samples;
    }
    v->life_fine[life_bucket(life)] += a->n_samples;
    vgrid_add(&v->grid, a->time, a->collect, a->n_samples);
    return 0;
}

static void quiet_warning(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
}

/* One folded read into v (summaries zeroed first). */
static mt_model *read_folded(vfold *v, const char *path, const mt_filter *f, const vfold *base,
                             mt_progress_fn progress, void *pctx, int quiet, char **err)
{
    vgrid g = v->grid;
    memset(&g.delta[0], 0, VGRID_BUCKETS * sizeof *g.delta);
    memset(&g.alloc[0], 0, VGRID_BUCKETS * sizeof *g.alloc);
    g.width = 1;
    g.used = 0;
    const uint8_t *verdict = v->verdict;
    size_t n_verdict = v->n_verdict;
    memset(v, 0, sizeof *v);
    v->grid = g;
    v->verdict = verdict;
    v->n_verdict = n_verdict;
    mt_model_options mo = {0};
    if (quiet)
        mo.on_warning = quiet_warning;
    mo.on_progress = progress;
    mo.progress_ctx = pctx;
    mo.fold = 1;
    mo.fold_filter = f;
    mo.fold_live_at = MT_TIME_END;
    if (f && mt_filter_uses_peak(f) && base) {
        mo.fold_peak_known = 1;
        mo.fold_peak = mt_model_peak_time(base->model);
    }
    mo.on_fold = on_fold;
    mo.fold_ctx = v;
    return mt_model_load(path, &mo, err);
}

/* Progress of a load in two reads: each counts for half. */
struct halves {
    mt_progress_fn fn;
    void *ctx;
    int second;
};

static void half_progress(void *ctx, uint64_t done, uint64_t total)
{
    struct halves *h = ctx;
    if (h->fn)
        h->fn(h->ctx, (h->second ? total : 0) / 2 + done / 2, total);
}

vfold *vfold_load(const char *path, const mt_filter *f, const vfold *base,
                  mt_progress_fn progress, void *progress_ctx, int quiet, char **err)
{
    struct halves h = {progress, progress_ctx, 0};
    if (f && mt_filter_uses_stacks(f)) {
        progress = half_progress;
        progress_ctx = &h;
    }
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
    v->model = read_folded(v, path, f, base, progress, progress_ctx, quiet, err);
    if (v->model && f && mt_filter_uses_stacks(f)) {
        /* inside: is decided per stack once the stacks are known: read
         * again, summing only the allocations of the stacks that pass */
        mt_selection *s = mt_select_sites(v->model, f, MT_TIME_END, NULL, err);
        const uint8_t *ok = s ? mt_selection_fold_verdicts(s) : NULL;
        if (!s) {
            mt_model_free(v->model);
            v->model = NULL;
        } else if (ok) {
            size_t n = mt_model_n_nodes(v->model);
            uint8_t *copy = malloc(n ? n : 1);
            mt_model_free(v->model);
            v->model = NULL;
            if (copy) {
                memcpy(copy, ok, n);
                v->verdict = copy;
                v->n_verdict = n;
                h.second = 1;
                v->model = read_folded(v, path, f, base, progress, progress_ctx, 1, err);
            }
        }
        mt_selection_free(s);
    }
    if (!v->model) {
        vfold_free(v);
        return NULL;
    }
    vgrid_finish(&v->grid);
    return v;
}

void vfold_free(vfold *v)
{
    if (!v)
        return;
    mt_model_free(v->model);
    free((void *)v->verdict);
    vgrid_free(&v->grid);
    free(v);
}

const mt_model *vfold_model(const vfold *v)
{
    return v->model;
}

size_t vfold_bytes(const vfold *v)
{
    return sizeof *v + vgrid_bytes() + mt_model_memory(v->model) + v->n_verdict;
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
    const mt_model *m = v->model;
    t0 = mt_model_resolve_time(m, t0);
    t1 = mt_model_resolve_time(m, t1);
    if (n == 0)
        n = 1;
    if (t1 <= t0)
        t1 = t0 + 1;
    mt_curve *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->n = n;
    c->t0 = t0;
    c->width = (t1 - t0 + (mt_timedelta)n - 1) / (mt_timedelta)n;
    if (c->width < 1)
        c->width = 1;
    c->time = malloc(n * sizeof *c->time);
    c->total = calloc(n, sizeof *c->total);
    c->filtered = calloc(n, sizeof *c->filtered);
    c->filtered_alloc = calloc(n, sizeof *c->filtered_alloc);
    if (!c->time || !c->total || !c->filtered || !c->filtered_alloc) {
        mt_curve_free(c);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        c->time[i] = t0 + (mt_timedelta)i * c->width;
    vgrid_curve(&base->grid, t0, t1, n, base->bps, c->total, NULL);
    vgrid_curve(&v->grid, t0, t1, n, v->bps, c->filtered, c->filtered_alloc);
    const mt_model *bm = base->model;
    put_peak(c, c->total, mt_model_peak_time(bm), mt_model_peak_bytes(bm));
    if (v == base) {
        c->peak_filtered = mt_model_peak_bytes(bm);
        c->peak_filtered_time = mt_model_peak_time(bm);
        put_peak(c, c->filtered, c->peak_filtered_time, c->peak_filtered);
    } else {
        c->peak_filtered = (double)v->grid.peak * v->bps;
        c->peak_filtered_time = v->grid.peak_time;
    }
    return c;
}

mt_histogram *vfold_histogram(const vfold *v, mt_hist_kind kind)
{
    mt_histogram *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->kind = kind;
    h->n = v->hist_n[kind] ? v->hist_n[kind] : 1;
    h->lo = malloc(h->n * sizeof *h->lo);
    h->hi = malloc(h->n * sizeof *h->hi);
    h->cost = malloc(h->n * sizeof *h->cost);
    h->by_source = malloc(h->n * 3 * sizeof *h->by_source);
    if (!h->lo || !h->hi || !h->cost || !h->by_source) {
        mt_histogram_free(h);
        return NULL;
    }
    memcpy(h->cost, v->hist[kind], h->n * sizeof *h->cost);
    memcpy(h->by_source, v->hist_src[kind], h->n * 3 * sizeof *h->by_source);
    for (size_t b = 0; b < h->n; b++) {
        h->lo[b] = b == 0 ? 0 : 1ULL << (b - 1);
        h->hi[b] = b == 0 ? 1 : (b >= 64 ? UINT64_MAX : 1ULL << b);
    }
    if (kind == MT_HIST_LIFETIME)
        h->never_collected = v->never;
    return h;
}

void vfold_stats(const vfold *v, const vfold *base, const mt_selection *sel, mt_stats *o)
{
    const mt_model *m = v->model;
    memset(o, 0, sizeof *o);
    o->duration = mt_model_end(m);
    mt_model_event_counts(m, &o->allocs, &o->promotes, &o->collects);
    o->events = o->allocs + o->promotes + o->collects;
    o->total = mt_selection_total(sel);
    memcpy(o->by_source, v->by_source, sizeof o->by_source);
    o->promoted_bytes = v->promoted_bytes;
    o->collected_bytes = v->collected_bytes;
    o->never_collected_bytes = v->never_bytes;
    o->peak_bytes = mt_model_peak_bytes(base->model);
    o->peak_time = mt_model_peak_time(base->model);
    if (v == base) {
        o->peak_filtered_bytes = o->peak_bytes;
        o->peak_filtered_time = o->peak_time;
    } else {
        o->peak_filtered_bytes = (double)v->grid.peak * v->bps;
        o->peak_filtered_time = v->grid.peak_time;
    }
    o->alloc_rate = o->duration > 0 ? o->total.alloc_bytes / ((double)o->duration / 1e6) : 0;
    o->mean_lifetime_us = v->life_w > 0 ? v->life_sum / v->life_w : 0;
    uint64_t half = (v->samples + 1) / 2, acc = 0;
    if (!half)
        return;
    for (size_t b = 0; b < LIFE_FINE; b++) {
        acc += v->life_fine[b];
        if (acc >= half) {
            o->median_lifetime_us = (double)life_bucket_low(b);
            break;
        }
    }
}
