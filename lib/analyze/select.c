/*
 * select.c - applying a filter to a model: the pass bitmap, the stack trie
 * with hidden frames removed, and the self cost of every stack.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clause.h"
#include "filter.h"
#include "plumbing.h"
#include "scale.h"
#include "select.h"

double mt_cost_get(const mt_cost *c, mt_metric metric)
{
    switch (metric) {
    case MT_METRIC_ALLOC_BYTES: return c->alloc_bytes;
    case MT_METRIC_ALLOC_OBJECTS: return c->alloc_objects;
    case MT_METRIC_LIVE_BYTES: return c->live_bytes;
    case MT_METRIC_LIVE_OBJECTS: return c->live_objects;
    case MT_METRIC_SAMPLES: return (double)c->samples;
    case MT_METRIC_TEMP_OBJECTS: return c->temp_objects;
    case MT_METRIC_TEMP_BYTES: return c->temp_bytes;
    }
    return 0;
}

double mt_cost_rse(const mt_cost *c, mt_metric metric)
{
    double v, var;
    switch (metric) {
    case MT_METRIC_ALLOC_OBJECTS: v = c->alloc_objects, var = c->alloc_objects_var; break;
    case MT_METRIC_LIVE_OBJECTS: v = c->live_objects, var = c->live_objects_var; break;
    case MT_METRIC_TEMP_OBJECTS: v = c->temp_objects, var = c->temp_objects_var; break;
    case MT_METRIC_ALLOC_BYTES:
    case MT_METRIC_LIVE_BYTES:
    case MT_METRIC_TEMP_BYTES: {
        /* bytes with a variance of their own (a Go profile): from it */
        if (metric != MT_METRIC_TEMP_BYTES) {
            int live = metric == MT_METRIC_LIVE_BYTES;
            v = live ? c->live_bytes : c->alloc_bytes;
            var = live ? c->live_bytes_var : c->alloc_bytes_var;
            if (var > 0)
                return v > 0 ? sqrt(var) / v : 1.0;
        }
        /* blocks whose counts have no variance were sampled whole (rate
         * 1): their bytes are exact too */
        double n = metric == MT_METRIC_LIVE_BYTES   ? c->live_objects
                   : metric == MT_METRIC_TEMP_BYTES ? c->temp_objects
                                                    : c->alloc_objects;
        double nv = metric == MT_METRIC_LIVE_BYTES   ? c->live_objects_var
                    : metric == MT_METRIC_TEMP_BYTES ? c->temp_objects_var
                                                     : c->alloc_objects_var;
        if (n > 0 && nv == 0 && mt_cost_samples(c, metric))
            return 0;
        return mt_noise(mt_cost_samples(c, metric));
    }
    default: return mt_noise(mt_cost_samples(c, metric));
    }
    if (!(v > 0))
        return 1.0;
    return var > 0 ? sqrt(var) / v : 0;
}

/* The samples that make a value's error, v^2 / var, when the bytes carry a
 * variance of their own: what 1/sqrt turns back into that error. */
static uint64_t effective(double v, double var, uint64_t k)
{
    if (!(var > 0) || !(v > 0))
        return k;
    double e = v * v / var;
    return e >= 0x1p62 ? (uint64_t)1 << 62 : e < 1 ? 1 : (uint64_t)llround(e);
}

uint64_t mt_cost_samples(const mt_cost *c, mt_metric metric)
{
    switch (metric) {
    case MT_METRIC_LIVE_BYTES:
    case MT_METRIC_LIVE_OBJECTS: return effective(c->live_bytes, c->live_bytes_var, c->live_samples);
    case MT_METRIC_TEMP_BYTES:
    case MT_METRIC_TEMP_OBJECTS: return c->temp_samples;
    case MT_METRIC_SAMPLES: return c->samples;
    default: return effective(c->alloc_bytes, c->alloc_bytes_var, c->samples);
    }
}

