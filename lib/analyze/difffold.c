/*
 * difffold.c - comparisons in bounded memory: a collector that sums, per
 * stack, what each allocation of a folded model brings to the sides of a
 * comparison, called from the model's on_fold hook while the trace is
 * read. compare.c then reads these sums instead of the allocations; the
 * membership rules (mtd_member) and the sums (mtd_part) are the same, so
 * the results are those of the whole model.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diffkeys.h"
#include "model.h"
#include "scale.h"

struct mt_diff_fold {
    mt_metric metric;
    int on[2];               /* the trace feeds the base [0], the new side [1] */
    mt_diff_side spec[2];
    mtd_side r[2];
    int resolved;
    /* The sums of the stacks that have some: slot[node] - 1 indexes sums
     * (0: none); most trie nodes are inner frames of no allocation. */
    uint32_t *slot;
    size_t n, cap;           /* nodes 0 .. n-1 seen; slot's capacity */
    acc *sums;
    size_t n_sums, cap_sums;
};

double mtd_value(const mt_scale *sc, const mt_alloc *a, mt_metric metric)
{
    if (metric == MT_METRIC_ALLOC_OBJECTS || metric == MT_METRIC_LIVE_OBJECTS)
        return mta_alloc_objects(sc, a);
    return (double)a->n_samples * sc->bytes_per_sample;
}

/* A pprof profile's stack (profile.c hands each one over as an
 * allocation): its value and the samples that make its error, from its
 * cost (a count's from its variance: value^2 / samples is what a part sums). */
double mtd_profile_value(const mt_model *m, mt_node_id node, mt_metric metric, uint64_t *k)
{
    const mt_cost *c = &m->fold->node_cost[node];
    double v = mt_cost_get(c, metric), var = 0;
    *k = mt_cost_samples(c, metric);
    if (metric == MT_METRIC_ALLOC_OBJECTS)
        var = c->alloc_objects_var;
    else if (metric == MT_METRIC_LIVE_OBJECTS)
        var = c->live_objects_var;
    if (var > 0 && v > 0)
        *k = v * v / var < 1 ? 1 : (uint64_t)llround(v * v / var);
    if (*k == 0)
        *k = 1;
    return v;
}

void mtd_side_resolve(mtd_side *r, const mt_diff_side *s, const mt_model *m)
{
    r->from = mt_model_resolve_time(m, s->from);
    r->to = s->to == MT_TIME_END ? INT64_MAX : mt_model_resolve_time(m, s->to);
    r->at = mt_model_resolve_time(m, s->at);
}

mt_diff_fold *mt_diff_fold_new(const mt_diff_side *base, const mt_diff_side *new_,
                               mt_metric metric)
{
    mt_diff_fold *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->metric = metric == MT_METRIC_SAMPLES ? MT_METRIC_ALLOC_BYTES : metric;
    if (base) {
        f->on[0] = 1;
        f->spec[0] = *base;
    }
    if (new_) {
        f->on[1] = 1;
        f->spec[1] = *new_;
    }
    return f;
}

void mt_diff_fold_reset(mt_diff_fold *f)
{
    if (f->cap)
        memset(f->slot, 0, f->cap * sizeof *f->slot);
    f->n = 0;
    f->n_sums = 0;
    f->resolved = 0;
}

void mt_diff_fold_free(mt_diff_fold *f)
{
    if (!f)
        return;
    free(f->slot);
    free(f->sums);
    free(f);
}

/* Times of the sides, on the first allocation: PEAK is the model's
 * fold_peak; END as a live time means never freed (the end is not read
 * yet), as a range's end everything. */
static void resolve_folding(mt_diff_fold *f, const mt_model *m)
{
    mt_timedelta peak = m->fold ? m->fold->peak : 0; /* (a whole model: not folding) */
    for (int j = 0; j < 2; j++) {
        const mt_diff_side *s = &f->spec[j];
        mtd_side *r = &f->r[j];
        r->from = s->from == MT_TIME_PEAK ? peak : s->from;
        r->to = s->to == MT_TIME_END ? INT64_MAX : s->to == MT_TIME_PEAK ? peak : s->to;
        r->at = s->at == MT_TIME_END ? MTD_AT_END : s->at == MT_TIME_PEAK ? peak : s->at;
    }
    f->resolved = 1;
}

/* The sums of model node `node`, created on first use; NULL when out of memory. */
static acc *sums_of(mt_diff_fold *f, size_t node)
{
    if (node >= f->cap) {
        size_t cap = f->cap ? f->cap : 1024;
        while (cap <= node)
            cap *= 2;
        uint32_t *v = realloc(f->slot, cap * sizeof *v);
        if (!v)
            return NULL;
        memset(v + f->cap, 0, (cap - f->cap) * sizeof *v);
        f->slot = v;
        f->cap = cap;
    }
    if (node >= f->n)
        f->n = node + 1;
    if (!f->slot[node]) {
        if (f->n_sums >= UINT32_MAX - 1)
            return NULL;
        if (f->n_sums == f->cap_sums &&
            mta_grow((void **)&f->sums, &f->cap_sums, f->n_sums + 1, sizeof *f->sums) < 0)
            return NULL;
        memset(&f->sums[f->n_sums], 0, sizeof *f->sums);
        f->slot[node] = (uint32_t)++f->n_sums;
    }
    return &f->sums[f->slot[node] - 1];
}

int mt_diff_fold_alloc(void *collector, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    mt_diff_fold *f = collector;
    (void)seq;
    if (!f->resolved)
        resolve_folding(f, m);
    int live = mtd_is_live_metric(f->metric);
    int in_b = f->on[0] && mtd_member(&f->r[0], a, live);
    int in_n = f->on[1] && mtd_member(&f->r[1], a, live);
    if (!in_b && !in_n)
        return 0;
    double v = mtd_value(&m->scale, a, f->metric);
    uint64_t k = a->n_samples ? a->n_samples : 1;
    if (m->profile)
        v = mtd_profile_value(m, a->stack, f->metric, &k);
    if (v == 0)
        return 0;
    acc *sum = sums_of(f, a->stack);
    if (!sum)
        return -1;
    mtd_part_add(&sum->p[in_b && in_n ? 2 : in_b ? 0 : 1], v, k);
    return 0;
}

size_t mtd_fold_n_nodes(const mt_diff_fold *f)
{
    return f->n;
}

const acc *mtd_fold_node(const mt_diff_fold *f, size_t node)
{
    return node < f->n && f->slot[node] ? &f->sums[f->slot[node] - 1] : NULL;
}
