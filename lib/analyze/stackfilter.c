/*
 * stackfilter.c - a filter evaluated on one allocation at a time while a
 * folded model is still being read (mt_stream_filter, memtrace/stream.h):
 * the allocation-level clauses as mta_fold applies them, and the stack-level
 * ones (inside:) from per-function match results and per-node results that
 * grow with the model. Nodes come after their parents, so a new node's
 * answer is its parent's or'ed with its own frame's function.
 */
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "select.h"
#include "memtrace/stream.h"

struct mt_stream_filter {
    const mt_filter *f;
    mt_timedelta *live_t;      /* per clause: live: time (peak resolved) */
    int at_alloc;              /* no clause needs the collection time */
    size_t n_pat;              /* clauses with a pattern (inside:, hide:) */
    size_t *pat_k;             /* their clause indices */
    uint8_t **func_hit;        /* per pattern clause: per function, matches */
    size_t n_funcs, cap_funcs; /* functions matched so far */
    uint8_t **node_in;         /* per pattern clause (inside: only): per node */
    uint8_t *node_ok;          /* per node: every inside: clause holds */
    size_t n_nodes, cap_nodes; /* nodes evaluated so far */
};

mt_stream_filter *mt_stream_filter_new(const mt_filter *f, mt_timedelta peak)
{
    mt_stream_filter *sf = calloc(1, sizeof *sf);
    size_t nc = f ? f->n : 0;
    if (!sf)
        return NULL;
    sf->f = f;
    sf->at_alloc = 1;
    sf->live_t = calloc(nc + 1, sizeof *sf->live_t);
    sf->pat_k = calloc(nc + 1, sizeof *sf->pat_k);
    sf->func_hit = calloc(nc + 1, sizeof *sf->func_hit);
    sf->node_in = calloc(nc + 1, sizeof *sf->node_in);
    if (!sf->live_t || !sf->pat_k || !sf->func_hit || !sf->node_in) {
        mt_stream_filter_free(sf);
        return NULL;
    }
    for (size_t k = 0; k < nc; k++) {
        const mta_clause *c = &f->c[k];
        /* as mta_fold: END stays END (live at the end = never collected) */
        sf->live_t[k] = c->lo == MT_TIME_PEAK ? peak : c->lo;
        switch (c->kind) {
        case MTA_LIVE_AT:
        case MTA_LIVE_RANGE:
        case MTA_COLLECT:
        case MTA_COLLECT_NEVER:
        case MTA_LIFETIME: sf->at_alloc = 0; break;
        case MTA_INSIDE:
        case MTA_HIDE: sf->pat_k[sf->n_pat++] = k; break;
        default: break;
        }
    }
    return sf;
}

void mt_stream_filter_free(mt_stream_filter *sf)
{
    if (!sf)
        return;
    for (size_t i = 0; i < sf->n_pat; i++) {
        free(sf->func_hit[i]);
        free(sf->node_in[i]);
    }
    free(sf->func_hit);
    free(sf->node_in);
    free(sf->node_ok);
    free(sf->pat_k);
    free(sf->live_t);
    free(sf);
}

int mt_stream_filter_at_alloc(const mt_stream_filter *sf) { return sf->at_alloc; }

int mt_stream_filter_keeps_all(const mt_stream_filter *sf)
{
    for (size_t k = 0; sf->f && k < sf->f->n; k++)
        if (sf->f->c[k].kind != MTA_HIDE)
            return 0;
    return 1;
}

/* Grows every array of per-item bytes to hold need items. */
static int grow_bytes(uint8_t **arrays, size_t n_arrays, uint8_t **extra, size_t *cap,
                      size_t need)
{
    if (need <= *cap)
        return 0;
    size_t cap2 = *cap ? *cap : 256;
    while (cap2 < need)
        cap2 *= 2;
    for (size_t i = 0; i < n_arrays; i++) {
        uint8_t *p = realloc(arrays[i], cap2);
        if (!p)
            return -1;
        arrays[i] = p;
    }
    if (extra) {
        uint8_t *p = realloc(*extra, cap2);
        if (!p)
            return -1;
        *extra = p;
    }
    *cap = cap2;
    return 0;
}

int mt_stream_filter_sync(mt_stream_filter *sf, const mt_model *m, char **err)
{
    if (err)
        *err = NULL;
    if (!sf->n_pat)
        return 0;
    size_t nf = m->stacks.funcs.n, nn = m->stacks.nodes.n;
    if (nf > sf->n_funcs) {
        if (grow_bytes(sf->func_hit, sf->n_pat, NULL, &sf->cap_funcs, nf) < 0)
            return -1;
        for (size_t i = 0; i < sf->n_pat; i++)
            if (mta_pattern_match_funcs(&sf->f->c[sf->pat_k[i]].pat, m->stacks.funcs.v + sf->n_funcs,
                                        nf - sf->n_funcs, sf->func_hit[i] + sf->n_funcs,
                                        err) < 0)
                return -1;
        sf->n_funcs = nf;
    }
    if (nn > sf->n_nodes) {
        size_t cap = sf->cap_nodes;
        if (grow_bytes(sf->node_in, sf->n_pat, &sf->node_ok, &cap, nn) < 0)
            return -1;
        sf->cap_nodes = cap;
        for (size_t n = sf->n_nodes; n < nn; n++) {
            const mt_node *node = &m->stacks.nodes.v[n];
            int ok = 1;
            for (size_t i = 0; i < sf->n_pat; i++) {
                const mta_clause *c = &sf->f->c[sf->pat_k[i]];
                if (c->kind != MTA_INSIDE)
                    continue;
                uint8_t in = n == 0 ? 0 : sf->node_in[i][node->parent] |
                                              sf->func_hit[i][m->stacks.frames.v[node->frame].func];
                sf->node_in[i][n] = in;
                if (in == c->neg)
                    ok = 0;
            }
            sf->node_ok[n] = (uint8_t)ok;
        }
        sf->n_nodes = nn;
    }
    return 0;
}

int mt_stream_filter_passes(mt_stream_filter *sf, const mt_model *m, const mt_alloc *a,
                            char **err)
{
    if (!sf->f)
        return 1;
    if (sf->n_pat && a->stack >= sf->n_nodes && mt_stream_filter_sync(sf, m, err) < 0)
        return -1;
    if (sf->n_pat && !sf->node_ok[a->stack])
        return 0;
    return mta_alloc_passes(m, sf->f, a, sf->live_t);
}
