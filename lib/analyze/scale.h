/*
 * scale.h - the estimates of one sampled allocation at a trace's scale
 * (mt_scale: sample rate, word size): its objects and their variance, its
 * cost (mt_cost) with live measured at a time, the leak verdicts' sums.
 * Inline for the loops that run once per allocation; what depends on a
 * model is not here. Internal.
 */
#ifndef MTA_SCALE_H
#define MTA_SCALE_H

#include "memtrace/analyze.h"

/* mt_scale_alloc_objects: the words the sampler ran over (OCaml heap
 * blocks include a header word), sampled at the rate. */
static inline double mta_alloc_objects(const mt_scale *sc, const mt_alloc *a)
{
    if (sc->sample_rate <= 0)
        return 0;
    double words = (double)a->size * sc->inv_word_bytes;
    if (a->source != MT_SOURCE_EXTERNAL)
        words += 1;
    if (words < 1)
        words = 1;
    return (double)a->n_samples * sc->inv_rate / words;
}

/* The variance of a block's count estimate obj (mta_alloc_objects):
 * n ~ Binomial(words, rate) gives Var(n / (rate words)) = (1 - rate) /
 * (rate words), estimated without bias by obj^2 / n (1 - rate). */
static inline double mta_objects_var(const mt_scale *sc, const mt_alloc *a, double obj)
{
    double r = sc->sample_rate;
    return a->n_samples ? obj * obj / (double)a->n_samples * (r < 1 ? 1 - r : 0) : 0;
}

static inline int mta_is_live(const mt_alloc *a, mt_timedelta t)
{
    return a->time <= t && a->collect > t;
}

/* A temporary block: freed within MT_TEMPORARY_US of its allocation. */
static inline int mta_is_temporary(const mt_alloc *a)
{
    return a->collect != MT_TIME_NEVER && a->collect - a->time < MT_TEMPORARY_US &&
           !a->carried;
}

static inline void mta_cost_add(mt_cost *d, const mt_cost *s)
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
    d->alloc_objects_var += s->alloc_objects_var;
    d->live_objects_var += s->live_objects_var;
    d->temp_objects_var += s->temp_objects_var;
    d->alloc_bytes_var += s->alloc_bytes_var;
    d->live_bytes_var += s->live_bytes_var;
}

/* One allocation's cost in the few figures its mt_cost is made of
 * (mta_cost_of): bytes (n_samples * bytes per sample), obj objects of
 * variance ov, whether it is carried over from an earlier piece (live, not
 * allocated here), live and temporary. */
typedef struct mta_alloc_cost {
    double bytes, obj, ov;
    uint64_t samples;
    int carried, live, temp;
} mta_alloc_cost;

/* Adds one allocation's cost to each of the n sums t[0 .. n) without the
 * additions of its zero fields: adding +0.0 to a sum of non-negative terms
 * leaves it bit for bit the same, so each sum equals mta_cost_add of
 * mta_cost_of's cost. The loops that run once per allocation use it
 * (fold.c, select.c, statsacc.c), with o a local copy: the sums' stores
 * cannot alias it, so its fields stay in registers; one test of each kind
 * per allocation, however many sums. */
static inline __attribute__((always_inline)) void mta_cost_add_alloc_n(mt_cost *const *t, size_t n,
                                                                     const mta_alloc_cost *o)
{
    if (__builtin_expect(!o->carried, 1)) {
        for (size_t k = 0; k < n; k++) {
            mt_cost *c = t[k];
            c->alloc_bytes += o->bytes;
            c->alloc_objects += o->obj;
            c->alloc_objects_var += o->ov;
            c->samples += o->samples;
            c->allocs++;
        }
    } else {
        for (size_t k = 0; k < n; k++)
            t[k]->allocs++; /* carried over from an earlier piece: live, not allocated here */
    }
    if (o->live) {
        for (size_t k = 0; k < n; k++) {
            mt_cost *c = t[k];
            c->live_bytes += o->bytes;
            c->live_objects += o->obj;
            c->live_objects_var += o->ov;
            c->live_samples += o->samples;
        }
    }
    if (o->temp) {
        for (size_t k = 0; k < n; k++) {
            mt_cost *c = t[k];
            c->temp_bytes += o->bytes;
            c->temp_objects += o->obj;
            c->temp_objects_var += o->ov;
            c->temp_samples += o->samples;
        }
    }
}

static inline void mta_cost_add_alloc(mt_cost *c, const mta_alloc_cost *o)
{
    mta_cost_add_alloc_n(&c, 1, o);
}

/* The cost of one allocation with live measured at t. */
static inline void mta_cost_of(const mt_scale *sc, const mt_alloc *a, mt_timedelta t, mt_cost *c)
{
    double obj = mta_alloc_objects(sc, a), ov = mta_objects_var(sc, a, obj);
    c->alloc_bytes = (double)a->n_samples * sc->bytes_per_sample;
    c->alloc_objects = obj;
    c->alloc_objects_var = ov;
    c->samples = a->n_samples;
    c->allocs = 1;
    c->alloc_bytes_var = c->live_bytes_var = 0; /* (a trace's: from samples) */
    if (mta_is_live(a, t)) {
        c->live_bytes = c->alloc_bytes;
        c->live_objects = obj;
        c->live_objects_var = ov;
        c->live_samples = a->n_samples;
    } else {
        c->live_bytes = c->live_objects = 0;
        c->live_objects_var = 0;
        c->live_samples = 0;
    }
    int temp = mta_is_temporary(a);
    c->temp_bytes = temp ? c->alloc_bytes : 0;
    c->temp_objects = temp ? obj : 0;
    c->temp_samples = temp ? a->n_samples : 0;
    c->temp_objects_var = temp ? ov : 0;
    if (__builtin_expect(a->carried, 0)) {
        /* carried over from an earlier piece: live, not allocated here */
        c->alloc_bytes = c->alloc_objects = 0;
        c->alloc_objects_var = 0;
        c->samples = 0;
    }
}

/* The leak verdicts' sums (mt_stats): v[0], v[1] the estimated bytes lost
 * and reachable, v[2], v[3] their variances, n[0], n[1] the sampled blocks.
 * mta_verdict_stats turns them into o's fields (verdict.c). */
static inline void mta_verdict_add(double v[4], uint64_t n[2], const mt_scale *sc,
                                   const mt_alloc *a)
{
    if (a->verdict != MT_VERDICT_LOST && a->verdict != MT_VERDICT_REACHABLE)
        return;
    int k = a->verdict == MT_VERDICT_LOST ? 0 : 1;
    double obj = mta_alloc_objects(sc, a), size = (double)a->size;
    v[k] += obj * size;
    v[2 + k] += size * size * mta_objects_var(sc, a, obj);
    n[k]++;
}

#endif
