/*
 * tree.c - call trees by function (top-down and bottom-up) and the
 * allocation-site table with callers.
 */
#include <stdlib.h>
#include <string.h>

#include "scale.h"
#include "select.h"

/* The tree being built: children found through sibling lists, and through
 * a table for nodes with many children (as the model's trie). */
typedef struct tbuild {
    MTA_VEC(mt_tree_node) nodes;
    MTA_VEC(uint32_t) first_child;
    MTA_VEC(uint32_t) next_sibling;
    MTA_VEC(uint16_t) n_kids;
    mta_table kids;
} tbuild;

#define WIDE 12

static int64_t tchild(tbuild *b, uint32_t parent, mt_func_id func)
{
    uint64_t key = (uint64_t)parent << 32 | func;
    int wide = b->n_kids.v[parent] > WIDE;
    if (wide) {
        int64_t n = mta_table_get(&b->kids, key);
        if (n >= 0)
            return n;
    } else {
        for (uint32_t c = b->first_child.v[parent]; c; c = b->next_sibling.v[c])
            if (b->nodes.v[c].func == func)
                return c;
    }
    mt_tree_node t;
    memset(&t, 0, sizeof t);
    t.func = func;
    t.parent = parent;
    t.depth = b->nodes.v[parent].depth + 1;
    uint32_t zero = 0;
    uint16_t nk = 0;
    if (MTA_PUSH(b->nodes, t) < 0 || MTA_PUSH(b->first_child, zero) < 0 ||
        MTA_PUSH(b->n_kids, nk) < 0 || MTA_PUSH(b->next_sibling, b->first_child.v[parent]) < 0)
        return -1;
    uint32_t n = (uint32_t)b->nodes.n - 1;
    b->first_child.v[parent] = n;
    if (b->n_kids.v[parent] <= WIDE)
        b->n_kids.v[parent]++;
    if (wide) {
        if (mta_table_put(&b->kids, key, n) < 0)
            return -1;
    } else if (b->n_kids.v[parent] > WIDE) {
        for (uint32_t c = n; c; c = b->next_sibling.v[c])
            if (mta_table_put(&b->kids, (uint64_t)parent << 32 | b->nodes.v[c].func, c) < 0)
                return -1;
    }
    return n;
}

static int tbuild_init(tbuild *b)
{
    memset(b, 0, sizeof *b);
    mt_tree_node root;
    memset(&root, 0, sizeof root);
    uint32_t zero = 0;
    uint16_t nk = 0;
    if (mta_table_init(&b->kids, 1024) < 0 || MTA_PUSH(b->nodes, root) < 0 ||
        MTA_PUSH(b->first_child, zero) < 0 || MTA_PUSH(b->next_sibling, zero) < 0 ||
        MTA_PUSH(b->n_kids, nk) < 0)
        return -1;
    return 0;
}

