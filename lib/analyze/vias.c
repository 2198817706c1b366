/*
 * vias.c - the plumbing each allocation site's cost went through
 * (mt_query_site_vias): "new_session, via std::vector<…>::resize(…)";
 * per function (mt_query_func_vias) for the viewer.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "scale.h"
#include "select.h"

typedef struct via_item {
    uint32_t site;
    mt_func_id func;
    mt_frame_id frame;
    double v;
} via_item;

static int cmp_item(const void *x, const void *y)
{
    const via_item *a = x, *b = y;
    if (a->site != b->site)
        return a->site < b->site ? -1 : 1;
    return a->func < b->func ? -1 : a->func > b->func;
}

mt_site_vias *mt_query_site_vias(const mt_selection *s, const mt_sites *t, mt_metric metric)
{
    const mt_model *m = s->m;
    mt_site_vias *out = calloc(t->n ? t->n : 1, sizeof *out);
    if (!out)
        return NULL;
    if (!s->via || t->n == 0)
        return out;
    mta_table site_of;
    if (mta_table_init(&site_of, t->n) < 0) {
        free(out);
        return NULL;
    }
    for (size_t i = 0; i < t->n; i++) {
        const mt_frame *f = &m->stacks.frames.v[t->sites[i].frame];
        if (mta_table_put(&site_of, (uint64_t)f->func << 32 | f->line, (uint32_t)i) < 0)
            goto oom;
    }
    MTA_VEC(via_item) items = {0};
    for (size_t i = 0; i < mta_n_allocs(m); i++) {
        if (!mt_selection_has(s, i))
            continue;
        mt_frame_id vf = s->via[m->whole->allocs.v[i].stack];
        if (vf == MT_NO_FRAME)
            continue;
        mt_node_id n = mt_selection_stack_of(s, i);
        if (n == 0)
            continue;
        const mt_frame *f = &m->stacks.frames.v[s->nodes[n].frame];
        int64_t si = mta_table_get(&site_of, (uint64_t)f->func << 32 | f->line);
        if (si < 0)
            continue;
        mt_cost c;
        mta_cost_of(&m->scale, &m->whole->allocs.v[i], s->live_at, &c);
        via_item it = {(uint32_t)si, m->stacks.frames.v[vf].func, vf, mt_cost_get(&c, metric)};
        if (!(it.v > 0))
            continue; /* counts nothing for this metric (e.g. freed, by live) */
        if (MTA_PUSH(items, it) < 0) {
            free(items.v);
            goto oom;
        }
    }
    /* a folded model: one item per model node holding a cost */
    for (size_t n = 0; m->fold && n < m->stacks.nodes.n; n++) {
        if (!mta_fold_counts(s, (mt_node_id)n))
            continue;
        mt_frame_id vf = s->via[n];
        mt_node_id sn = s->map ? s->map[n] : (mt_node_id)n;
        if (vf == MT_NO_FRAME || sn == 0)
            continue;
        const mt_frame *f = &m->stacks.frames.v[s->nodes[sn].frame];
        int64_t si = mta_table_get(&site_of, (uint64_t)f->func << 32 | f->line);
        if (si < 0)
            continue;
        via_item it = {(uint32_t)si, m->stacks.frames.v[vf].func, vf,
                       mt_cost_get(&m->fold->node_cost[n], metric)};
        if (!(it.v > 0))
            continue;
        if (MTA_PUSH(items, it) < 0) {
            free(items.v);
            goto oom;
        }
    }
    if (items.n)
        qsort(items.v, items.n, sizeof *items.v, cmp_item);
    for (size_t i = 0; i < items.n;) {
        size_t j = i;
        double v = 0;
        while (j < items.n && items.v[j].site == items.v[i].site && items.v[j].func == items.v[i].func)
            v += items.v[j++].v;
        mt_site_vias *sv = &out[items.v[i].site];
        double total = mt_cost_get(&t->sites[items.v[i].site].cost, metric);
        double share = total > 0 ? v / total : 0;
        sv->n++;
        /* keep the MT_MAX_VIAS biggest, sorted */
        size_t k = sv->n - 1 < MT_MAX_VIAS ? sv->n - 1 : MT_MAX_VIAS;
        while (k > 0 && sv->share[k - 1] < share) {
            if (k < MT_MAX_VIAS) {
                sv->share[k] = sv->share[k - 1];
                sv->frame[k] = sv->frame[k - 1];
            }
            k--;
        }
        if (k < MT_MAX_VIAS) {
            sv->share[k] = share;
            sv->frame[k] = items.v[i].frame;
        }
        i = j;
    }
    free(items.v);
    mta_table_destroy(&site_of);
    return out;
