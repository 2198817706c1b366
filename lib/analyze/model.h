/*
 * model.h - the insides of mt_model and mt_selection, shared by the files
 * of lib/analyze (model building, selections, queries). Internal.
 */
#ifndef MTA_MODEL_H
#define MTA_MODEL_H

#include <pthread.h>

#include "memtrace/analyze.h"
#include "table.h"

/* A growable array of fixed-size items. */
#define MTA_VEC(T) struct { T *v; size_t n, cap; }
int mta_grow(void **v, size_t *cap, size_t need, size_t item);
#define MTA_PUSH(vec, item) \
    (((vec).n < (vec).cap || \
      mta_grow((void **)&(vec).v, &(vec).cap, (vec).n + 1, sizeof *(vec).v) == 0) \
         ? ((vec).v[(vec).n++] = (item), 0) : -1)

/* An event of the live-memory curve: allocation (kind 0) or collection (1)
 * of allocs[alloc]. Sorted by time. */
typedef struct mta_event {
    mt_timedelta time;
    uint32_t alloc;
    uint32_t kind : 1;
    /* allocs[alloc].n_samples, kept here so that the curve reads the
     * events in order without visiting the allocations; MTA_EV_SAMPLES_BIG:
     * too big, see allocs[alloc] */
    uint32_t samples : 31;
} mta_event;
#define MTA_EV_SAMPLES_BIG 0x7fffffffu

/* The most samples a model's allocations may hold in all: sums of sample
 * counts are int64_t (live counts) and uint64_t (costs). A trace beyond
 * this is refused. */
#define MTA_MAX_SAMPLES ((uint64_t)1 << 62)

/* The peak's accumulator (peak.c): fed once per time of the curve, in
 * time order, with the live samples before and after that time's events
 * and the samples it allocated. */
#define MTA_PEAK_BINS 4096
typedef struct mta_peak_acc {
    int64_t max;                   /* highest live samples after a time */
    mt_timedelta max_t;            /* the first time it was reached */
    unsigned shift;                /* bin k: levels [k << shift, (k + 1) << shift) */
    uint64_t bin[MTA_PEAK_BINS];   /* samples allocated, by the level before */
} mta_peak_acc;
void mta_peak_init(mta_peak_acc *p);
void mta_peak_time(mta_peak_acc *p, mt_timedelta t, int64_t before, int64_t after,
                   uint64_t allocated);
/* The estimate for bytes per sample bps at the trace's sample rate. */
void mta_peak_result(const mta_peak_acc *p, double bps, double rate, mt_peak *out);

/* String storage, a pool: chunks that live as long as the model. */
typedef struct mta_pool {
    char **chunks;
    size_t n, cap;
    char *cur;
    size_t left;
} mta_pool;
const char *mta_strdup(mta_pool *a, const char *s);
void mta_pool_free(mta_pool *a);

#define MTA_OBJ_MEMO_BITS 6

struct mt_model {
    mt_trace_info info;
    mta_pool strings;
    MTA_VEC(mt_alloc) allocs;
    MTA_VEC(mt_func) funcs;
    MTA_VEC(mt_frame) frames;
    MTA_VEC(mt_node) nodes;
    MTA_VEC(uint32_t) collects;    /* allocations in the order they were collected */
    int monotone;                  /* event times never decrease in file order */
    /* The event list of the curve, built on first use (mta_events): */
    pthread_mutex_t lock;
    int events_ready;              /* atomic; 1 once events and live_after are set */
    int peak_ready;                /* atomic; 1 once peak_time/peak_samples are set */
    MTA_VEC(mta_event) events;     /* sorted by time */
    int64_t *live_after;           /* live samples after events[i] */
    int64_t end_live_samples;
    double bps;                    /* bytes per sample */
    double word_bytes;             /* word_size / 8 */
    double inv_word_bytes, inv_rate;
    mt_timedelta end, peak_time;
    int64_t peak_samples;
    mta_peak_acc peak_acc;         /* the peak's accumulator (folded: while reading) */
    mt_peak peak_est;              /* the estimate, once peak_ready */
    uint64_t n_promotes, n_collects;
    uint32_t deepest;              /* depth of the deepest trie node */
    mt_frame_id trunc_frame;       /* the "[truncated]" frame, when deepest > MT_STACK_MAX_DEPTH */
    /* Folded models (fold.c): the cost of the allocations that passed
     * fold_filter, per model node, and the file index of the node's first
     * such allocation (UINT64_MAX: none), which orders the stacks as an
     * unfolded selection would. */
    int folded;
    mt_cost fold_by_source[3];     /* what was folded, per allocation source */
    const mt_filter *fold_filter;
    int (*on_fold)(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq);
    void *fold_ctx;
    int (*on_alloc)(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq);
    int fold_stopped;              /* on_fold returned -1 */
    mt_timedelta fold_live_at;
    mt_timedelta fold_peak;        /* what MT_TIME_PEAK stands for when folding */
    mt_timedelta *fold_lt;         /* the time of each clause of fold_filter */
    mt_cost *node_cost;
    /* recent mta_alloc_objects results (fold.c); n_samples 0: empty */
    struct mta_obj_memo { uint64_t size, n_samples; double obj, var; int ext; }
        fold_obj_memo[1 << MTA_OBJ_MEMO_BITS];
    uint64_t *node_first;
    size_t node_cap;
    uint64_t n_allocs_read;
    int peak_unknown;
    int has_scan;                  /* the trace has leak verdicts (mt_model_scan) */
    /* A pprof profile (profile.c): MT_PROFILE_*, what it measures
     * (MT_PROFILE_HAS_*), and what kind it is, in words; 0 for a trace. */
    int profile;
    unsigned profile_has;
    const char *profile_kind;
    mt_timedelta scan_time;
};

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
    return s->m->node_first[n] != UINT64_MAX && (!s->fold_ok || s->fold_ok[n]);
}

