/*
 * graph.c - the call graph by function (pprof style: paths meeting at one
 * function join) and one function's callers and callees.
 */
#include <stdlib.h>
#include <string.h>

#include "scale.h"
#include "select.h"

/* Functions of a selection stack, outermost first; returns the depth. */
static size_t stack_funcs(const mt_selection *s, mt_node_id n, mt_func_id **buf, size_t *cap)
{
    size_t d = s->nodes[n].depth;
    if (d > *cap) {
        size_t c = *cap ? *cap : 64;
        while (c < d)
            c *= 2;
        mt_func_id *b = realloc(*buf, c * sizeof *b);
        if (!b)
            return (size_t)-1;
        *buf = b;
        *cap = c;
    }
    for (size_t i = d; i > 0; i--) {
        (*buf)[i - 1] = s->m->stacks.frames.v[s->nodes[n].frame].func;
        n = s->nodes[n].parent;
    }
    return d;
}

/* One frame of the depth-first walk of the call graph. */
typedef struct walk {
    mt_node_id node;
    uint32_t next_kid;       /* index into kids of the next child to visit */
    int64_t edge;            /* edge parent -> node, or -1 */
    mt_cost acc;             /* cost of the node's subtree so far */
} walk;

/* First walk when a threshold is given: the cumulative value (sort metric
 * only) of every function, to know which functions the graph keeps; the
 * second walk then looks up edges and sums full costs only for those. */
typedef struct vwalk {
    mt_node_id node;
    uint32_t next_kid;
    double acc;
} vwalk;

static int cum_values(const mt_selection *s, const uint32_t *kid_start, const uint32_t *kids,
                      mt_metric sort, double *cumv, uint32_t *onpath)
{
    const mt_model *m = s->m;
    MTA_VEC(vwalk) st = {0};
    vwalk root = {0, kid_start[0], 0};
    if (MTA_PUSH(st, root) < 0)
        return -1;
    while (st.n) {
        vwalk *w = &st.v[st.n - 1];
        if (w->next_kid < kid_start[w->node + 1]) {
            mt_node_id c = kids[w->next_kid++];
            onpath[m->stacks.frames.v[s->nodes[c].frame].func]++;
            const mt_cost *self = mt_selection_node_cost(s, c);
            vwalk nw = {c, kid_start[c], self->allocs ? mt_cost_get(self, sort) : 0};
            if (MTA_PUSH(st, nw) < 0) {
                free(st.v);
                return -1;
            }
        } else {
            vwalk d = *w;
            st.n--;
            if (!d.node)
                continue;
            mt_func_id f = m->stacks.frames.v[s->nodes[d.node].frame].func;
            if (onpath[f]-- == 1)
                cumv[f] += d.acc;
            st.v[st.n - 1].acc += d.acc;
        }
    }
    free(st.v);
    return 0;
}

/* The graph is computed in one depth-first walk of the part of the stack
 * trie that leads to selected stacks: a function's cumulative cost is the
 * subtree cost of its topmost occurrences on each path (so recursion counts
 * once), an edge's likewise; work is proportional to the trie, not to the
 * sum of stack depths. */