static void tbuild_free(tbuild *b)
{
    free(b->nodes.v);
    free(b->first_child.v);
    free(b->next_sibling.v);
    free(b->n_kids.v);
    mta_table_destroy(&b->kids);
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

/* Bottom-up: grow the tree level by level from the allocation sites,
 * expanding only nodes whose total reaches the threshold, so the work is
 * bounded by what is kept rather than by the depth of every stack. An
 * entry is a stack and the trie node of its next (calling) frame. */
typedef struct bu_entry {
    uint32_t stack;          /* index into the selection's stacks */
    mt_node_id next;         /* 0: the stack ends here */
} bu_entry;

typedef struct bu_job {
    uint32_t node;           /* tree node */
    size_t first, n;         /* its entries in the work array */
} bu_job;

static int bottom_up(const mt_selection *s, tbuild *b, mt_metric sort, double thr, int *truncated)
{
    const mt_model *m = s->m;
    size_t ns = s->n_stacks, nf = m->stacks.funcs.n;
    int rc = -1;
    /* entries are regrouped into a fresh array per level of one job */
    bu_entry *e = malloc((ns + 1) * sizeof *e), *tmp = malloc((ns + 1) * sizeof *tmp);
    uint32_t *count = calloc(nf + 1, sizeof *count), *start = malloc((nf + 1) * sizeof *start);
    uint32_t *touched = malloc((nf + 1) * sizeof *touched);
    MTA_VEC(bu_job) jobs = {0};
    if (!e || !tmp || !count || !start || !touched)
        goto out;
    for (size_t k = 0; k < ns; k++) {
        e[k].stack = (uint32_t)k;
        e[k].next = s->stack_node[k];
        mta_cost_add(&b->nodes.v[0].total, &s->stack_cost[k]);
    }
    bu_job root = {0, 0, ns};
    if (MTA_PUSH(jobs, root) < 0)
        goto out;
    while (jobs.n) {
        bu_job j = jobs.v[--jobs.n];
        /* entries that end here are the node's self cost; group the rest
         * by the function of their next frame (counting sort) */
        size_t nt = 0, live = 0;
        for (size_t i = j.first; i < j.first + j.n; i++) {
            if (!e[i].next) {
                mta_cost_add(&b->nodes.v[j.node].self, &s->stack_cost[e[i].stack]);
                continue;
            }
            mt_func_id f = m->stacks.frames.v[s->nodes[e[i].next].frame].func;
            if (count[f]++ == 0)
                touched[nt++] = f;
            live++;
        }
        uint32_t pos = (uint32_t)j.first;
        for (size_t t = 0; t < nt; t++) {
            start[touched[t]] = pos;
            pos += count[touched[t]];
        }
        for (size_t i = j.first; i < j.first + j.n; i++)
            if (e[i].next) {
                mt_func_id f = m->stacks.frames.v[s->nodes[e[i].next].frame].func;
                tmp[start[f]++] = e[i];
            }
        memcpy(e + j.first, tmp + j.first, live * sizeof *e);
        pos = (uint32_t)j.first;
        for (size_t t = 0; t < nt; t++) {
            mt_func_id f = touched[t];
            size_t cnt = count[f];
            count[f] = 0;
            mt_cost tot;
            memset(&tot, 0, sizeof tot);
            for (size_t i = pos; i < pos + cnt; i++)
                mta_cost_add(&tot, &s->stack_cost[e[i].stack]);
            double v = mt_cost_get(&tot, sort);
            if (v > 0 && v >= thr && b->nodes.n >= MT_TREE_MAX_NODES)
                *truncated = 1;
            else if (v > 0 && v >= thr) {
                int64_t c = tchild(b, j.node, f);
                if (c < 0)
                    goto out;
                b->nodes.v[c].total = tot;
                for (size_t i = pos; i < pos + cnt; i++)
                    e[i].next = s->nodes[e[i].next].parent;
                bu_job nj = {(uint32_t)c, pos, cnt};
                if (MTA_PUSH(jobs, nj) < 0)
                    goto out;
            }
            pos += (uint32_t)cnt;
        }
    }
    rc = 0;
out:
    free(e);
    free(tmp);
    free(count);
    free(start);
    free(touched);
    free(jobs.v);
    return rc;
}

/* Top-down: a light tree first (function, parent, child lists and one
 * value per node: the sort metric), so that a trace with millions of
 * distinct stacks does not need a full cost per node; full costs are then
 * computed only for the nodes kept. */
typedef struct light {
    MTA_VEC(mt_func_id) func;
    MTA_VEC(uint32_t) parent;
    MTA_VEC(uint32_t) first_child;
    MTA_VEC(uint32_t) next_sibling;
    MTA_VEC(uint16_t) n_kids;
    mta_table kids;
} light;

static int64_t lchild(light *l, uint32_t parent, mt_func_id func)
{
    uint64_t key = (uint64_t)parent << 32 | func;
    int wide = l->n_kids.v[parent] > WIDE;
    if (wide) {
        int64_t n = mta_table_get(&l->kids, key);
        if (n >= 0)
            return n;
    } else {
        for (uint32_t c = l->first_child.v[parent]; c; c = l->next_sibling.v[c])
            if (l->func.v[c] == func)
                return c;
    }
    uint32_t zero = 0;
    uint16_t nk = 0;
    if (MTA_PUSH(l->func, func) < 0 || MTA_PUSH(l->parent, parent) < 0 ||
        MTA_PUSH(l->first_child, zero) < 0 || MTA_PUSH(l->n_kids, nk) < 0 ||
        MTA_PUSH(l->next_sibling, l->first_child.v[parent]) < 0)
        return -1;
    uint32_t n = (uint32_t)l->func.n - 1;
    l->first_child.v[parent] = n;
    if (l->n_kids.v[parent] <= WIDE)
        l->n_kids.v[parent]++;
    if (wide) {
        if (mta_table_put(&l->kids, key, n) < 0)
            return -1;
    } else if (l->n_kids.v[parent] > WIDE) {
        for (uint32_t c = n; c; c = l->next_sibling.v[c])
            if (mta_table_put(&l->kids, (uint64_t)parent << 32 | l->func.v[c], c) < 0)
                return -1;
    }
    return n;
}

static int top_down(const mt_selection *s, tbuild *b, mt_metric sort, double min_fraction,
                    int *truncated)
{
    const mt_model *m = s->m;
    light l;
    memset(&l, 0, sizeof l);
    uint32_t *map = malloc(s->n_nodes * sizeof *map);
    uint8_t *used = calloc(s->n_nodes, 1);
    double *val = NULL;
    uint32_t *rep = NULL, *newid = NULL;
    int rc = -1;
    uint32_t zero = 0;
    uint16_t nk = 0;
    mt_func_id f0 = 0;
    if (!map || !used || mta_table_init(&l.kids, 1024) < 0 || MTA_PUSH(l.func, f0) < 0 ||
        MTA_PUSH(l.parent, zero) < 0 || MTA_PUSH(l.first_child, zero) < 0 ||
        MTA_PUSH(l.next_sibling, zero) < 0 || MTA_PUSH(l.n_kids, nk) < 0)
        goto out;
    /* only the nodes on the way to a selected stack */
    for (size_t k = 0; k < s->n_stacks; k++)
        used[s->stack_node[k]] = 1;
    for (size_t i = s->n_nodes; i-- > 1;)
        if (used[i])
            used[s->nodes[i].parent] = 1;
    map[0] = 0;
    for (size_t i = 1; i < s->n_nodes; i++) {
        if (!used[i])
            continue;
        const mt_node *nd = &s->nodes[i];
        int64_t c = lchild(&l, map[nd->parent], m->stacks.frames.v[nd->frame].func);
        if (c < 0)
            goto out;
        map[i] = (uint32_t)c;
    }
    size_t n = l.func.n;
    val = calloc(n, sizeof *val);
    rep = malloc(n * sizeof *rep);
    newid = malloc(n * sizeof *newid);
    if (!val || !rep || !newid)
        goto out;
    for (size_t k = 0; k < s->n_stacks; k++)
        val[map[s->stack_node[k]]] += mt_cost_get(&s->stack_cost[k], sort);
    for (size_t i = n; i-- > 1;)
        val[l.parent.v[i]] += val[i];
    double thr = val[0] * min_fraction;
    /* keep nodes at or above the threshold (their ancestors are too); a
     * dropped node's cost goes to its nearest kept ancestor's total */
    rep[0] = 0;
    newid[0] = 0;
    for (size_t i = 1; i < n; i++) {
        int keep = val[i] > 0 && val[i] >= thr;
        if (keep && b->nodes.n >= MT_TREE_MAX_NODES) {
            keep = 0;
            *truncated = 1;
        }
        if (keep) {
            mt_tree_node t;
            memset(&t, 0, sizeof t);
            t.func = l.func.v[i];
            t.parent = newid[l.parent.v[i]];
            t.depth = b->nodes.v[t.parent].depth + 1;
            if (MTA_PUSH(b->nodes, t) < 0)
                goto out;
            newid[i] = (uint32_t)b->nodes.n - 1;
            rep[i] = (uint32_t)i;
        } else {
            rep[i] = rep[l.parent.v[i]];
            newid[i] = newid[rep[i]];
        }
    }
    for (size_t k = 0; k < s->n_stacks; k++) {
        uint32_t t = map[s->stack_node[k]];
        mt_tree_node *tn = &b->nodes.v[newid[t]];
        if (rep[t] == t)
            mta_cost_add(&tn->self, &s->stack_cost[k]);
        mta_cost_add(&tn->total, &s->stack_cost[k]);
    }
    for (size_t i = b->nodes.n; i-- > 1;)
        mta_cost_add(&b->nodes.v[b->nodes.v[i].parent].total, &b->nodes.v[i].total);
    rc = 0;
out:
    free(map);
    free(used);
    free(val);
    free(rep);
    free(newid);
    free(l.func.v);
    free(l.parent.v);
    free(l.first_child.v);
    free(l.next_sibling.v);
    free(l.n_kids.v);
    mta_table_destroy(&l.kids);
    return rc;
}

mt_tree *mt_query_tree(const mt_selection *s, mt_tree_dir dir, mt_metric sort,
                       double min_fraction)
{
    tbuild b;
    mt_tree *t = NULL;
    int truncated = 0;
    if (tbuild_init(&b) < 0)
        goto done;
    if (dir == MT_TREE_TOP_DOWN) {
        if (top_down(s, &b, sort, min_fraction, &truncated) < 0)
            goto done;
    } else {
        double thr = mt_cost_get(&s->total, sort) * min_fraction;
        if (bottom_up(s, &b, sort, thr, &truncated) < 0)
            goto done;
    }
    t = prune(&b, sort, min_fraction);
    if (t)
        t->truncated = truncated;
done:
    tbuild_free(&b);
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

/* Sites and callers sort by the metric, then by function name, file and
 * line, so that ties come out the same whatever the order of the stacks
 * (a shallow and a full model give the same table). */
typedef struct frame_item {
    double v;
    uint32_t rank;           /* of the function by (name, file); 0 for "no caller" */
    uint32_t line;
    uint32_t idx;
} frame_item;

static int cmp_frame_item(const void *x, const void *y)
{
    const frame_item *a = x, *b = y;
    /* sums of doubles depend on the order of additions: equal within 1e-9 */
    double d = a->v - b->v, mag = (a->v > b->v ? a->v : b->v) * 1e-9;
    if (d > mag || -d > mag)
        return a->v > b->v ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

static int cmp_func_name(const void *x, const void *y, void *ctx)
{
    const mt_func *f = ctx;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    int r = strcmp(f[a].name, f[b].name);
    if (!r)
        r = strcmp(f[a].filename, f[b].filename);
    return r ? r : (a > b) - (a < b);
}

/* rank[f] = 1 + position of function f in name order. */
static uint32_t *func_ranks(const mt_model *m)
{
    size_t n = m->stacks.funcs.n;
    uint32_t *order = malloc((n + 1) * sizeof *order), *rank = malloc((n + 1) * sizeof *rank);
    if (!order || !rank) {
        free(order);
        free(rank);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, n, sizeof *order, cmp_func_name, m->stacks.funcs.v);
    for (size_t i = 0; i < n; i++)
        rank[order[i]] = (uint32_t)i + 1;
    free(order);
    return rank;
}

static int sort_frames(uint32_t *idx, size_t n, const mt_model *m, const uint32_t *rank,
                       mt_metric metric, const void *base, size_t stride, size_t cost_off,
                       size_t frame_off)
{
    frame_item *it = malloc((n + 1) * sizeof *it);
    if (!it)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const char *p = (const char *)base + idx[i] * stride;
        mt_frame_id f = *(const mt_frame_id *)(p + frame_off);
        it[i].v = mt_cost_get((const mt_cost *)(p + cost_off), metric);
        it[i].rank = f == (mt_frame_id)-1 ? 0 : rank[m->stacks.frames.v[f].func];
        it[i].line = f == (mt_frame_id)-1 ? 0 : m->stacks.frames.v[f].line;
        it[i].idx = idx[i];
    }
    qsort(it, n, sizeof *it, cmp_frame_item);
    for (size_t i = 0; i < n; i++)
        idx[i] = it[i].idx;
    free(it);
    return 0;
}

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
        const mt_frame *f = &m->stacks.frames.v[s->nodes[i].frame];
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
        uint32_t cfunc = p ? m->stacks.frames.v[cf].func : NO_FUNC;
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
    uint32_t *rank = func_ranks(m);
    if (!rank || sort_frames(corder, callers.n, m, rank, sort, callers.v, sizeof *callers.v,
                             offsetof(mt_site_caller, cost), offsetof(mt_site_caller, frame)) < 0) {
        free(rank);
        free(order);
        free(corder);
        goto out;
    }
    for (size_t i = 0; i < sites.n; i++) {
        order[i] = (uint32_t)i;
        size_t k = sites.v[i].n_callers < max_callers ? sites.v[i].n_callers : max_callers;
        sites.v[i].callers = k ? malloc(k * sizeof(mt_site_caller)) : NULL;
        if (k && !sites.v[i].callers) {
            free(rank);
            free(order);
            free(corder);
            goto out;
        }
        sites.v[i].n_callers = 0; /* refilled below */
    }
    size_t *stored = calloc(sites.n + 1, sizeof *stored);
    if (!stored) {
        free(rank);
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
    int sorted = sort_frames(order, sites.n, m, rank, sort, sites.v, sizeof *sites.v,
                             offsetof(mt_site, cost), offsetof(mt_site, frame));
    free(rank);
    if (sorted < 0) {
        free(order);
        free(corder);
        goto out;
    }
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