static const struct { const char *name; mt_metric m; } metric_names[] = {
    {"alloc_bytes", MT_METRIC_ALLOC_BYTES},  {"alloc", MT_METRIC_ALLOC_BYTES},
    {"bytes", MT_METRIC_ALLOC_BYTES},        {"alloc_space", MT_METRIC_ALLOC_BYTES},
    {"alloc_objects", MT_METRIC_ALLOC_OBJECTS}, {"count", MT_METRIC_ALLOC_OBJECTS},
    {"objects", MT_METRIC_ALLOC_OBJECTS},
    {"live_bytes", MT_METRIC_LIVE_BYTES},    {"live", MT_METRIC_LIVE_BYTES},
    {"inuse_space", MT_METRIC_LIVE_BYTES},   {"inuse", MT_METRIC_LIVE_BYTES},
    {"live_objects", MT_METRIC_LIVE_OBJECTS}, {"inuse_objects", MT_METRIC_LIVE_OBJECTS},
    {"live_count", MT_METRIC_LIVE_OBJECTS},
    {"samples", MT_METRIC_SAMPLES},
    {"temporary", MT_METRIC_TEMP_OBJECTS},   {"temp_objects", MT_METRIC_TEMP_OBJECTS},
    {"temp", MT_METRIC_TEMP_OBJECTS},        {"temporary_bytes", MT_METRIC_TEMP_BYTES},
    {"temp_bytes", MT_METRIC_TEMP_BYTES},
};

int mt_metric_parse(const char *name)
{
    for (size_t i = 0; i < sizeof metric_names / sizeof metric_names[0]; i++)
        if (!strcmp(name, metric_names[i].name))
            return (int)metric_names[i].m;
    return -1;
}

const char *mt_metric_name(mt_metric metric)
{
    switch (metric) {
    case MT_METRIC_ALLOC_BYTES: return "alloc_bytes";
    case MT_METRIC_ALLOC_OBJECTS: return "alloc_objects";
    case MT_METRIC_LIVE_BYTES: return "live_bytes";
    case MT_METRIC_LIVE_OBJECTS: return "live_objects";
    case MT_METRIC_SAMPLES: return "samples";
    case MT_METRIC_TEMP_OBJECTS: return "temp_objects";
    case MT_METRIC_TEMP_BYTES: return "temp_bytes";
    }
    return "?";
}

/* Sorting indices by a cost found at base + idx * stride + cost_offset. */
typedef struct sort_item {
    double key;
    uint32_t idx;
} sort_item;

