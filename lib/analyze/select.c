/*
 * select.c - applying a filter to a model: the pass bitmap, the stack trie
 * with hidden frames removed, and the self cost of every stack.
 */
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "model.h"

double mt_cost_get(const mt_cost *c, mt_metric metric)
{
    switch (metric) {
    case MT_METRIC_ALLOC_BYTES: return c->alloc_bytes;
    case MT_METRIC_ALLOC_OBJECTS: return c->alloc_objects;
    case MT_METRIC_LIVE_BYTES: return c->live_bytes;
    case MT_METRIC_LIVE_OBJECTS: return c->live_objects;
    case MT_METRIC_SAMPLES: return (double)c->samples;
    }
    return 0;
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

static int match_clause(const mt_model *m, const mta_clause *c, const mt_alloc *a,
                        const uint8_t *inside, mt_timedelta live_t)
{
    switch (c->kind) {
    case MTA_ALLOC: return a->time >= c->lo && a->time <= c->hi;
    case MTA_LIVE_AT: return mta_is_live(a, live_t);
    case MTA_LIVE_RANGE: return a->time <= c->hi && a->collect > c->lo;
    case MTA_COLLECT: return a->collect != MT_TIME_NEVER && a->collect >= c->lo && a->collect <= c->hi;
    case MTA_COLLECT_NEVER: return a->collect == MT_TIME_NEVER;
    case MTA_SIZE: return (int64_t)a->size >= c->lo && (int64_t)a->size <= c->hi;
    case MTA_LIFETIME: {
        int64_t end = a->collect == MT_TIME_NEVER ? m->end : a->collect;
        int64_t life = end - a->time;
        return life >= c->lo && life <= c->hi;
    }
    case MTA_SOURCE: return (c->sources >> a->source) & 1;
    case MTA_KIND: {
        int k = mta_kind_of(m, a);
        return k >= 0 && ((c->sources >> k) & 1);
    }
    case MTA_INSIDE: return inside[a->stack];
    case MTA_HIDE: return 1;
    }
    return 1;
}

/* Per model node: does the stack contain a frame whose function matches? */
static uint8_t *inside_table(const mt_model *m, const mta_pattern *pat)
{
    uint8_t *fm = malloc(m->funcs.n + 1);
    uint8_t *in = malloc(m->nodes.n);
    if (!fm || !in) {
        free(fm);
        free(in);
        return NULL;
    }
    for (size_t i = 0; i < m->funcs.n; i++)
        fm[i] = (uint8_t)mta_pattern_match(pat, m->funcs.v[i].name);
    in[0] = 0;
    for (size_t i = 1; i < m->nodes.n; i++) {
        const mt_node *n = &m->nodes.v[i];
        in[i] = in[n->parent] | fm[m->frames.v[n->frame].func];
    }
    free(fm);
    return in;
}

/* Build the selection trie without the hidden frames. */
static int hide_frames(mt_selection *s, const mt_filter *f)
{
    const mt_model *m = s->m;
    uint8_t *hidden = calloc(m->funcs.n + 1, 1);
    if (!hidden)
        return -1;
    int any = 0;
    for (size_t i = 0; i < m->funcs.n; i++)
        for (size_t k = 0; k < f->n; k++)
            if (f->c[k].kind == MTA_HIDE && mta_pattern_match(&f->c[k].pat, m->funcs.v[i].name)) {
                hidden[i] = 1;
                any = 1;
                break;
            }
    if (!any) {
        free(hidden);
        return 0;
    }
    mta_table kids;
    s->map = malloc(m->nodes.n * sizeof *s->map);
    s->own_nodes = malloc(m->nodes.n * sizeof *s->own_nodes);
    if (!s->map || !s->own_nodes || mta_table_init(&kids, m->nodes.n) < 0) {
        free(hidden);
        return -1;
    }
    s->own_nodes[0] = m->nodes.v[0];
    s->map[0] = 0;
    size_t n = 1;
    for (size_t i = 1; i < m->nodes.n; i++) {
        const mt_node *nd = &m->nodes.v[i];
        mt_node_id p = s->map[nd->parent];
        if (hidden[m->frames.v[nd->frame].func]) {
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

mt_selection *mt_select(const mt_model *m, const mt_filter *f, mt_timedelta live_at)
{
    mt_selection *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->m = m;
    s->live_at = mt_model_resolve_time(m, live_at);
    s->nodes = m->nodes.v;
    s->n_nodes = m->nodes.n;
    size_t na = m->allocs.n;
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
        if (f->c[k].kind == MTA_INSIDE && !(inside[k] = inside_table(m, &f->c[k].pat)))
            ok = 0;
        if (f->c[k].kind == MTA_LIVE_AT)
            live_t[k] = mt_model_resolve_time(m, f->c[k].lo);
    }
    if (ok) {
        for (size_t i = 0; i < na; i++) {
            const mt_alloc *a = &m->allocs.v[i];
            int pass = 1;
            for (size_t k = 0; k < nc && pass; k++)
                pass = match_clause(m, &f->c[k], a, inside[k], live_t[k]) != f->c[k].neg;
            if (pass)
                s->bits[i / 64] |= 1ULL << (i % 64);
        }
    }
    for (size_t k = 0; k < nc; k++)
        free(inside[k]);
    free(inside);
    free(live_t);
    if (!ok || (f && hide_frames(s, f) < 0))
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
            const mt_alloc *a = &m->allocs.v[i];
            if (big && i + 16 < na) {
                mt_node_id n16 = m->allocs.v[i + 16].stack, n8 = m->allocs.v[i + 8].stack;
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
            /* mta_cost_of + mta_cost_add, inline: this loop runs once
             * per allocation */
            mt_cost *c = &s->stack_cost[slot];
            double bytes = (double)a->n_samples * m->bps, obj = mta_alloc_objects(m, a);
            c->alloc_bytes += bytes;
            c->alloc_objects += obj;
            c->samples += a->n_samples;
            c->allocs++;
            if (mta_is_live(a, s->live_at)) {
                c->live_bytes += bytes;
                c->live_objects += obj;
                c->live_samples += a->n_samples;
            }
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
    return (s->bits[i / 64] >> (i % 64)) & 1;
}

mt_node_id mt_selection_stack_of(const mt_selection *s, size_t i)
{
    mt_node_id n = s->m->allocs.v[i].stack;
    return s->map ? s->map[n] : n;
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
