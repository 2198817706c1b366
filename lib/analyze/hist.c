/*
 * hist.c - size and lifetime histograms (power-of-two buckets) and the
 * totals/rates of mt_query_stats.
 */
#include <stdlib.h>
#include <string.h>

#include "scale.h"
#include "select.h"
#include "verdict.h"

#define NBUCKETS 66

static size_t bucket_of(uint64_t v)
{
    return v == 0 ? 0 : (size_t)(64 - __builtin_clzll(v));
}

static uint64_t lifetime_of(const mt_model *m, const mt_alloc *a)
{
    mt_timedelta end = a->collect == MT_TIME_NEVER ? m->end : a->collect;
    return end > a->time ? (uint64_t)(end - a->time) : 0;
}

mt_histogram *mt_query_histogram(const mt_selection *s, mt_hist_kind kind)
{
    const mt_model *m = s->m;
    mt_histogram *h = calloc(1, sizeof *h);
    mt_cost *all = calloc(NBUCKETS, sizeof *all), *src = calloc(NBUCKETS * 3, sizeof *src);
    if (!h || !all || !src)
        goto fail;
    h->kind = kind;
    size_t maxb = 0;
    for (size_t i = 0; i < mta_n_allocs(m); i++) {
        if (!mt_selection_has(s, i))
            continue;
        const mt_alloc *a = &m->whole->allocs.v[i];
        uint64_t v = kind == MT_HIST_SIZE ? a->size : lifetime_of(m, a);
        size_t b = bucket_of(v);
        mt_cost c;
        mta_cost_of(&m->scale, a, s->live_at, &c);
        mta_cost_add(&all[b], &c);
        mta_cost_add(&src[b * 3 + (a->source < 3 ? a->source : 2)], &c);
        if (kind == MT_HIST_LIFETIME && a->collect == MT_TIME_NEVER)
            mta_cost_add(&h->never_collected, &c);
        if (b > maxb)
            maxb = b;
    }
    h->n = maxb + 1;
    h->lo = malloc(h->n * sizeof *h->lo);
    h->hi = malloc(h->n * sizeof *h->hi);
    h->cost = all;
    h->by_source = src;
    if (!h->lo || !h->hi)
        goto fail;
    for (size_t b = 0; b < h->n; b++) {
        h->lo[b] = b == 0 ? 0 : 1ULL << (b - 1);
        h->hi[b] = b == 0 ? 1 : (b >= 64 ? UINT64_MAX : 1ULL << b);
    }
    return h;
fail:
    if (h) {
        free(h->lo);
        free(h->hi);
    }
    free(h);
    free(all);
    free(src);
    return NULL;
}

void mt_histogram_free(mt_histogram *h)
{
    if (!h)
        return;
    free(h->lo);
    free(h->hi);
    free(h->cost);
    free(h->by_source);
    free(h);
}

typedef struct life_item {
    uint64_t life;
    uint64_t samples;
} life_item;

/* The smallest lifetime L such that the samples of the items living at
 * most L reach target (a weighted median when target is half the total):
 * quickselect with a three-way partition, linear on average. */
static uint64_t weighted_select(life_item *a, size_t n, uint64_t target)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        uint64_t p = a[lo + (hi - lo) / 2].life;
        size_t lt = lo, i = lo, gt = hi;
        uint64_t wl = 0, we = 0;
        while (i < gt) {
            if (a[i].life < p) {
                wl += a[i].samples;
                life_item t = a[lt];
                a[lt++] = a[i];
                a[i++] = t;
            } else if (a[i].life > p) {
                life_item t = a[--gt];
                a[gt] = a[i];
                a[i] = t;
            } else {
                we += a[i++].samples;
            }
        }
        if (target <= wl)
            hi = lt;
        else if (target <= wl + we)
            return p;
        else {
            target -= wl + we;
            lo = gt;
        }
    }
    return lo < n ? a[lo].life : 0;
}