static int cmp_item(const void *x, const void *y)
{
    const sort_item *a = x, *b = y;
    if (a->key != b->key)
        return a->key > b->key ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

void mta_sort_by_cost(uint32_t *idx, size_t n, const void *base, size_t stride,
                      size_t cost_offset, mt_metric metric)
{
    sort_item *it = malloc((n ? n : 1) * sizeof *it);
    if (!it)
        return; /* unsorted, but still correct */
    for (size_t i = 0; i < n; i++) {
        const mt_cost *c = (const mt_cost *)((const char *)base + idx[i] * stride + cost_offset);
        it[i].key = mt_cost_get(c, metric);
        it[i].idx = idx[i];
    }
    qsort(it, n, sizeof *it, cmp_item);
    for (size_t i = 0; i < n; i++)
        idx[i] = it[i].idx;
    free(it);
}

/* ------------------------------------------------------------ selection */

/* Per model node: does the stack contain a frame whose function matches? */
static uint8_t *inside_table(const mt_model *m, const mta_pattern *pat, char **err)
{
    uint8_t *fm = malloc(m->stacks.funcs.n + 1);
    uint8_t *in = malloc(m->stacks.nodes.n);
    if (!fm || !in || mta_pattern_match_funcs(pat, m->stacks.funcs.v, m->stacks.funcs.n, fm, err) < 0) {
        free(fm);
        free(in);
        return NULL;
    }
    in[0] = 0;
    for (size_t i = 1; i < m->stacks.nodes.n; i++) {
        const mt_node *n = &m->stacks.nodes.v[i];
        in[i] = in[n->parent] | fm[m->stacks.frames.v[n->frame].func];
    }
    free(fm);
    return in;
}

/* Build the selection trie without the hidden frames. */
static int hide_frames(mt_selection *s, const mt_filter *f, char **err)
{
    const mt_model *m = s->m;
    uint8_t *hidden = calloc(m->stacks.funcs.n + 1, 1);
    uint8_t *hit = malloc(m->stacks.funcs.n + 1);
    if (!hidden || !hit) {
        free(hidden);
        free(hit);
        return -1;
    }
    int any = 0;
    for (size_t k = 0; k < f->n; k++) {
        if (f->c[k].kind != MTA_HIDE)
            continue;
        if (mta_pattern_match_funcs(&f->c[k].pat, m->stacks.funcs.v, m->stacks.funcs.n, hit, err) < 0) {
            free(hidden);
            free(hit);
            return -1;
        }
        for (size_t i = 0; i < m->stacks.funcs.n; i++)
            if (hit[i])
                hidden[i] = any = 1;
    }
    free(hit);
    if (!any) {
        free(hidden);
        return 0;
    }
    mta_table kids;
    s->map = malloc(m->stacks.nodes.n * sizeof *s->map);
    s->own_nodes = malloc(m->stacks.nodes.n * sizeof *s->own_nodes);
    if (!s->map || !s->own_nodes || mta_table_init(&kids, m->stacks.nodes.n) < 0) {
        free(hidden);
        return -1;
    }
    s->own_nodes[0] = m->stacks.nodes.v[0];
    s->map[0] = 0;
    size_t n = 1;
    for (size_t i = 1; i < m->stacks.nodes.n; i++) {
        const mt_node *nd = &m->stacks.nodes.v[i];
        mt_node_id p = s->map[nd->parent];
        if (hidden[m->stacks.frames.v[nd->frame].func]) {
            s->map[i] = p;
            continue;
        }
        uint64_t key = (uint64_t)p << 32 | nd->frame;
        int64_t c = mta_table_get(&kids, key);
        if (c < 0) {
            c = (int64_t)n;
            s->own_nodes[n].parent = p;
            s->own_nodes[n].frame = nd->frame;
            s->own_nodes[n].depth = s->own_nodes[p].depth + 1;
            n++;
            if (mta_table_put(&kids, key, (uint32_t)c) < 0) {
                mta_table_destroy(&kids);
                free(hidden);
                return -1;
            }
        }
        s->map[i] = (mt_node_id)c;
    }
    mta_table_destroy(&kids);
    free(hidden);
    s->nodes = s->own_nodes;
    s->n_nodes = n;
    return 0;
}

/* Cut the selection trie's stacks deeper than MT_STACK_MAX_DEPTH (see
 * analyze.h): a new trie where nodes up to that depth are copied as they
 * are, and each deep stack an allocation ends at becomes the [truncated]
 * node plus its innermost frames. The work is bounded by the number of
 * nodes plus MT_STACK_MAX_DEPTH per distinct deep stack, whatever the
 * depth of the stacks. */
static int cap_depth(mt_selection *s)
{
    const mt_model *m = s->m;
    if (m->stacks.deepest <= MT_STACK_MAX_DEPTH)
        return 0;
    size_t nn = s->n_nodes;
    const mt_node *old = s->nodes;
    int deep = 0;
    for (size_t i = 1; i < nn && !deep; i++)
        deep = old[i].depth > MT_STACK_MAX_DEPTH;
    if (!deep)
        return 0; /* hidden frames made every stack short enough */
    uint8_t *need = calloc(nn, 1);
    mt_node_id *map = malloc(nn * sizeof *map);
    mt_frame_id *window = malloc(MT_STACK_MAX_DEPTH * sizeof *window);
    MTA_VEC(mt_node) out = {0};
    mta_table kids = {0};
    int rc = -1;
    if (!need || !map || !window || mta_table_init(&kids, 1024) < 0)
        goto done;
    for (size_t i = 0; i < mta_n_allocs(m); i++) {
        mt_node_id n = m->whole->allocs.v[i].stack;
        need[s->map ? s->map[n] : n] = 1;
    }
    for (size_t n = 0; m->fold && n < m->stacks.nodes.n; n++)
        if (mta_fold_counts(s, (mt_node_id)n))
            need[s->map ? s->map[n] : n] = 1;
    mt_node root = old[0];
    mt_node tr = {.parent = 0, .frame = m->stacks.trunc_frame, .depth = 1};
    if (MTA_PUSH(out, root) < 0 || MTA_PUSH(out, tr) < 0)
        goto done;
    const mt_node_id trunc = 1;
    size_t budget_used = 0;
    map[0] = 0;
    for (size_t i = 1; i < nn; i++) {
        const mt_node *nd = &old[i];
        if (nd->depth <= MT_STACK_MAX_DEPTH) {
            /* parents come first, and a trie has no duplicate children */
            mt_node c = {.parent = map[nd->parent], .frame = nd->frame, .depth = nd->depth};
            if (out.n >= UINT32_MAX - 1 || MTA_PUSH(out, c) < 0)
                goto done;
            map[i] = (mt_node_id)(out.n - 1);
            continue;
        }
        map[i] = trunc;
        if (!need[i])
            continue;
        size_t keep = budget_used < MT_STACK_CUT_BUDGET ? MT_STACK_MAX_DEPTH - 1
                                                         : MT_STACK_CUT_SHORT - 1;
        mt_node_id p = (mt_node_id)i;
        for (size_t k = 0; k < keep; k++) {
            window[k] = old[p].frame;
            p = old[p].parent;
        }
        mt_node_id node = trunc;
        for (size_t k = keep; k-- > 0;) {
            uint64_t key = (uint64_t)node << 32 | window[k];
            int64_t c = mta_table_get(&kids, key);
            if (c < 0) {
                mt_node nw = {.parent = node, .frame = window[k],
                              .depth = out.v[node].depth + 1};
                if (out.n >= UINT32_MAX - 1 || MTA_PUSH(out, nw) < 0 ||
                    mta_table_put(&kids, key, (uint32_t)(out.n - 1)) < 0)
                    goto done;
                c = (int64_t)(out.n - 1);
                budget_used++;
            }
            node = (mt_node_id)c;
        }
        map[i] = node;
    }
    /* model node -> old selection node -> new one */
    if (s->map) {
        for (size_t j = 0; j < m->stacks.nodes.n; j++)
            s->map[j] = map[s->map[j]];
        free(map);
    } else {
        s->map = map;
    }
    map = NULL;
    free(s->own_nodes);
    s->own_nodes = out.v;
    out.v = NULL;
    s->nodes = s->own_nodes;
    s->n_nodes = out.n;
    rc = 0;
done:
    free(need);
    free(map);
    free(window);
    free(out.v);
    mta_table_destroy(&kids);
    return rc;
}

mt_selection *mt_select(const mt_model *m, const mt_filter *f, mt_timedelta live_at)
{
    return mt_select_sites(m, f, live_at, NULL, NULL);
}

mt_selection *mt_select_err(const mt_model *m, const mt_filter *f, mt_timedelta live_at,
                            char **err)
{
    return mt_select_sites(m, f, live_at, NULL, err);
}

static int cmp_first(const void *x, const void *y, void *ctx)
{
    const uint64_t *first = ctx;
    uint64_t a = first[*(const mt_node_id *)x], b = first[*(const mt_node_id *)y];
    return a < b ? -1 : a > b;
}

/* The selection of a folded model: the allocations were filtered and
 * summed per model node while the trace was read; here the stack-level
 * clauses, hidden frames, plumbing and depth cap apply to those nodes, and
 * the stacks are numbered in the order of their first allocation, as for
 * an unfolded model. */
static mt_selection *select_folded(mt_selection *s, const mt_filter *f, const mt_plumbing *p,
                                   char **err)
{
    const mt_model *m = s->m;
    size_t nn = m->stacks.nodes.n, nc = f ? f->n : 0;
    mt_node_id *order = NULL;
    for (size_t k = 0; k < nc; k++) {
        if (f->c[k].kind != MTA_INSIDE)
            continue;
        uint8_t *in = inside_table(m, &f->c[k].pat, err);
        if (!in)
            goto fail;
        if (!s->fold_ok) {
            s->fold_ok = malloc(nn ? nn : 1);
            if (!s->fold_ok) {
                free(in);
                goto fail;
            }
            memset(s->fold_ok, 1, nn);
        }
        for (size_t n = 0; n < nn; n++)
            if (in[n] == f->c[k].neg)
                s->fold_ok[n] = 0;
        free(in);
    }
    if ((f && hide_frames(s, f, err) < 0) || (p && mta_plumbing_apply(s, p) < 0) ||
        cap_depth(s) < 0)
        goto fail;
    s->node_slot = malloc(s->n_nodes * sizeof *s->node_slot);
    size_t k = 0;
    order = malloc((nn ? nn : 1) * sizeof *order);
    if (!s->node_slot || !order)
        goto fail;
    memset(s->node_slot, 0xff, s->n_nodes * sizeof *s->node_slot);
    for (size_t n = 0; n < nn; n++)
        if (mta_fold_counts(s, (mt_node_id)n))
            order[k++] = (mt_node_id)n;
    qsort_r(order, k, sizeof *order, cmp_first, m->fold->node_first);
    s->stack_node = malloc((k ? k : 1) * sizeof *s->stack_node);
    s->stack_cost = calloc(k ? k : 1, sizeof *s->stack_cost);
    if (!s->stack_node || !s->stack_cost)
        goto fail;
    for (size_t i = 0; i < k; i++) {
        mt_node_id n = s->map ? s->map[order[i]] : order[i];
        uint32_t slot = s->node_slot[n];
        if (slot == UINT32_MAX) {
            slot = (uint32_t)s->n_stacks++;
            s->node_slot[n] = slot;
            s->stack_node[slot] = n;
        }
        mta_cost_add(&s->stack_cost[slot], &m->fold->node_cost[order[i]]);
    }
    for (size_t i = 0; i < s->n_stacks; i++)
        mta_cost_add(&s->total, &s->stack_cost[i]);
    free(order);
    return s;
fail:
    free(order);
    mt_selection_free(s);
    return NULL;
}

mt_selection *mt_select_sites(const mt_model *m, const mt_filter *f, mt_timedelta live_at,
                              const mt_plumbing *p, char **err)
{
    if (err)
        *err = NULL;
    if (m->fold && (f != m->fold->filter || live_at != m->fold->live_at)) {
        if (err)
            *err = strdup("a folded model is selected only with the filter and time it was "
                          "folded with");
        return NULL;
    }
    mt_selection *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->m = m;
    s->live_at = mt_model_resolve_time(m, live_at);
    s->nodes = m->stacks.nodes.v;
    s->n_nodes = m->stacks.nodes.n;
    if (m->fold) {
        s->bits = calloc(1, sizeof *s->bits);
        return s->bits ? select_folded(s, f, p, err) : (mt_selection_free(s), NULL);
    }
    size_t na = mta_n_allocs(m);
    s->bits = calloc((na + 63) / 64 + 1, sizeof *s->bits);
    if (!s->bits)
        goto fail;
    size_t nc = f ? f->n : 0;
    uint8_t **inside = calloc(nc + 1, sizeof *inside);
    mt_timedelta *live_t = calloc(nc + 1, sizeof *live_t);
    if (!inside || !live_t) {
        free(inside);
        free(live_t);
        goto fail;
    }
    int ok = 1;
    for (size_t k = 0; k < nc; k++) {
        if (f->c[k].kind == MTA_INSIDE && ok &&
            !(inside[k] = inside_table(m, &f->c[k].pat, err)))
            ok = 0;
        if (f->c[k].kind == MTA_LIVE_AT)
            live_t[k] = mt_model_resolve_time(m, f->c[k].lo);
    }
    if (ok) {
        for (size_t i = 0; i < na; i++) {
            const mt_alloc *a = &m->whole->allocs.v[i];
            int pass = 1;
            for (size_t k = 0; k < nc && pass; k++)
                pass = mta_clause_matches(m, &f->c[k], a, inside[k], live_t[k]) != f->c[k].neg;
            if (pass)
                s->bits[i / 64] |= 1ULL << (i % 64);
        }
    }
    for (size_t k = 0; k < nc; k++)
        free(inside[k]);
    free(inside);
    free(live_t);
    if (!ok || (f && hide_frames(s, f, err) < 0) || (p && mta_plumbing_apply(s, p) < 0) ||
        cap_depth(s) < 0)
        goto fail;
    s->node_slot = malloc(s->n_nodes * sizeof *s->node_slot);
    if (!s->node_slot)
        goto fail;
    memset(s->node_slot, 0xff, s->n_nodes * sizeof *s->node_slot);
    /* One pass: number the distinct stacks as they come and sum their
     * costs (per stack in allocation order, as before). The slot of a stack
     * a few allocations ahead is prefetched: with many distinct stacks the
     * cost array is far bigger than the caches. */
    size_t cap = 0;
    size_t nw = (na + 63) / 64;
    int big = s->n_nodes > 65536; /* else the slots stay cached anyway */
    for (size_t w = 0; w < nw; w++) {
        uint64_t bits = s->bits[w];
        while (bits) {
            size_t i = w * 64 + (size_t)__builtin_ctzll(bits);
            bits &= bits - 1;
            const mt_alloc *a = &m->whole->allocs.v[i];
            if (big && i + 16 < na) {
                mt_node_id n16 = m->whole->allocs.v[i + 16].stack, n8 = m->whole->allocs.v[i + 8].stack;
                if (s->map) {
                    n16 = s->map[n16];
                    n8 = s->map[n8];
                }
                __builtin_prefetch(&s->node_slot[n16]);
                uint32_t s8 = s->node_slot[n8];
                if (s8 != UINT32_MAX)
                    __builtin_prefetch(&s->stack_cost[s8], 1);
            }
            mt_node_id n = s->map ? s->map[a->stack] : a->stack;
            uint32_t slot = s->node_slot[n];
            if (slot == UINT32_MAX) {
                if (s->n_stacks == cap) {
                    size_t nc2 = cap ? cap * 2 : 1024;
                    mt_node_id *sn = realloc(s->stack_node, nc2 * sizeof *sn);
                    if (!sn)
                        goto fail;
                    s->stack_node = sn;
                    mt_cost *sc = realloc(s->stack_cost, nc2 * sizeof *sc);
                    if (!sc)
                        goto fail;
                    s->stack_cost = sc;
                    cap = nc2;
                }
                slot = (uint32_t)s->n_stacks++;
                s->node_slot[n] = slot;
                s->stack_node[slot] = n;
                memset(&s->stack_cost[slot], 0, sizeof s->stack_cost[slot]);
            }
            /* mta_cost_of + mta_cost_add in one: this loop runs once
             * per allocation */
            mta_alloc_cost o;
            o.bytes = (double)a->n_samples * m->scale.bytes_per_sample;
            o.obj = mta_alloc_objects(&m->scale, a);
            o.ov = mta_objects_var(&m->scale, a, o.obj);
            o.samples = a->n_samples;
            o.carried = a->carried;
            o.live = mta_is_live(a, s->live_at);
            o.temp = mta_is_temporary(a);
            mta_cost_add_alloc(&s->stack_cost[slot], &o);
        }
    }
    if (!s->stack_node) {
        /* no stacks: keep the arrays non-NULL for the queries */
        s->stack_node = malloc(sizeof *s->stack_node);
        s->stack_cost = calloc(1, sizeof *s->stack_cost);
        if (!s->stack_node || !s->stack_cost)
            goto fail;
    }
    for (size_t k = 0; k < s->n_stacks; k++)
        mta_cost_add(&s->total, &s->stack_cost[k]);
    return s;
fail:
    mt_selection_free(s);
    return NULL;
}

void mt_selection_free(mt_selection *s)
{
    if (!s)
        return;
    free(s->bits);
    free(s->own_nodes);
    free(s->map);
    free(s->via);
    free(s->fold_ok);
    free(s->node_slot);
    free(s->stack_node);
    free(s->stack_cost);
    free(s);
}

const mt_model *mt_selection_model(const mt_selection *s) { return s->m; }
mt_timedelta mt_selection_live_at(const mt_selection *s) { return s->live_at; }
mt_cost mt_selection_total(const mt_selection *s) { return s->total; }
size_t mt_selection_n_nodes(const mt_selection *s) { return s->n_nodes; }
const mt_node *mt_selection_nodes(const mt_selection *s) { return s->nodes; }
const mt_cost *mt_selection_node_cost(const mt_selection *s, mt_node_id n)
{
    static const mt_cost zero;
    uint32_t k = n < s->n_nodes ? s->node_slot[n] : UINT32_MAX;
    return k == UINT32_MAX ? &zero : &s->stack_cost[k];
}

int mt_selection_has(const mt_selection *s, size_t i)
{
    return mta_selection_has(s, i);
}

mt_node_id mt_selection_stack_of(const mt_selection *s, size_t i)
{
    return mt_selection_node_of(s, s->m->whole->allocs.v[i].stack);
}

mt_node_id mt_selection_node_of(const mt_selection *s, mt_node_id model_node)
{
    return s->map ? s->map[model_node] : model_node;
}

size_t mt_selection_stack(const mt_selection *s, mt_node_id node, mt_frame_id *out, size_t cap)
{
    size_t depth = s->nodes[node].depth;
    for (size_t i = depth; i > 0; i--) {
        if (i - 1 < cap)
            out[i - 1] = s->nodes[node].frame;
        node = s->nodes[node].parent;
    }
    return depth;
}

int mt_selection_each_stack(const mt_selection *s, mt_stack_fn fn, void *ctx)
{
    for (size_t k = 0; k < s->n_stacks; k++) {
        int rc = fn(ctx, s->stack_node[k], &s->stack_cost[k]);
        if (rc)
            return rc;
    }
    return 0;
}
