/*
 * fold.c - folded models: the table of the blocks still live while a trace
 * is read, and folding each finished allocation into its stack's cost, so
 * that a report needs memory for the live blocks and the distinct stacks
 * instead of one record per allocation.
 */
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "filter.h"
#include "fold.h"
#include "scale.h"
#include "select.h"

typedef struct mta_live_slot slot_t;

/* Zeroed memory for the ring and the table, which are looked up at
 * random: when big, on huge pages where the system gives them on request
 * (fewer TLB misses). */
static void huge_hint(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t page = 4096, huge = (uintptr_t)2 << 20;
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + bytes) & ~(page - 1);
    if (hi > lo && hi - lo >= huge)
        madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* (only a hint) */
#else
    (void)p;
    (void)bytes;
#endif
}

static void *big_zalloc(size_t n, size_t size)
{
    const size_t huge = (size_t)2 << 20;
    if (size && n > SIZE_MAX / size)
        return NULL;
    size_t bytes = n * size;
    if (bytes < huge)
        return calloc(n, size);
    void *p = NULL;
    if (posix_memalign(&p, huge, bytes) != 0)
        return NULL;
    huge_hint(p, bytes);
    memset(p, 0, bytes);
    return p;
}

static inline size_t live_home(uint64_t id, size_t mask)
{
    return (size_t)mta_hash64(id) & mask;
}

static int live_rehash(mta_live *l, size_t cap)
{
    slot_t *s = big_zalloc(cap, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; l->slots && i <= l->mask; i++) {
        if (!l->slots[i].rec)
            continue;
        size_t j = live_home(l->slots[i].id, cap - 1);
        while (s[j].rec)
            j = (j + 1) & (cap - 1);
        s[j] = l->slots[i];
    }
    free(l->slots);
    l->slots = s;
    l->mask = cap - 1;
    return 0;
}

/* The slot of id in the table, or of the empty slot where it would go. */
static inline size_t live_slot(const mta_live *l, uint64_t id)
{
    size_t j = live_home(id, l->mask);
    while (l->slots[j].rec && l->slots[j].id != id)
        j = (j + 1) & l->mask;
    return j;
}

static int table_put(mta_live *l, uint64_t id, uint32_t rec)
{
    /* At most three quarters full: probes stay short (2.5 slots on average
     * for a block found, most in the cache line of its home slot, which is
     * prefetched), and the table of the blocks that outlive the window,
     * the most of a folded model's memory on a long trace, takes 21 to 43
     * bytes per block instead of 32 to 64 (and its rehash, when old and
     * new tables are both held, half as much). */
    if (!l->slots || (l->count + 1) * 4 > (l->mask + 1) * 3) {
        if (live_rehash(l, l->slots ? (l->mask + 1) * 2 : 1024) < 0)
            return -1;
    }
    size_t j = live_slot(l, id);
    MT_ASSERT(rec != 0);   /* rec 0 marks an empty slot */
    l->slots[j].id = id;
    l->slots[j].rec = rec;
    l->count++;
    if (id > l->max_id)
        l->max_id = id;
    return 0;
}

/* Empties slot j (backward-shift deletion: no tombstones, probes stay
 * short). */
static void table_del(mta_live *l, size_t j)
{
    MT_ASSERT(j <= l->mask && l->slots[j].rec && l->count > 0);
    l->slots[j].rec = 0;
    for (size_t i = (j + 1) & l->mask; l->slots[i].rec; i = (i + 1) & l->mask) {
        size_t home = live_home(l->slots[i].id, l->mask);
        /* the entry at i may move to the hole j unless its home lies
         * cyclically in (j, i] */
        int stays = j < i ? (home > j && home <= i) : (home > j || home <= i);
        if (!stays) {
            l->slots[j] = l->slots[i];
            l->slots[i].rec = 0;
            j = i;
        }
    }
    l->count--;
}


/* Moves the window one id on: the oldest id's block (if live) goes to the
 * table, the id entering it comes from the table (if it went there while
 * ahead of the window). Every live block of an id in the window is in
 * the ring; all others are in the table. */
