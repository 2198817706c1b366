/*
 * fold.h - a folded model's part (fold.c): the cost of the allocations
 * that passed the fold's filter, per call-path node of the model's stack
 * interner, instead of the allocations themselves; and the table of the
 * blocks still live while the trace is read. Internal.
 *
 * Contract: a folded model answers only mt_select_sites() with the filter
 * and live time it was folded with (select.c); it has no allocation
 * table (model.h: whole is NULL), so no query can reach one.
 */
#ifndef MTA_FOLD_H
#define MTA_FOLD_H

#include "memtrace/analyze.h"
#include "table.h"

#define MTA_OBJ_MEMO_BITS 6

typedef struct mta_folded {
    mt_cost by_source[3];          /* what was folded, per allocation source */
    const mt_filter *filter;       /* the alloc-level clauses decide what is folded */
    mt_timedelta live_at;          /* live costs measured then */
    mt_timedelta peak;             /* what MT_TIME_PEAK stands for */
    mt_timedelta *lt;              /* the time of each clause of filter */
    /* hooks (mt_model_options): on_fold for each allocation folded,
     * on_alloc for each allocation read; stopped: one returned -1 */
    int (*on_fold)(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq);
    int (*on_alloc)(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq);
    void *ctx;
    int stopped;
    /* per node of the model's trie (node_cap of them): the cost, and the
     * file index of the node's first allocation folded (UINT64_MAX: none),
     * which orders the stacks as an unfolded selection would */
    mt_cost *node_cost;
    uint64_t *node_first;
    size_t node_cap;
    uint64_t n_allocs_read;        /* allocations read, folded or not */
    /* recent mta_alloc_objects results; n_samples 0: empty */
    struct mta_obj_memo { uint64_t size, n_samples; double obj, var; int ext; }
        obj_memo[1 << MTA_OBJ_MEMO_BITS];
} mta_folded;

/* An empty part (NULL when out of memory), and its end. */
mta_folded *mta_folded_new(void);
void mta_folded_free(mta_folded *f);
/* Room for the costs of nodes [0, n). Returns 0, or -1 when out of memory. */
int mta_folded_cover(mta_folded *f, size_t n);

/* Fold one allocation of m (folded: m->fold) into its node's cost when it
 * passes the alloc-level clauses of the fold's filter. Returns 0, or -1
 * when out of memory or stopped by on_fold. */
int mta_fold(mt_model *m, const mt_alloc *a, uint64_t seq);

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
/* Is id's block (if live) in the window's ring? */
static inline int mta_live_in_window(const mta_live *l, uint64_t id)
{
    return id - l->base < MTA_LIVE_WINDOW;
}
/* Prefetches what looking id up will read: with rec = 0 the ring or table
 * slot, with rec = 1 (a little later, once the slot is in the cache) the
 * block's record as well. Only a hint: the table may change meanwhile. */
static inline void mta_live_prefetch(const mta_live *l, uint64_t id, int rec)
{
    if (l->ring && mta_live_in_window(l, id)) {
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
/* The out-of-line parts of the three below (fold.c): what the window's
 * ring and the list of free records do not settle. */
mta_live_rec *mta_live_add_slow(mta_live *l, uint64_t id, mta_live_rec *displaced, int *had);
mta_live_rec *mta_live_find_table(mta_live *l, uint64_t id);
void mta_live_remove_slow(mta_live *l, mta_live_rec *r);
/* Returns the record of a new live block (to fill), or NULL when out of
 * memory. A block whose id is already live displaces the older one, which
 * is returned in *displaced (copied) with *had = 1. Inline for an id in
 * the window, new, with a free record to reuse: most allocations. */
static inline mta_live_rec *mta_live_add(mta_live *l, uint64_t id, mta_live_rec *displaced,
                                         int *had)
{
    if (l->ring && mta_live_in_window(l, id) && l->n_free) {
        uint32_t *slot = &l->ring[id & (MTA_LIVE_WINDOW - 1)];
        if (!*slot) {
            uint32_t k = l->free_list[--l->n_free];
            *had = 0;
            *slot = k + 1;
            l->pool[k].id = id;
            return &l->pool[k];
        }
    }
    return mta_live_add_slow(l, id, displaced, had);
}
static inline mta_live_rec *mta_live_find(mta_live *l, uint64_t id)
{
    if (l->ring && mta_live_in_window(l, id)) {
        uint32_t v = l->ring[id & (MTA_LIVE_WINDOW - 1)];
        return v ? &l->pool[v - 1] : NULL;
    }
    return mta_live_find_table(l, id);
}
/* Removes the block (after mta_live_find). Removed records have seq
 * UINT64_MAX: pool[0 .. n_pool) with another seq are the live blocks. */
static inline void mta_live_remove(mta_live *l, mta_live_rec *r)
{
    if (l->ring && mta_live_in_window(l, r->id) && l->n_free < l->cap_free) {
        r->seq = UINT64_MAX;
        l->ring[r->id & (MTA_LIVE_WINDOW - 1)] = 0;
        l->free_list[l->n_free++] = (uint32_t)(r - l->pool);
        return;
    }
    mta_live_remove_slow(l, r);
}
void mta_live_free(mta_live *l);

#endif