static inline uint64_t mta_event_samples(const mt_model *m, const mta_event *e)
{
    return e->samples != MTA_EV_SAMPLES_BIG ? e->samples : m->allocs.v[e->alloc].n_samples;
}

/* mt_alloc_objects, inline for the loops that run once per allocation. */
static inline double mta_alloc_objects(const mt_model *m, const mt_alloc *a)
{
    if (m->info.sample_rate <= 0)
        return 0;
    /* Words the sampler ran over: OCaml heap blocks include a header word. */
    double words = (double)a->size * m->inv_word_bytes;
    if (a->source != MT_SOURCE_EXTERNAL)
        words += 1;
    if (words < 1)
        words = 1;
    return (double)a->n_samples * m->inv_rate / words;
}

/* The variance of a block's count estimate obj (mta_alloc_objects):
 * n ~ Binomial(words, rate) gives Var(n / (rate words)) = (1 - rate) /
 * (rate words), estimated without bias by obj^2 / n (1 - rate). */
static inline double mta_objects_var(const mt_model *m, const mt_alloc *a, double obj)
{
    double r = m->info.sample_rate;
    return a->n_samples ? obj * obj / (double)a->n_samples * (r < 1 ? 1 - r : 0) : 0;
}

static inline int mta_is_live(const mt_alloc *a, mt_timedelta t)
{
    return a->time <= t && a->collect > t;
}

static inline void mta_cost_add(mt_cost *d, const mt_cost *s)
{
    d->alloc_bytes += s->alloc_bytes;
    d->alloc_objects += s->alloc_objects;
    d->live_bytes += s->live_bytes;
    d->live_objects += s->live_objects;
    d->samples += s->samples;
    d->live_samples += s->live_samples;
    d->allocs += s->allocs;
    d->temp_bytes += s->temp_bytes;
    d->temp_objects += s->temp_objects;
    d->temp_samples += s->temp_samples;
    d->alloc_objects_var += s->alloc_objects_var;
    d->live_objects_var += s->live_objects_var;
    d->temp_objects_var += s->temp_objects_var;
}

/* The leak verdicts' sums (mt_stats): v[0], v[1] the estimated bytes lost
 * and reachable, v[2], v[3] their variances, n[0], n[1] the sampled blocks.
 * mta_verdict_stats turns them into o's fields (verdict.c). */
static inline void mta_verdict_add(double v[4], uint64_t n[2], const mt_model *m, const mt_alloc *a)
{
    if (a->verdict != MT_VERDICT_LOST && a->verdict != MT_VERDICT_REACHABLE)
        return;
    int k = a->verdict == MT_VERDICT_LOST ? 0 : 1;
    double obj = mta_alloc_objects(m, a), size = (double)a->size;
    v[k] += obj * size;
    v[2 + k] += size * size * mta_objects_var(m, a, obj);
    n[k]++;
}
void mta_verdict_stats(const mt_model *m, const double v[4], const uint64_t n[2], mt_stats *o);

/* A temporary block: freed within MT_TEMPORARY_US of its allocation. */
static inline int mta_is_temporary(const mt_alloc *a)
{
    return a->collect != MT_TIME_NEVER && a->collect - a->time < MT_TEMPORARY_US &&
           !a->carried;
}

