/*
 * tree.c - call trees by function (top-down and bottom-up) and the
 * allocation-site table with callers.
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"

typedef struct tbuild {
    MTA_VEC(mt_tree_node) nodes;
    mta_table kids;
} tbuild;

static int64_t tchild(tbuild *b, uint32_t parent, mt_func_id func)
{
    uint64_t key = (uint64_t)parent << 32 | func;
    int64_t n = mta_table_get(&b->kids, key);
    if (n >= 0)
        return n;
    mt_tree_node t;
    memset(&t, 0, sizeof t);
    t.func = func;
    t.parent = parent;
    t.depth = b->nodes.v[parent].depth + 1;
    if (MTA_PUSH(b->nodes, t) < 0)
        return -1;
    n = (int64_t)b->nodes.n - 1;
    if (mta_table_put(&b->kids, key, (uint32_t)n) < 0)
        return -1;
    return n;
}

/* Keep the nodes above the threshold, children sorted by metric, in
 * depth-first order. */
static mt_tree *prune(tbuild *b, mt_metric sort, double min_fraction)
{
    size_t n = b->nodes.n;
    mt_tree_node *in = b->nodes.v;
    double thr = mt_cost_get(&in[0].total, sort) * min_fraction;
    /* children lists (CSR) */
    uint32_t *cnt = calloc(n + 1, sizeof *cnt), *kids = malloc(n * sizeof *kids);
    uint32_t *stack = malloc(n * sizeof *stack), *newid = malloc(n * sizeof *newid);
    uint32_t *last = malloc(n * sizeof *last);
    mt_tree *t = calloc(1, sizeof *t);
    if (t)
        t->nodes = malloc(n * sizeof *t->nodes);
    if (!cnt || !kids || !stack || !newid || !last || !t || !t->nodes) {
        free(last);
        free(cnt); free(kids); free(stack); free(newid);
        mt_tree_free(t);
        return NULL;
    }
    for (size_t i = 1; i < n; i++)
        cnt[in[i].parent + 1]++;
    for (size_t i = 0; i < n; i++)
        cnt[i + 1] += cnt[i];
    uint32_t *fill = malloc((n + 1) * sizeof *fill);
    if (!fill) {
        free(last);
        free(cnt); free(kids); free(stack); free(newid);
        mt_tree_free(t);
        return NULL;
    }
    memcpy(fill, cnt, (n + 1) * sizeof *fill);
    for (size_t i = 1; i < n; i++)
        kids[fill[in[i].parent]++] = (uint32_t)i;
    free(fill);
    for (size_t i = 0; i < n; i++)
        mta_sort_by_cost(kids + cnt[i], cnt[i + 1] - cnt[i], in, sizeof *in,
                         offsetof(mt_tree_node, total), sort);
    /* depth-first; push children in reverse so the biggest comes out first */
    size_t sp = 0, out = 0;
    stack[sp++] = 0;
    while (sp) {
        uint32_t i = stack[--sp];
        mt_tree_node nd = in[i];
        uint32_t id = (uint32_t)out++;
        newid[i] = id;
        nd.first_child = nd.next_sibling = 0;
        if (i) {
            nd.parent = newid[in[i].parent];
            /* link as the last child of the parent */
            mt_tree_node *p = &t->nodes[nd.parent];
            if (!p->first_child)
                p->first_child = id;
            else
                t->nodes[last[nd.parent]].next_sibling = id;
            last[nd.parent] = id;
        }
        t->nodes[id] = nd;
        for (size_t k = cnt[i + 1]; k > cnt[i]; k--) {
            uint32_t c = kids[k - 1];
            double v = mt_cost_get(&in[c].total, sort);
            if (v > 0 && v >= thr)
                stack[sp++] = c;
        }
    }
    t->n = out;
    free(last);
    free(cnt); free(kids); free(stack); free(newid);
    return t;
}

mt_tree *mt_query_tree(const mt_selection *s, mt_tree_dir dir, mt_metric sort,
                       double min_fraction)
{
    const mt_model *m = s->m;
    tbuild b;
    memset(&b, 0, sizeof b);
    mt_tree_node root;
    memset(&root, 0, sizeof root);
    mt_tree *t = NULL;
    uint32_t *map = NULL;
    if (mta_table_init(&b.kids, 1024) < 0 || MTA_PUSH(b.nodes, root) < 0)
        goto done;
    if (dir == MT_TREE_TOP_DOWN) {
        map = malloc(s->n_nodes * sizeof *map);
        if (!map)
            goto done;
        map[0] = 0;
        for (size_t i = 1; i < s->n_nodes; i++) {
            const mt_node *nd = &s->nodes[i];
            int64_t c = tchild(&b, map[nd->parent], m->frames.v[nd->frame].func);
            if (c < 0)
                goto done;
            map[i] = (uint32_t)c;
        }
        for (size_t k = 0; k < s->n_stacks; k++)
            mta_cost_add(&b.nodes.v[map[s->stack_node[k]]].self, &s->stack_cost[k]);
        for (size_t i = 0; i < b.nodes.n; i++)
            b.nodes.v[i].total = b.nodes.v[i].self;
        for (size_t i = b.nodes.n - 1; i > 0; i--)
            mta_cost_add(&b.nodes.v[b.nodes.v[i].parent].total, &b.nodes.v[i].total);
    } else {
        for (size_t k = 0; k < s->n_stacks; k++) {
            const mt_cost *c = &s->stack_cost[k];
            uint32_t tn = 0;
            mta_cost_add(&b.nodes.v[0].total, c);
            for (mt_node_id n = s->stack_node[k]; n; n = s->nodes[n].parent) {
                int64_t k = tchild(&b, tn, m->frames.v[s->nodes[n].frame].func);
                if (k < 0)
                    goto done;
                tn = (uint32_t)k;
                mta_cost_add(&b.nodes.v[tn].total, c);
            }
            mta_cost_add(&b.nodes.v[tn].self, c);
        }
    }
    t = prune(&b, sort, min_fraction);
done:
    free(map);
    free(b.nodes.v);
    mta_table_destroy(&b.kids);
    return t;
}

