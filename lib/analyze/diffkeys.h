/*
 * diffkeys.h - what names the entries of a comparison (diffkeys.c) and what
 * compare.c accumulates in them: the entry table keyed by site or function
 * name, the trie of call paths by function names, the string pool of a
 * result. Internal to lib/analyze.
 */
#ifndef MTA_DIFFKEYS_H
#define MTA_DIFFKEYS_H

#include <stdint.h>

#include "memtrace/compare.h"

/* A sum of positive doubles kept in two parts (hi + lo: about 106 bits),
 * so that its rounded value does not depend on the order of the terms: a
 * comparison summed allocation by allocation (whole model) and one summed
 * stack by stack while folding (difffold.c) give the same result. */
typedef struct mtd_sum {
    double hi, lo;
} mtd_sum;

/* The allocations of one part: the sum of their raw values (before any
 * per-second scale), of value^2 / samples, and their samples. */
typedef struct mtd_part {
    mtd_sum v, sq;
    uint64_t k;
} mtd_part;

/* Per entry: the allocations only the base counts [0], only the new [1],
 * and both [2] (two windows or moments of one trace). */
typedef struct acc {
    mtd_part p[3];
} acc;

static inline void mtd_sum_add(mtd_sum *s, double x)
{
    double hi = s->hi + x;
    double bb = hi - s->hi;
    s->lo += (s->hi - (hi - bb)) + (x - bb);   /* the rounding error of hi (two-sum) */
    s->hi = hi;
}

static inline void mtd_sum_merge(mtd_sum *s, const mtd_sum *o)
{
    mtd_sum_add(s, o->hi);
    s->lo += o->lo;
}

static inline double mtd_sum_value(const mtd_sum *s)
{
    return s->hi + s->lo;
}

static inline void mtd_part_add(mtd_part *p, double v, uint64_t n)
{
    mtd_sum_add(&p->v, v);
    mtd_sum_add(&p->sq, v * v / (double)n);
    p->k += n;
}

static inline void mtd_acc_merge(acc *a, const acc *o)
{
    for (int i = 0; i < 3; i++) {
        mtd_sum_merge(&a->p[i].v, &o->p[i].v);
        mtd_sum_merge(&a->p[i].sq, &o->p[i].sq);
        a->p[i].k += o->p[i].k;
    }
}

/* A side's membership made concrete: allocated in [from, to] and, for the
 * live measures, live at `at`; a block carried over from an earlier piece
 * of a rotated recording is live, never allocated (docs/recorder.md), as
 * in every other report (mta_cost_of). MTD_AT_END: live at the end, that is never
 * freed (what a folded side uses: the end is not known while folding). */
typedef struct mtd_side {
    mt_timedelta from, to, at;
} mtd_side;
#define MTD_AT_END INT64_MIN

static inline int mtd_is_live_metric(mt_metric m)
{
    return m == MT_METRIC_LIVE_BYTES || m == MT_METRIC_LIVE_OBJECTS;
}

static inline int mtd_member(const mtd_side *r, const mt_alloc *a, int live)
{
    if (a->time < r->from || a->time > r->to)
        return 0;
    if (!live)
        return !a->carried;
    if (r->at == MTD_AT_END)
        return a->collect == MT_TIME_NEVER;
    return a->time <= r->at && a->collect > r->at;
}

/* The raw value of one allocation under a measure, at a trace's scale. */
double mtd_value(const mt_scale *sc, const mt_alloc *a, mt_metric metric);
/* A pprof profile's stack: its value under a measure and, in *k, the
 * samples behind it (difffold.c; model.h needed). */
double mtd_profile_value(const mt_model *m, mt_node_id node, mt_metric metric, uint64_t *k);
/* s's times resolved in model m (END as a time: the whole model). */
void mtd_side_resolve(mtd_side *r, const mt_diff_side *s, const mt_model *m);
/* A collector's per model node sums (difffold.c): nodes 0 .. n-1; NULL
 * for a node without any. */
size_t mtd_fold_n_nodes(const mt_diff_fold *f);
const acc *mtd_fold_node(const mt_diff_fold *f, size_t node);

typedef struct entry_tab {
    uint32_t *slots;         /* entry index + 1; 0: empty */
    uint64_t *hashes;        /* per entry */
    size_t mask;
    char **keys;             /* per entry */
    mt_diff_entry *e;
    acc *a;
    size_t n, cap;
} entry_tab;

/* Strings of an entry (function and file names) must outlive the models:
 * they are copied into chunks owned by the result. */
typedef struct str_pool {
    char **blocks;
    size_t n, cap;
    char *cur;
    size_t left;
} str_pool;

/* Call paths: function names interned (an id per distinct name) and a trie
 * of paths by name ids, so that a path is one number and its name is only
 * spelt out when asked for (mt_diff_entry_name). Path id 0: the empty path. */
typedef struct paths {
    const char **names;      /* name id -> pooled string */
    uint64_t *name_hash;
    size_t n_names, cap_names;
    uint32_t *name_slots;    /* name id + 1 */
    size_t name_mask;
    uint32_t *parent, *name; /* path id -> parent path id, name id */
    size_t n, cap;
    uint64_t *slot_key;      /* parent << 32 | name */
    uint32_t *slot_val;      /* path id + 1 */
    size_t mask;
    uint32_t *entry;         /* path id -> entry index + 1 */
    size_t cap_entry;
} paths;

struct diff_priv {
    mt_diff d;
    str_pool pool;
    paths paths;
};

int mtd_tab_init(entry_tab *t);
/* keep_entries: the entries array has been handed over to a result. */
void mtd_tab_free(entry_tab *t, int keep_entries);
void mtd_pool_free(str_pool *p);
void mtd_paths_free(paths *ps);
/* The entry (site or function key) of a selection trie node; -1 when out of memory. */
int64_t mtd_entry_of(entry_tab *t, str_pool *pool, const mt_selection *s, mt_node_id node,
                     mt_diff_key kind);
/* The entry of call path pid (created on first use); -1 when out of memory. */
int64_t mtd_tab_add_path(entry_tab *t, paths *ps, uint32_t pid);
/* Path id of every selection node (malloc'd), or NULL when out of memory. */
uint32_t *mtd_node_paths(paths *ps, str_pool *pool, const mt_selection *s);

#endif