oom:
    mta_table_destroy(&site_of);
    free(out);
    return NULL;
}

typedef MTA_VEC(mt_func_link) link_vec;

/* Adds the cost of one allocation (a), or of a folded node (folded), to the
 * entry of the plumbing function it went through, when its site is f.
 * 0, or -1 when out of memory. */
static int add_via(const mt_selection *s, mt_func_id f, mta_table *idx, link_vec *out,
                   mt_node_id stack, mt_node_id node, const mt_alloc *a, const mt_cost *folded)
{
    const mt_model *m = s->m;
    mt_frame_id vf = s->via[stack];
    if (vf == MT_NO_FRAME || node == 0 || m->stacks.frames.v[s->nodes[node].frame].func != f)
        return 0;
    mt_func_id vfunc = m->stacks.frames.v[vf].func;
    int64_t k = mta_table_get(idx, vfunc);
    if (k < 0) {
        mt_func_link l;
        memset(&l, 0, sizeof l);
        l.func = vfunc;
        k = (int64_t)out->n;
        if (MTA_PUSH(*out, l) < 0 || mta_table_put(idx, vfunc, (uint32_t)k) < 0)
            return -1;
    }
    mt_cost c;
    if (a) {
        mta_cost_of(&m->scale, a, s->live_at, &c);
        folded = &c;
    }
    mta_cost_add(&out->v[k].cost, folded);
    return 0;
}

mt_func_link *mt_query_func_vias(const mt_selection *s, mt_func_id f, mt_metric metric, size_t *n)
{
    const mt_model *m = s->m;
    *n = 0;
    link_vec out = {0};
    if (!s->via)
        return calloc(1, sizeof(mt_func_link));
    mta_table idx;
    if (mta_table_init(&idx, 16) < 0)
        return NULL;
    for (size_t i = 0; i < mta_n_allocs(m); i++)
        if (mt_selection_has(s, i) &&
            add_via(s, f, &idx, &out, m->whole->allocs.v[i].stack, mt_selection_stack_of(s, i),
                    &m->whole->allocs.v[i], NULL) < 0)
            goto oom;
    for (size_t nd = 0; m->fold && nd < m->stacks.nodes.n; nd++)
        if (mta_fold_counts(s, (mt_node_id)nd) &&
            add_via(s, f, &idx, &out, (mt_node_id)nd, s->map ? s->map[nd] : (mt_node_id)nd,
                    NULL, &m->fold->node_cost[nd]) < 0)
            goto oom;
    mta_table_destroy(&idx);
    uint32_t *order = malloc((out.n ? out.n : 1) * sizeof *order);
    mt_func_link *sorted = malloc((out.n ? out.n : 1) * sizeof *sorted);
    if (!order || !sorted) {
        free(order);
        free(sorted);
        free(out.v);
        return NULL;
    }
    for (size_t i = 0; i < out.n; i++)
        order[i] = (uint32_t)i;
    mta_sort_by_cost(order, out.n, out.v, sizeof *out.v, offsetof(mt_func_link, cost), metric);
    for (size_t i = 0; i < out.n; i++)
        sorted[i] = out.v[order[i]];
    *n = out.n;
    free(order);
    free(out.v);
    return sorted;
oom:
    mta_table_destroy(&idx);
    free(out.v);
    return NULL;
}