static int window_step(mta_live *l)
{
    uint32_t *slot = &l->ring[l->base & (MTA_LIVE_WINDOW - 1)];
    /* (the block in the ring's slot of base has id base: no need to read
     * its record, likely long out of the caches) */
    if (*slot && table_put(l, l->base, *slot) < 0)
        return -1;
    if (l->slots) {
        /* the table slot of a block that leaves the window a few steps on */
        uint64_t ahead = l->base + MTA_LIVE_AHEAD;
        if (l->ring[ahead & (MTA_LIVE_WINDOW - 1)])
            __builtin_prefetch(&l->slots[live_home(ahead, l->mask)], 1);
    }
    *slot = 0;
    l->base++;
    uint64_t in = l->base + MTA_LIVE_WINDOW - 1;
    if (l->count && in <= l->max_id) {
        size_t j = live_slot(l, in);
        if (l->slots[j].rec) {
            *slot = l->slots[j].rec; /* in & (W - 1) is the slot just freed */
            table_del(l, j);
        }
    }
    return 0;
}

mta_live_rec *mta_live_find_table(mta_live *l, uint64_t id)
{
    if (l->ring && mta_live_in_window(l, id)) {
        uint32_t v = l->ring[id & (MTA_LIVE_WINDOW - 1)];
        return v ? &l->pool[v - 1] : NULL;
    }
    if (!l->slots || !l->count)
        return NULL;
    size_t j = live_slot(l, id);
    return l->slots[j].rec ? &l->pool[l->slots[j].rec - 1] : NULL;
}

mta_live_rec *mta_live_add_slow(mta_live *l, uint64_t id, mta_live_rec *displaced, int *had)
{
    *had = 0;
    if (!l->ring && !(l->ring = big_zalloc(MTA_LIVE_WINDOW, sizeof *l->ring)))
        return NULL;
    /* The window follows ids that count up by small steps (at most 64
     * steps per allocation); other ids go to the table. */
    if (id >= l->base + MTA_LIVE_WINDOW && id < l->base + MTA_LIVE_WINDOW + 64)
        while (id >= l->base + MTA_LIVE_WINDOW)
            if (window_step(l) < 0)
                return NULL;
    mta_live_rec *old = mta_live_find(l, id);
    if (old) {
        *displaced = *old;
        *had = 1;
        return old;
    }
    uint32_t k;
    if (l->n_free) {
        k = l->free_list[--l->n_free];
    } else {
        if (l->n_pool >= UINT32_MAX - 1)
            return NULL;
        if (l->n_pool == l->cap_pool) {
            if (mta_grow((void **)&l->pool, &l->cap_pool, l->n_pool + 1, sizeof *l->pool) < 0)
                return NULL;
        }
        k = (uint32_t)l->n_pool++;
    }
    if (mta_live_in_window(l, id)) {
        l->ring[id & (MTA_LIVE_WINDOW - 1)] = k + 1;
    } else if (table_put(l, id, k + 1) < 0) {
        l->free_list[l->n_free++] = k; /* (it came from there or the pool's end) */
        return NULL;
    }
    l->pool[k].id = id;
    return &l->pool[k];
}

void mta_live_remove_slow(mta_live *l, mta_live_rec *r)
{
    uint32_t k = (uint32_t)(r - l->pool);
    r->seq = UINT64_MAX;
    if (mta_live_in_window(l, r->id)) {
        l->ring[r->id & (MTA_LIVE_WINDOW - 1)] = 0;
    } else {
        size_t j = live_slot(l, r->id);
        if (l->slots[j].rec)
            table_del(l, j);
    }
    if (l->n_free == l->cap_free &&
        mta_grow((void **)&l->free_list, &l->cap_free, l->n_free + 1, sizeof *l->free_list) < 0)
        return; /* out of memory: the record is not reused */
    l->free_list[l->n_free++] = k;
}

void mta_live_free(mta_live *l)
{
    free(l->pool);
    free(l->free_list);
    free(l->slots);
    free(l->ring);
    memset(l, 0, sizeof *l);
}

mta_folded *mta_folded_new(void)
{
    return calloc(1, sizeof(mta_folded));
}

void mta_folded_free(mta_folded *f)
{
    if (!f)
        return;
    free(f->node_cost);
    free(f->node_first);
    free(f->lt);
    free(f);
}