/* The cost of one allocation with live measured at t. */
static inline void mta_cost_of(const mt_model *m, const mt_alloc *a, mt_timedelta t, mt_cost *c)
{
    double obj = mta_alloc_objects(m, a), ov = mta_objects_var(m, a, obj);
    c->alloc_bytes = (double)a->n_samples * m->bps;
    c->alloc_objects = obj;
    c->alloc_objects_var = ov;
    c->samples = a->n_samples;
    c->allocs = 1;
    if (mta_is_live(a, t)) {
        c->live_bytes = c->alloc_bytes;
        c->live_objects = obj;
        c->live_objects_var = ov;
        c->live_samples = a->n_samples;
    } else {
        c->live_bytes = c->live_objects = 0;
        c->live_objects_var = 0;
        c->live_samples = 0;
    }
    int temp = mta_is_temporary(a);
    c->temp_bytes = temp ? c->alloc_bytes : 0;
    c->temp_objects = temp ? obj : 0;
    c->temp_samples = temp ? a->n_samples : 0;
    c->temp_objects_var = temp ? ov : 0;
    if (__builtin_expect(a->carried, 0)) {
        /* carried over from an earlier piece: live, not allocated here */
        c->alloc_bytes = c->alloc_objects = 0;
        c->alloc_objects_var = 0;
        c->samples = 0;
    }
}

/* Folding (fold.c). The blocks of a folded model that are still live,
 * by object id: a pool of records and an open-addressing index. */
typedef struct mta_live_rec {
    mt_alloc a;
    uint64_t id;
    uint64_t seq;                  /* file index of the allocation */
} mta_live_rec;
typedef struct mta_live {
    mta_live_rec *pool;
    size_t n_pool, cap_pool;
    uint32_t *free_list;
    size_t n_free, cap_free;
    struct mta_live_slot { uint64_t id; uint32_t rec; } *slots; /* rec: pool index + 1; 0 empty */
    size_t mask, count;
    /* Ids usually count up and most blocks die young: the blocks of the
     * ids base .. base + MTA_LIVE_WINDOW - 1 are found directly in ring
     * (pool index + 1), and those still live when the window moves past
     * them go to the table. */
    uint32_t *ring;
    uint64_t base;
    uint64_t max_id;               /* the highest id ever put in the table */
} mta_live;
#define MTA_LIVE_WINDOW (1u << 20)
#define MTA_LIVE_AHEAD 16          /* prefetch distance, in ids or events */
/* Prefetches what looking id up will read: with rec = 0 the ring or table
 * slot, with rec = 1 (a little later, once the slot is in the cache) the
 * block's record as well. Only a hint: the table may change meanwhile. */
static inline void mta_live_prefetch(const mta_live *l, uint64_t id, int rec)
{
    if (l->ring && id - l->base < MTA_LIVE_WINDOW) {
        const uint32_t *slot = &l->ring[id & (MTA_LIVE_WINDOW - 1)];
        if (!rec)
            __builtin_prefetch(slot);
        else if (*slot && *slot <= l->n_pool) {
            const char *r = (const char *)&l->pool[*slot - 1];
            __builtin_prefetch(r); /* (a record may straddle two lines) */
            __builtin_prefetch(r + sizeof(mta_live_rec) - 1);
        }
    } else if (l->slots && !rec) {
        __builtin_prefetch(&l->slots[(size_t)mta_hash64(id) & l->mask]);
    }
}
/* Returns the record of a new live block (to fill), or NULL when out of
 * memory. A block whose id is already live displaces the older one, which
 * is returned in *displaced (copied) with *had = 1. */
mta_live_rec *mta_live_add(mta_live *l, uint64_t id, mta_live_rec *displaced, int *had);
mta_live_rec *mta_live_find(mta_live *l, uint64_t id);
/* Removes the block (after mta_live_find). Removed records have seq
 * UINT64_MAX: pool[0 .. n_pool) with another seq are the live blocks. */
void mta_live_remove(mta_live *l, mta_live_rec *r);
/* Threads for a pass over a trace: requested (1 or 2), or when 0, two
 * unless the route one-thread is forced (mt_read_force) or only one
 * processor is ours (model.c). */
int mta_read_threads(int requested);
void mta_live_free(mta_live *l);
/* Fold one allocation into m->node_cost when it passes the alloc-level
 * clauses of m->fold_filter. Returns 0, or -1 when out of memory. */
int mta_fold(mt_model *m, const mt_alloc *a, uint64_t seq);
/* The alloc-level clauses (all but inside: and hide:) of f, times of live:
 * clauses resolved in live_t (one per clause). */
int mta_alloc_passes(const mt_model *m, const mt_filter *f, const mt_alloc *a,
                     const mt_timedelta *live_t);

/* The sorted event list and live counts, built on first call (thread
 * safe). NULL when out of memory. */
const mta_event *mta_events(const mt_model *m);

/* Sort idx[0..n) by decreasing metric of costs[idx[i]] (stride bytes apart). */
void mta_sort_by_cost(uint32_t *idx, size_t n, const void *base, size_t stride,
                      size_t cost_offset, mt_metric metric);

/* profile.c: the folded model of a pprof profile (mt_model_load). */
mt_model *mta_profile_load(const char *path, const mt_model_options *opts, char **error);

/* merge.c: is path a resident-memory sidecar (TRACE.rss), not a trace?
 * (A glob such as app.ctf.* picks them up beside the traces.) */
int mta_is_rss_sidecar(const char *path);

#endif
