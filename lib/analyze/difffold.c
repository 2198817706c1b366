/*
 * difffold.c - comparisons in bounded memory: a collector that sums, per
 * stack, what each allocation of a folded model brings to the sides of a
 * comparison, called from the model's on_fold hook while the trace is
 * read. compare.c then reads these sums instead of the allocations; the
 * membership rules (mtd_member) and the sums (mtd_part) are the same, so
 * the results are those of the whole model.
 */
#include <stdlib.h>
#include <string.h>

#include "diffkeys.h"
#include "model.h"

struct mt_diff_fold {
    mt_metric metric;
    int on[2];               /* the trace feeds the base [0], the new side [1] */
    mt_diff_side spec[2];
    mtd_side r[2];
    int resolved;
    acc *node;               /* per model node */
    uint8_t *used;           /* per model node: some allocation was summed */
    size_t n, cap;
};

double mtd_value(const mt_model *m, const mt_alloc *a, mt_metric metric)
{
    if (metric == MT_METRIC_ALLOC_OBJECTS || metric == MT_METRIC_LIVE_OBJECTS)
        return mta_alloc_objects(m, a);
    return (double)a->n_samples * m->bps;
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
    if (f->cap) {
        memset(f->node, 0, f->cap * sizeof *f->node);
        memset(f->used, 0, f->cap);
    }
    f->n = 0;
    f->resolved = 0;
}

void mt_diff_fold_free(mt_diff_fold *f)
{
    if (!f)
        return;
    free(f->node);
    free(f->used);
    free(f);
}

/* Times of the sides, on the first allocation: PEAK is the model's
 * fold_peak; END as a live time means never freed (the end is not read
 * yet), as a range's end everything. */
static void resolve_folding(mt_diff_fold *f, const mt_model *m)
{
    for (int j = 0; j < 2; j++) {
        const mt_diff_side *s = &f->spec[j];
        mtd_side *r = &f->r[j];
        r->from = s->from == MT_TIME_PEAK ? m->fold_peak : s->from;
        r->to = s->to == MT_TIME_END ? INT64_MAX : s->to == MT_TIME_PEAK ? m->fold_peak : s->to;
        r->at = s->at == MT_TIME_END ? MTD_AT_END : s->at == MT_TIME_PEAK ? m->fold_peak : s->at;
    }
    f->resolved = 1;
}

static int grow(mt_diff_fold *f, size_t need)
{
    size_t cap = f->cap ? f->cap : 1024;
    while (cap < need)
        cap *= 2;
    acc *a = realloc(f->node, cap * sizeof *a);
    if (!a)
        return -1;
    f->node = a;
    uint8_t *u = realloc(f->used, cap);
    if (!u)
        return -1;
    f->used = u;
    memset(a + f->cap, 0, (cap - f->cap) * sizeof *a);
    memset(u + f->cap, 0, cap - f->cap);
    f->cap = cap;
    return 0;
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
    double v = mtd_value(m, a, f->metric);
    if (v == 0)
        return 0;
    if (a->stack >= f->cap && grow(f, (size_t)a->stack + 1) < 0)
        return -1;
    if (a->stack >= f->n)
        f->n = (size_t)a->stack + 1;
    f->used[a->stack] = 1;
    mtd_part_add(&f->node[a->stack].p[in_b && in_n ? 2 : in_b ? 0 : 1], v,
                 a->n_samples ? a->n_samples : 1);
    return 0;
}

size_t mtd_fold_n_nodes(const mt_diff_fold *f)
{
    return f->n;
}

const acc *mtd_fold_node(const mt_diff_fold *f, size_t node)
{
    return node < f->n && f->used[node] ? &f->node[node] : NULL;
}