mt_graph *mt_query_graph(const mt_selection *s, mt_metric sort, double min_fraction)
{
    const mt_model *m = s->m;
    size_t nf = m->stacks.funcs.n, nn = s->n_nodes;
    mt_cost *flat = calloc(nf + 1, sizeof *flat), *cum = calloc(nf + 1, sizeof *cum);
    uint32_t *onpath = calloc(nf + 1, sizeof *onpath);
    uint8_t *used = calloc(nn + 1, 1);
    uint32_t *kid_start = calloc(nn + 2, sizeof *kid_start), *kids = malloc((nn + 1) * sizeof *kids);
    MTA_VEC(mt_graph_edge) edges = {0};
    MTA_VEC(uint32_t) eon = {0};
    MTA_VEC(walk) st = {0};
    mta_table eidx;
    mt_graph *g = NULL;
    double *cumv = NULL;
    uint8_t *keep = NULL;
    int tab = 0;
    if (!flat || !cum || !onpath || !used || !kid_start || !kids || mta_table_init(&eidx, 1024) < 0)
        goto done;
    tab = 1;
    for (size_t k = 0; k < s->n_stacks; k++)
        used[s->stack_node[k]] = 1;
    for (size_t i = nn; i-- > 1;)
        if (used[i])
            used[s->nodes[i].parent] = 1;
    for (size_t i = 1; i < nn; i++)
        if (used[i])
            kid_start[s->nodes[i].parent + 1]++;
    for (size_t i = 0; i < nn; i++)
        kid_start[i + 1] += kid_start[i];
    {
        uint32_t *fill = malloc((nn + 1) * sizeof *fill);
        if (!fill)
            goto done;
        memcpy(fill, kid_start, (nn + 1) * sizeof *fill);
        for (size_t i = 1; i < nn; i++)
            if (used[i])
                kids[fill[s->nodes[i].parent]++] = (uint32_t)i;
        free(fill);
    }
    double thr = mt_cost_get(&s->total, sort) * min_fraction;
    if (min_fraction > 0) {
        cumv = calloc(nf + 1, sizeof *cumv);
        keep = calloc(nf + 1, 1);
        if (!cumv || !keep || cum_values(s, kid_start, kids, sort, cumv, onpath) < 0)
            goto done;
        /* a little below the threshold: the full sums may round differently */
        for (size_t f = 0; f < nf; f++)
            keep[f] = cumv[f] > 0 && cumv[f] >= thr * (1 - 1e-9);
    }
    walk root;
    memset(&root, 0, sizeof root);
    root.next_kid = kid_start[0];
    root.edge = -1;
    if (MTA_PUSH(st, root) < 0)
        goto done;
    while (st.n) {
        walk *w = &st.v[st.n - 1];
        if (w->next_kid < kid_start[w->node + 1]) {
            mt_node_id c = kids[w->next_kid++];
            mt_func_id f = m->stacks.frames.v[s->nodes[c].frame].func;
            walk nw;
            memset(&nw, 0, sizeof nw);
            nw.node = c;
            nw.next_kid = kid_start[c];
            nw.edge = -1;
            onpath[f]++;
            mt_func_id pf = w->node ? m->stacks.frames.v[s->nodes[w->node].frame].func : 0;
            if (w->node && (!keep || (keep[pf] && keep[f]))) {
                uint64_t key = (uint64_t)pf << 32 | f;
                int64_t e = mta_table_get(&eidx, key);
                if (e < 0) {
                    mt_graph_edge ge;
                    memset(&ge, 0, sizeof ge);
                    ge.caller = pf;
                    ge.callee = f;
                    e = (int64_t)edges.n;
                    uint32_t zero = 0;
                    if (MTA_PUSH(edges, ge) < 0 || MTA_PUSH(eon, zero) < 0 ||
                        mta_table_put(&eidx, key, (uint32_t)e) < 0)
                        goto done;
                }
                eon.v[e]++;
                nw.edge = e;
            }
            const mt_cost *self = mt_selection_node_cost(s, c);
            if (self->allocs) {
                nw.acc = *self;
                if (!keep || keep[f])
                    mta_cost_add(&flat[f], self);
            }
            if (MTA_PUSH(st, nw) < 0) /* may move st.v: w is not used after */
                goto done;
        } else {
            walk done_w = *w;
            st.n--;
            if (!done_w.node)
                continue;
            mt_func_id f = m->stacks.frames.v[s->nodes[done_w.node].frame].func;
            if (onpath[f] == 1 && (!keep || keep[f]))
                mta_cost_add(&cum[f], &done_w.acc);
            onpath[f]--;
            if (done_w.edge >= 0) {
                if (eon.v[done_w.edge] == 1)
                    mta_cost_add(&edges.v[done_w.edge].cost, &done_w.acc);
                eon.v[done_w.edge]--;
            }
            mta_cost_add(&st.v[st.n - 1].acc, &done_w.acc);
        }
    }
    /* keep functions above the threshold, sorted by cum */
    uint32_t *order = malloc((nf + 1) * sizeof *order);
    uint32_t *newid = malloc((nf + 1) * sizeof *newid);
    g = calloc(1, sizeof *g);
    if (!order || !newid || !g) {
        free(order);
        free(newid);
        free(g);
        g = NULL;
        goto done;
    }
    size_t nk = 0;
    for (size_t f = 0; f < nf; f++) {
        double v = mt_cost_get(&cum[f], sort);
        if (cum[f].allocs && v >= thr && (v > 0 || thr <= 0))
            order[nk++] = (uint32_t)f;
    }
    mta_sort_by_cost(order, nk, cum, sizeof *cum, 0, sort);
    g->nodes = calloc(nk + 1, sizeof *g->nodes);
    uint32_t *eorder = malloc((edges.n + 1) * sizeof *eorder);
    g->edges = calloc(edges.n + 1, sizeof *g->edges);
    if (!g->nodes || !g->edges || !eorder) {
        free(eorder);
        free(order);
        free(newid);
        mt_graph_free(g);
        g = NULL;
        goto done;
    }
    for (size_t f = 0; f < nf; f++)
        newid[f] = UINT32_MAX;
    for (size_t k = 0; k < nk; k++) {
        newid[order[k]] = (uint32_t)k;
        g->nodes[k].func = order[k];
        g->nodes[k].flat = flat[order[k]];
        g->nodes[k].cum = cum[order[k]];
    }
    g->n_nodes = nk;
    for (size_t e = 0; e < edges.n; e++)
        eorder[e] = (uint32_t)e;
    mta_sort_by_cost(eorder, edges.n, edges.v, sizeof *edges.v, offsetof(mt_graph_edge, cost), sort);
    for (size_t k = 0; k < edges.n; k++) {
        mt_graph_edge e = edges.v[eorder[k]];
        if (newid[e.caller] == UINT32_MAX || newid[e.callee] == UINT32_MAX)
            continue;
        e.caller = newid[e.caller];
        e.callee = newid[e.callee];
        g->edges[g->n_edges++] = e;
    }
    g->total = s->total;
    free(eorder);
    free(order);
    free(newid);
done:
    free(cumv);
    free(keep);
    free(flat);
    free(cum);
    free(onpath);
    free(used);
    free(kid_start);
    free(kids);
    free(edges.v);
    free(eon.v);
    free(st.v);
    if (tab)
        mta_table_destroy(&eidx);
    return g;
}