void mt_tree_free(mt_tree *t)
{
    if (!t)
        return;
    free(t->nodes);
    free(t);
}

/* ------------------------------------------------------------------ sites */

#define NO_FUNC 0xffffffffu

mt_sites *mt_query_sites(const mt_selection *s, mt_metric sort, size_t max_callers)
{
    const mt_model *m = s->m;
    mta_table site_of, caller_of;
    MTA_VEC(mt_site) sites = {0};
    MTA_VEC(mt_site_caller) callers = {0};
    MTA_VEC(uint32_t) caller_site = {0};
    mt_sites *r = calloc(1, sizeof *r);
    int ok = 0;
    if (!r || mta_table_init(&site_of, 1024) < 0)
        goto out0;
    if (mta_table_init(&caller_of, 1024) < 0)
        goto out1;
    for (size_t k = 0; k < s->n_stacks; k++) {
        const mt_cost *c = &s->stack_cost[k];
        mt_node_id i = s->stack_node[k];
        if (i == 0)
            continue;
        const mt_frame *f = &m->frames.v[s->nodes[i].frame];
        uint64_t key = (uint64_t)f->func << 32 | f->line;
        int64_t si = mta_table_get(&site_of, key);
        if (si < 0) {
            mt_site st;
            memset(&st, 0, sizeof st);
            st.frame = s->nodes[i].frame;
            si = (int64_t)sites.n;
            if (MTA_PUSH(sites, st) < 0 || mta_table_put(&site_of, key, (uint32_t)si) < 0)
                goto out;
        }
        mta_cost_add(&sites.v[si].cost, c);
        mt_node_id p = s->nodes[i].parent;
        mt_frame_id cf = p ? s->nodes[p].frame : (mt_frame_id)-1;
        uint32_t cfunc = p ? m->frames.v[cf].func : NO_FUNC;
        uint64_t ck = (uint64_t)si << 32 | cfunc; /* exact: no collisions */
        int64_t ci = mta_table_get(&caller_of, ck);
        if (ci < 0) {
            mt_site_caller sc;
            memset(&sc, 0, sizeof sc);
            sc.frame = cf;
            ci = (int64_t)callers.n;
            if (MTA_PUSH(callers, sc) < 0 || MTA_PUSH(caller_site, (uint32_t)si) < 0 ||
                mta_table_put(&caller_of, ck, (uint32_t)ci) < 0)
                goto out;
            sites.v[si].n_callers++;
        }
        mta_cost_add(&callers.v[ci].cost, c);
    }
    /* sort sites, then gather each site's callers */
    uint32_t *order = malloc((sites.n + 1) * sizeof *order);
    uint32_t *corder = malloc((callers.n + 1) * sizeof *corder);
    r->sites = calloc(sites.n + 1, sizeof *r->sites);
    if (!order || !corder || !r->sites) {
        free(order);
        free(corder);
        goto out;
    }
    for (size_t i = 0; i < callers.n; i++)
        corder[i] = (uint32_t)i;
    mta_sort_by_cost(corder, callers.n, callers.v, sizeof *callers.v,
                     offsetof(mt_site_caller, cost), sort);
    for (size_t i = 0; i < sites.n; i++) {
        order[i] = (uint32_t)i;
        size_t k = sites.v[i].n_callers < max_callers ? sites.v[i].n_callers : max_callers;
        sites.v[i].callers = k ? malloc(k * sizeof(mt_site_caller)) : NULL;
        if (k && !sites.v[i].callers) {
            free(order);
            free(corder);
            goto out;
        }
        sites.v[i].n_callers = 0; /* refilled below */
    }
    size_t *stored = calloc(sites.n + 1, sizeof *stored);
    if (!stored) {
        free(order);
        free(corder);
        goto out;
    }
    for (size_t i = 0; i < callers.n; i++) {
        uint32_t ci = corder[i], si = caller_site.v[ci];
        if (stored[si] < max_callers)
            sites.v[si].callers[stored[si]++] = callers.v[ci];
        sites.v[si].n_callers++;
    }
    free(stored);
    mta_sort_by_cost(order, sites.n, sites.v, sizeof *sites.v, offsetof(mt_site, cost), sort);
    for (size_t i = 0; i < sites.n; i++)
        r->sites[i] = sites.v[order[i]];
    r->n = sites.n;
    r->total = s->total;
    free(order);
    free(corder);
    ok = 1;
out:
    mta_table_destroy(&caller_of);
out1:
    mta_table_destroy(&site_of);
out0:
    if (!ok) {
        for (size_t i = 0; i < sites.n; i++)
            free(sites.v[i].callers);
        if (r)
            free(r->sites);
        free(r);
        r = NULL;
    }
    free(sites.v);
    free(callers.v);
    free(caller_site.v);
    return r;
}

void mt_sites_free(mt_sites *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->sites[i].callers);
    free(t->sites);
    free(t);
}
