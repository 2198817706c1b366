/*
 * vias.c - the plumbing each allocation site's cost went through
 * (mt_query_site_vias): "new_session, via std::vector<…>::resize(…)".
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"

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
        const mt_frame *f = &m->frames.v[t->sites[i].frame];
        if (mta_table_put(&site_of, (uint64_t)f->func << 32 | f->line, (uint32_t)i) < 0)
            goto oom;
    }
    MTA_VEC(via_item) items = {0};
    for (size_t i = 0; i < m->allocs.n; i++) {
        if (!mt_selection_has(s, i))
            continue;
        mt_frame_id vf = s->via[m->allocs.v[i].stack];
        if (vf == MT_NO_FRAME)
            continue;
        mt_node_id n = mt_selection_stack_of(s, i);
        if (n == 0)
            continue;
        const mt_frame *f = &m->frames.v[s->nodes[n].frame];
        int64_t si = mta_table_get(&site_of, (uint64_t)f->func << 32 | f->line);
        if (si < 0)
            continue;
        mt_cost c;
        mta_cost_of(m, &m->allocs.v[i], s->live_at, &c);
        via_item it = {(uint32_t)si, m->frames.v[vf].func, vf, mt_cost_get(&c, metric)};
        if (!(it.v > 0))
            continue; /* counts nothing for this metric (e.g. freed, by live) */
        if (MTA_PUSH(items, it) < 0) {
            free(items.v);
            goto oom;
        }
    }
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