void mt_graph_free(mt_graph *g)
{
    if (!g)
        return;
    free(g->nodes);
    free(g->edges);
    free(g);
}

/* -------------------------------------------------------- one function */

typedef struct link_acc {
    mt_cost *cost;
    size_t *seen;
} link_acc;

static mt_func_link *collect_links(const mt_model *m, link_acc *a, size_t *n, mt_metric sort)
{
    size_t nf = m->stacks.funcs.n, k = 0;
    uint32_t *idx = malloc((nf + 1) * sizeof *idx);
    if (!idx)
        return NULL;
    for (size_t f = 0; f < nf; f++)
        if (a->cost[f].allocs)
            idx[k++] = (uint32_t)f;
    mta_sort_by_cost(idx, k, a->cost, sizeof *a->cost, 0, sort);
    mt_func_link *l = calloc(k + 1, sizeof *l);
    if (l)
        for (size_t i = 0; i < k; i++) {
            l[i].func = idx[i];
            l[i].cost = a->cost[idx[i]];
        }
    free(idx);
    *n = k;
    return l;
}

mt_func_report *mt_query_func(const mt_selection *s, mt_func_id f, mt_metric sort)
{
    const mt_model *m = s->m;
    size_t nf = m->stacks.funcs.n;
    mt_func_report *r = calloc(1, sizeof *r);
    link_acc up = {calloc(nf + 1, sizeof(mt_cost)), calloc(nf + 1, sizeof(size_t))};
    link_acc down = {calloc(nf + 1, sizeof(mt_cost)), calloc(nf + 1, sizeof(size_t))};
    mt_func_id *fs = NULL;
    size_t fcap = 0;
    int ok = 0;
    if (!r || !up.cost || !up.seen || !down.cost || !down.seen || f >= nf)
        goto done;
    r->func = f;
    for (size_t sk = 0; sk < s->n_stacks; sk++) {
        const mt_cost *c = &s->stack_cost[sk];
        size_t i = sk + 1; /* a stamp: unique per stack, never 0 */
        mt_node_id node = s->stack_node[sk];
        if (node == 0)
            continue;
        size_t d = stack_funcs(s, node, &fs, &fcap);
        if (d == (size_t)-1)
            goto done;
        int in = 0;
        for (size_t k = 0; k < d; k++) {
            if (fs[k] != f)
                continue;
            in = 1;
            if (k > 0 && up.seen[fs[k - 1]] != i) {
                up.seen[fs[k - 1]] = i;
                mta_cost_add(&up.cost[fs[k - 1]], c);
            }
            if (k + 1 < d && down.seen[fs[k + 1]] != i) {
                down.seen[fs[k + 1]] = i;
                mta_cost_add(&down.cost[fs[k + 1]], c);
            }
        }
        if (in)
            mta_cost_add(&r->cum, c);
        if (fs[d - 1] == f)
            mta_cost_add(&r->flat, c);
    }
    r->callers = collect_links(m, &up, &r->n_callers, sort);
    r->callees = collect_links(m, &down, &r->n_callees, sort);
    ok = r->callers && r->callees;
done:
    free(up.cost);
    free(up.seen);
    free(down.cost);
    free(down.seen);
    free(fs);
    if (!ok) {
        mt_func_report_free(r);
        return NULL;
    }
    return r;
}

void mt_func_report_free(mt_func_report *r)
{
    if (!r)
        return;
    free(r->callers);
    free(r->callees);
    free(r);
}