void mt_query_stats(const mt_selection *s, mt_stats *o)
{
    const mt_model *m = s->m;
    memset(o, 0, sizeof *o);
    o->duration = m->end;
    o->allocs = mta_n_allocs(m);
    o->promotes = m->n_promotes;
    o->collects = m->n_collects;
    o->events = o->allocs + o->promotes + o->collects;
    mt_model_peak(m, &o->peak);
    o->peak_bytes = o->peak.bytes;
    o->peak_time = mt_model_peak_time(m);
    double life_sum = 0, life_w = 0, vsum[4] = {0, 0, 0, 0};
    uint64_t vn[2] = {0, 0};
    life_item *li = malloc((s->total.allocs + 1) * sizeof *li);
    size_t nl = 0;
    for (size_t i = 0; i < mta_n_allocs(m); i++) {
        if (!mt_selection_has(s, i))
            continue;
        const mt_alloc *a = &m->whole->allocs.v[i];
        /* mta_cost_of + mta_cost_add twice, inline (same additions in the
         * same order): this loop runs once per allocation */
        double bytes = (double)a->n_samples * m->scale.bytes_per_sample, obj = mta_alloc_objects(&m->scale, a);
        double ov = mta_objects_var(&m->scale, a, obj);
        int live = mta_is_live(a, s->live_at), temp = mta_is_temporary(a);
        mt_cost *dst[2] = {&o->total, &o->by_source[a->source < 3 ? a->source : 2]};
        for (int k = 0; k < 2; k++) {
            mt_cost *d = dst[k];
            d->alloc_bytes += a->carried ? 0 : bytes;   /* (live only) */
            d->alloc_objects += a->carried ? 0 : obj;
            d->live_bytes += live ? bytes : 0;
            d->live_objects += live ? obj : 0;
            d->samples += a->carried ? 0 : a->n_samples;
            d->live_samples += live ? a->n_samples : 0;
            d->allocs += 1;
            d->temp_bytes += temp ? bytes : 0;
            d->temp_objects += temp ? obj : 0;
            d->temp_samples += temp ? a->n_samples : 0;
            d->alloc_objects_var += a->carried ? 0 : ov;
            d->live_objects_var += live ? ov : 0;
            d->temp_objects_var += temp ? ov : 0;
        }
        mt_cost c = {.alloc_bytes = a->carried ? 0 : bytes}; /* (as allocated) */
        if (a->promote != MT_TIME_NEVER)
            o->promoted_bytes += c.alloc_bytes;
        if (a->collect != MT_TIME_NEVER) {
            o->collected_bytes += c.alloc_bytes;
            life_sum += (double)(a->collect - a->time) * a->n_samples;
            life_w += a->n_samples;
        } else {
            o->never_collected_bytes += c.alloc_bytes;
        }
        mta_verdict_add(vsum, vn, &m->scale, a);
        if (li) {
            li[nl].life = lifetime_of(m, a);
            li[nl].samples = a->n_samples;
            nl++;
        }
    }
    o->mean_lifetime_us = life_w > 0 ? life_sum / life_w : 0;
    mta_verdict_stats(m, vsum, vn, o);
    if (li && nl) {
        uint64_t half = (o->total.samples + 1) / 2;
        o->median_lifetime_us = (double)weighted_select(li, nl, half ? half : 1);
    }
    free(li);
    o->alloc_rate = m->end > 0 ? o->total.alloc_bytes / ((double)m->end / 1e6) : 0;
    if (o->total.allocs == mta_n_allocs(m)) {
        /* everything is selected: the model's own peak */
        o->peak_filtered_bytes = o->peak_bytes;
        o->peak_filtered_time = o->peak_time;
        o->peak_filtered = o->peak;
        return;
    }
    mt_curve *c = mt_query_curve(s, 0, m->end + 1, 1);
    if (c) {
        o->peak_filtered = c->peak_filtered_est;
        o->peak_filtered_bytes = c->peak_filtered_est.bytes;
        o->peak_filtered_time = c->peak_filtered_time;
        mt_curve_free(c);
    }
}
