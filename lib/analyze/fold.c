/*
 * fold.c - folded models: the table of the blocks still live while a trace
 * is read, and folding each finished allocation into its stack's cost, so
 * that a report needs memory for the live blocks and the distinct stacks
 * instead of one record per allocation.
 */
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "model.h"

typedef struct mta_live_slot slot_t;

/* Where an id's probe starts. Ids usually count up, and most blocks die
 * young: runs of 256 consecutive ids keep their order inside one segment
 * of the table (new blocks go to slots next to each other, and freeing a
 * young block finds its slot still cached), while the segments are spread
 * by the keyed hash, so that chosen ids cannot pile up in one place. */
static inline size_t live_home(uint64_t id, size_t mask)
{
    return (size_t)((mta_hash64(id >> 8) << 8) | (id & 255)) & mask;
}

static int live_rehash(mta_live *l, size_t cap)
{
    slot_t *s = calloc(cap, sizeof *s);
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

/* The slot of id, or of the empty slot where it would go. */
static inline size_t live_slot(const mta_live *l, uint64_t id)
{
    size_t j = live_home(id, l->mask);
    while (l->slots[j].rec && l->slots[j].id != id)
        j = (j + 1) & l->mask;
    return j;
}

mta_live_rec *mta_live_find(mta_live *l, uint64_t id)
{
    if (!l->slots)
        return NULL;
    size_t j = live_slot(l, id);
    return l->slots[j].rec ? &l->pool[l->slots[j].rec - 1] : NULL;
}

mta_live_rec *mta_live_add(mta_live *l, uint64_t id, mta_live_rec *displaced, int *had)
{
    *had = 0;
    mta_live_rec *old = mta_live_find(l, id);
    if (old) {
        *displaced = *old;
        *had = 1;
        return old;
    }
    /* at most half full: short probes and short runs to shift on removal */
    if (!l->slots || (l->count + 1) * 2 > l->mask + 1) {
        if (live_rehash(l, l->slots ? (l->mask + 1) * 2 : 1024) < 0)
            return NULL;
    }
    uint32_t k;
    if (l->n_free) {
        k = l->free_list[--l->n_free];
    } else {
        if (l->n_pool >= UINT32_MAX - 1 ||
            (l->n_pool == l->cap_pool &&
             mta_grow((void **)&l->pool, &l->cap_pool, l->n_pool + 1, sizeof *l->pool) < 0))
            return NULL;
        k = (uint32_t)l->n_pool++;
    }
    size_t j = live_slot(l, id);
    l->slots[j].id = id;
    l->slots[j].rec = k + 1;
    l->count++;
    l->pool[k].id = id;
    return &l->pool[k];
}

void mta_live_remove(mta_live *l, mta_live_rec *r)
{
    uint32_t k = (uint32_t)(r - l->pool);
    size_t j = live_slot(l, r->id);
    /* backward-shift deletion: no tombstones, probes stay short */
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
    memset(l, 0, sizeof *l);
}

int mta_fold(mt_model *m, const mt_alloc *a, uint64_t seq)
{
    const mt_filter *f = m->fold_filter;
    if (f) {
        /* live: clauses at a time given as such (END stays END: a block is
         * live at the end exactly when it was never collected) */
        mt_timedelta lt[f->n ? f->n : 1];
        for (size_t k = 0; k < f->n; k++)
            lt[k] = f->c[k].lo;
        if (!mta_alloc_passes(m, f, a, lt))
            return 0;
    }
    if (m->nodes.n > m->node_cap) {
        size_t cap = m->node_cap ? m->node_cap : 1024;
        while (cap < m->nodes.n)
            cap *= 2;
        mt_cost *c = realloc(m->node_cost, cap * sizeof *c);
        if (!c)
            return -1;
        m->node_cost = c;
        uint64_t *fi = realloc(m->node_first, cap * sizeof *fi);
        if (!fi)
            return -1;
        m->node_first = fi;
        memset(c + m->node_cap, 0, (cap - m->node_cap) * sizeof *c);
        memset(fi + m->node_cap, 0xff, (cap - m->node_cap) * sizeof *fi);
        m->node_cap = cap;
    }
    mt_cost c;
    mta_cost_of(m, a, m->fold_live_at, &c);
    mta_cost_add(&m->node_cost[a->stack], &c);
    if (seq < m->node_first[a->stack])
        m->node_first[a->stack] = seq;
    return 0;
}
