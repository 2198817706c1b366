/*
 * model.h - the insides of mt_model and mt_selection, shared by the files
 * of lib/analyze (model building, selections, queries). Internal.
 *
 * A model is three parts around its trace's info and scale: the stack
 * interner (stacks.h), which every model has, and exactly one of
 *   whole  the allocation table (alloctab.h): every allocation, the
 *          collections, the curve's events; what every query reads;
 *   fold   the per-node costs of one filter at one time (fold.h), which
 *          answer only mt_select_sites() with that filter and time.
 * mt_model_is_folded() is fold != NULL.
 */
#ifndef MTA_MODEL_H
#define MTA_MODEL_H

#include <pthread.h>

#include "memtrace/analyze.h"
#include "alloctab.h"
#include "fold.h"
#include "peak.h"
#include "pool.h"
#include "scale.h"
#include "stacks.h"

/* The most samples a model's allocations may hold in all: sums of sample
 * counts are int64_t (live counts) and uint64_t (costs). A trace beyond
 * this is refused. */
#define MTA_MAX_SAMPLES ((uint64_t)1 << 62)

struct mt_model {
    mt_trace_info info;            /* its strings in stacks.strings */
    mt_scale scale;                /* of info: what the estimates need */
    mta_stacks stacks;
    mta_alloctab *whole;           /* whole models only (NULL when folded) */
    mta_folded *fold;              /* folded models only (NULL when whole) */
    int monotone;                  /* event times never decrease in file order */
    mt_timedelta end;              /* the last event, or the recording's end */
    int64_t end_live_samples;
    uint64_t n_promotes, n_collects;
    /* The peak: found while reading (folded), or on first use from the
     * allocation table (ensure_peak, model.c) under the lock. */
    pthread_mutex_t lock;
    int peak_ready;                /* atomic; 1 once peak_time/peak_samples are set */
    int peak_unknown;              /* folded, times going back: not known */
    mt_timedelta peak_time;
    int64_t peak_samples;
    mta_peak_acc peak_acc;         /* the peak's accumulator (folded: while reading) */
    mt_peak peak_est;              /* the estimate, once peak_ready */
    int has_scan;                  /* the trace has leak verdicts (mt_model_scan) */
    mt_timedelta scan_time;
};

/* The allocation table's parts, empty for a folded model. */
static inline size_t mta_n_allocs(const mt_model *m)
{
    return m->whole ? m->whole->allocs.n : 0;
}

/* The curve's events (their number in *n), built on first call (thread
 * safe): none for a folded model; NULL when out of memory. */
const mta_event *mta_events(const mt_model *m, size_t *n);

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

/* Folded models: does model node n hold a cost the selection counts? */
static inline int mta_fold_counts(const mt_selection *s, mt_node_id n)
{
    return s->m->fold->node_first[n] != UINT64_MAX && (!s->fold_ok || s->fold_ok[n]);
}

void mta_verdict_stats(const mt_model *m, const double v[4], const uint64_t n[2], mt_stats *o);

/* The alloc-level clauses (all but inside: and hide:) of f, times of live:
 * clauses resolved in live_t (one per clause). */
int mta_alloc_passes(const mt_model *m, const mt_filter *f, const mt_alloc *a,
                     const mt_timedelta *live_t);

/* Threads for a pass over a trace: requested (1 or 2), or when 0, two
 * unless the route one-thread is forced (mt_read_force) or only one
 * processor is ours (build.c). */
int mta_read_threads(int requested);

/* Sort idx[0..n) by decreasing metric of costs[idx[i]] (stride bytes apart). */
void mta_sort_by_cost(uint32_t *idx, size_t n, const void *base, size_t stride,
                      size_t cost_offset, mt_metric metric);

/* merge.c: is path a resident-memory sidecar (TRACE.rss), not a trace?
 * (A glob such as app.ctf.* picks them up beside the traces.) */
int mta_is_rss_sidecar(const char *path);

#endif
