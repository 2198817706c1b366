/*
 * select.h - the insides of mt_selection (select.c): what a filter kept of
 * a model, shared by the queries that read a selection (trees, graphs,
 * curves, histograms, comparisons). Internal.
 */
#ifndef MTA_SELECT_H
#define MTA_SELECT_H

#include "memtrace/analyze.h"
#include "model.h"

struct mt_selection {
    const mt_model *m;
    mt_timedelta live_at;
    uint64_t *bits;                /* allocation i passes: bit i */
    const mt_node *nodes;          /* the model's trie, or own_nodes */
    mt_node *own_nodes;
    size_t n_nodes;
    mt_node_id *map;               /* model node -> selection node; NULL: identity */
    /* Distinct stacks with selected allocations, in order of first use:
     * stack_node[k] is the selection node, stack_cost[k] its self cost. */
    size_t n_stacks;
    mt_node_id *stack_node;
    mt_cost *stack_cost;
    uint32_t *node_slot;           /* selection node -> k, or UINT32_MAX */
    mt_cost total;
    mt_frame_id *via;              /* model node -> plumbing frame left out (plumbing.c) */
    /* Folded models: model node -> its folded cost passes the stack-level
     * clauses (inside:); NULL: every node with a cost passes. */
    uint8_t *fold_ok;
};

/* Does allocation i pass (mt_selection_has, inline for the queries' loops
 * over every allocation or event)? */
static inline int mta_selection_has(const mt_selection *s, size_t i)
{
    return (int)((s->bits[i / 64] >> (i % 64)) & 1);
}

/* Folded models: does model node n hold a cost the selection counts? */
static inline int mta_fold_counts(const mt_selection *s, mt_node_id n)
{
    return s->m->fold->node_first[n] != UINT64_MAX && (!s->fold_ok || s->fold_ok[n]);
}


/* Sort idx[0..n) by decreasing metric of costs[idx[i]] (stride bytes apart). */
void mta_sort_by_cost(uint32_t *idx, size_t n, const void *base, size_t stride,
                      size_t cost_offset, mt_metric metric);

#endif