int mta_folded_cover(mta_folded *f, size_t n)
{
    if (f->node_cap >= n)
        return 0;
    /* geometric growth: a caller covering one more node at a time (a
     * profile's samples, each its own stack) copies each cost O(1) times */
    if (n < f->node_cap + f->node_cap / 2)
        n = f->node_cap + f->node_cap / 2;
    mt_cost *c = realloc(f->node_cost, n * sizeof *c);
    if (c)
        f->node_cost = c;
    uint64_t *fi = c ? realloc(f->node_first, n * sizeof *fi) : NULL;
    if (!c || !fi)
        return -1;
    f->node_first = fi;
    memset(c + f->node_cap, 0, (n - f->node_cap) * sizeof *c);
    memset(fi + f->node_cap, 0xff, (n - f->node_cap) * sizeof *fi);
    f->node_cap = n;
    return 0;
}

/* mta_alloc_objects (and mta_objects_var), with the last results kept: a division per
 * allocation costs more than a look at a few recent (size, samples, kind)
 * triples, of which programs have few. */
static inline double fold_objects(mta_folded *fo, const mt_scale *sc, const mt_alloc *a, double *var)
{
    int ext = a->source == MT_SOURCE_EXTERNAL;
    struct mta_obj_memo *e =
        &fo->obj_memo[(a->size * 0x9E3779B97F4A7C15ULL + a->n_samples * 2 + (uint64_t)ext) >>
                          (64 - MTA_OBJ_MEMO_BITS)];
    if (e->size != a->size || e->n_samples != a->n_samples || e->ext != ext) {
        e->size = a->size;
        e->n_samples = a->n_samples;
        e->ext = ext;
        e->obj = mta_alloc_objects(sc, a);
        e->var = mta_objects_var(sc, a, e->obj);
    }
    *var = e->var;
    return e->obj;
}

int mta_fold(mt_model *m, const mt_alloc *a, uint64_t seq)
{
    mta_folded *fo = m->fold;
    const mt_filter *f = fo->filter;
    if (f && f->n) {   /* (an empty filter passes everything) */
        /* live: clauses at a time given as such (END stays END: a block is
         * live at the end exactly when it was never collected) */
        if (!fo->lt) {
            fo->lt = malloc((f->n ? f->n : 1) * sizeof *fo->lt);
            if (!fo->lt)
                return -1;
            for (size_t k = 0; k < f->n; k++)
                fo->lt[k] = f->c[k].lo == MT_TIME_PEAK ? fo->peak : f->c[k].lo;
        }
        if (!mta_alloc_passes(m, f, a, fo->lt))
            return 0;
    }
    /* (with two threads and no hooks, the nodes stay with the reading
     * thread until the end: then the stack says how far to go) */
    size_t need = m->stacks.nodes.n > a->stack ? m->stacks.nodes.n : (size_t)a->stack + 1;
    if (need > fo->node_cap) {
        size_t cap = fo->node_cap ? fo->node_cap : 1024;
        while (cap < need)
            cap *= 2;
        mt_cost *c = realloc(fo->node_cost, cap * sizeof *c);
        if (!c)
            return -1;
        fo->node_cost = c;
        uint64_t *fi = realloc(fo->node_first, cap * sizeof *fi);
        if (!fi)
            return -1;
        fo->node_first = fi;
        memset(c + fo->node_cap, 0, (cap - fo->node_cap) * sizeof *c);
        memset(fi + fo->node_cap, 0xff, (cap - fo->node_cap) * sizeof *fi);
        fo->node_cap = cap;
    }
    /* mta_cost_of + mta_cost_add twice, inline (the same additions in the
     * same order as a selection of a whole model makes) */
    mta_alloc_cost o;
    o.bytes = (double)a->n_samples * m->scale.bytes_per_sample;
    o.obj = fold_objects(fo, &m->scale, a, &o.ov);
    o.samples = a->n_samples;
    o.carried = a->carried;
    o.live = mta_is_live(a, fo->live_at == MT_TIME_PEAK ? fo->peak : fo->live_at);
    o.temp = mta_is_temporary(a);
    mta_cost_add_alloc(&fo->node_cost[a->stack], &o);
    mta_cost_add_alloc(&fo->by_source[a->source < 3 ? a->source : 2], &o);
    if (seq < fo->node_first[a->stack])
        fo->node_first[a->stack] = seq;
    if (fo->on_fold && fo->on_fold(fo->ctx, m, a, seq) < 0) {
        fo->stopped = 1;
        return -1;
    }
    return 0;
}
