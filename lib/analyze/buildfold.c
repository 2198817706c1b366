/*
 * buildfold.c - the builder's part for a folded model: its events queued
 * a few steps so that the live blocks they touch are prefetched, each
 * block folded into its stack's cost when collected (fold.c), the blocks
 * never collected at the end in allocation order, the peak found on the
 * fly; and the folding thread's side of a two-thread pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "radix.h"
#include "route.h"
#include "warn.h"

/* A batch's allocation event as the allocation it starts (not yet freed). */
static inline void alloc_of(mt_alloc *a, const mta_pipe_ev *pe)
{
    a->time = pe->time;
    a->collect = MT_TIME_NEVER;
    a->promote = MT_TIME_NEVER;
    a->size = pe->size;
    a->n_samples = pe->n_samples;
    a->stack = pe->stack;
    a->source = pe->source;
    a->carried = pe->carried;
    a->verdict = pe->verdict;
    a->domain = pe->domain;
}

/* An event of a folded model, in file order (after the queue): live
 * blocks in a table, each folded into its stack's cost when collected.
 * The event is the queue's q, or the batch's pe straight (the other NULL;
 * after inlining, one of the two ways remains): its allocation record is
 * then made in the live block's own record, without the queue's copy. */
static inline __attribute__((always_inline)) int add_folded(builder *b, const struct fold_q *q,
                                                            const mta_pipe_ev *pe)
{
    mt_model *m = b->m;
    struct { mt_timedelta time; uint64_t id; int kind; } evs = {
        q ? q->time : pe->time, q ? q->id : pe->id, q ? q->kind : pe->kind
    }, *ev = &evs;
    if (ev->time < b->cur_time)
        m->monotone = 0;
    if (ev->time != b->cur_time) {
        /* the live count after every event of the previous time */
        if (b->live > m->peak_samples) {
            m->peak_samples = b->live;
            m->peak_time = b->cur_time;
        }
        mta_peak_time(&m->peak_acc, b->cur_time, b->live_at_time, b->live, b->alloc_at_time);
        b->live_at_time = b->live;
        b->alloc_at_time = 0;
    }
    b->cur_time = ev->time;
    if (ev->time > m->end)
        m->end = ev->time;
    if (ev->kind == MT_EVENT_ALLOC) {
        mta_live_rec old;
        int had;
        b->why = b->live_blocks.n_pool >= UINT32_MAX - 1 ? "more than 2^32 blocks live at once"
                                                          : "out of memory";
        mta_live_rec *r = mta_live_add(&b->live_blocks, ev->id, &old, &had);
        if (!r || (had && MTA_PUSH(b->displaced, old) < 0))
            return -1;
        if (q) {
            r->a = q->a;
        } else {
            alloc_of(&r->a, pe);
        }
        r->seq = m->fold->n_allocs_read++;
        b->live += (int64_t)r->a.n_samples;
        b->alloc_at_time += r->a.n_samples;
        if (m->fold->on_alloc && m->fold->on_alloc(m->fold->ctx, m, &r->a, r->seq) < 0) {
            m->fold->stopped = 1;
            b->why = "stopped by the caller";
            return -1;
        }
        return 0;
    }
    mta_live_rec *r = mta_live_find(&b->live_blocks, ev->id);
    if (ev->kind == MT_EVENT_PROMOTE) {
        m->n_promotes++;
        if (r && r->a.promote == MT_TIME_NEVER)
            r->a.promote = ev->time;
        return 0;
    }
    m->n_collects++;
    if (!r) {
        mta_build_warn_collect(b, ev->id);
        return 0;
    }
    mt_alloc a = r->a;
    uint64_t seq = r->seq;
    a.collect = ev->time < a.time ? a.time : ev->time;
    b->live -= (int64_t)a.n_samples;
    mta_live_remove(&b->live_blocks, r);
    if (mta_fold(m, &a, seq) < 0) {
        b->why = m->fold->stopped ? "stopped by the caller" : "out of memory";
        return -1;
    }
    return 0;
}

/* The oldest queued event meets the live blocks (inline in the folding
 * thread's loop below: once per event). */
static inline __attribute__((always_inline)) int fold_step(builder *b)
{
    const struct fold_q *e = &b->fq[b->fq_head];
    b->fq_head = (b->fq_head + 1) & (FOLD_AHEAD - 1);
    b->fq_n--;
    return add_folded(b, e, NULL);
}

int mta_build_fold_step(builder *b)
{
    return fold_step(b);
}

/* The queued events, at the end of the trace. */
int mta_build_fold_drain(builder *b)
{
    while (b->fq_n)
        if (mta_build_fold_step(b) < 0)
            return -1;
    return 0;
}

static int cmp_seq(const void *x, const void *y)
{
    const mta_live_rec *a = *(const mta_live_rec *const *)x, *b = *(const mta_live_rec *const *)y;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Folds the blocks never collected (live in the pool, or displaced by a
 * reused id), in allocation order. Their sequence numbers are distinct
 * and below n_allocs_read, so (seq, index) packed in one word sorts by a
 * radix sort of the seq bits; a qsort when they do not fit. */
static int fold_never_collected(builder *b)
{
    mt_model *m = b->m;
    mta_live *l = &b->live_blocks;
    size_t n = l->n_pool + b->displaced.n, k = 0;
    /* the index of the live blocks is of no more use: room for the sort */
    free(l->slots);
    free(l->ring);
    l->slots = NULL;
    l->ring = NULL;
    l->count = 0;
    unsigned seq_bits = mt_bits_for(m->fold->n_allocs_read), idx_bits = mt_bits_for(n);
    int rc = 0;
    if (seq_bits + idx_bits <= 64 && !(mt_read_forced() & MT_ROUTE_QSORT)) {
        uint64_t *v = malloc((n ? n : 1) * sizeof *v), *tmp = malloc((n ? n : 1) * sizeof *tmp);
        if (!v || !tmp) {
            free(v);
            free(tmp);
            return -1;
        }
        for (size_t i = 0; i < l->n_pool; i++)
            if (l->pool[i].seq != UINT64_MAX)
                v[k++] = l->pool[i].seq << idx_bits | i;
        for (size_t i = 0; i < b->displaced.n; i++)
            v[k++] = b->displaced.v[i].seq << idx_bits | (l->n_pool + i);
        uint64_t *sorted = mt_radix_sort(v, tmp, k, idx_bits, seq_bits);
        uint64_t mask = idx_bits ? (((uint64_t)1 << (idx_bits - 1)) << 1) - 1 : 0;
        for (size_t i = 0; sorted && i < k && rc == 0; i++) {
            size_t j = (size_t)(sorted[i] & mask);
            const mta_live_rec *r = j < l->n_pool ? &l->pool[j] : &b->displaced.v[j - l->n_pool];
            rc = mta_fold(m, &r->a, r->seq);
        }
        free(v);
        free(tmp);
        return sorted ? rc : -1;
    }
    const mta_live_rec **v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < l->n_pool; i++)
        if (l->pool[i].seq != UINT64_MAX)
            v[k++] = &l->pool[i];
    for (size_t i = 0; i < b->displaced.n; i++)
        v[k++] = &b->displaced.v[i];
    qsort(v, k, sizeof *v, cmp_seq);
    for (size_t i = 0; i < k && rc == 0; i++)
        rc = mta_fold(m, &v[i]->a, v[i]->seq);
    free(v);
    return rc;
}

/* End of a folded model: the blocks never collected, the peak. */
int mta_build_fold_rest(builder *b)
{
    mt_model *m = b->m;
    int rc = fold_never_collected(b);
    if (m->monotone && b->live > m->peak_samples) {
        m->peak_samples = b->live;
        m->peak_time = b->cur_time;
    }
    if (m->monotone)
        mta_peak_time(&m->peak_acc, b->cur_time, b->live_at_time, b->live, b->alloc_at_time);
    m->peak_unknown = !m->monotone;
    if (m->peak_unknown) {
        m->peak_samples = 0;
        m->peak_time = 0;
        mta_peak_init(&m->peak_acc);
    }
    mta_peak_result(&m->peak_acc, m->scale.bytes_per_sample, m->scale.sample_rate, &m->peak_est);
    m->peak_ready = 1;
    /* the node arrays cover every node, for the selection */
    if (rc == 0 && mta_folded_cover(m->fold, m->stacks.nodes.n) < 0)
        return -1;
    return rc;
}

/* A batch's event into the fold queue's next place (the queue has room). */
static void queue_copy(builder *b, const mta_pipe_ev *pe)
{
    struct fold_q *e = &b->fq[(b->fq_head + b->fq_n) & (FOLD_AHEAD - 1)];
    e->kind = pe->kind;
    e->time = pe->time;
    e->id = pe->id;
    if (pe->kind == MT_EVENT_ALLOC) {
        alloc_of(&e->a, pe);
    }
    b->fq_n++;
}

/* Folding thread: the batches, each event as if it entered the fold queue
 * (mta_build_fold_slot, mta_build_fold_entered: the same folds, prefetches
 * and warnings in the same order), but the batch is the queue while it is
 * at hand: an event is folded from it straight, and only those still
 * waiting at its end (FOLD_AHEAD at most) are copied into the queue, after
 * the older ones it holds, until the reading thread's last batch. Returns
 * 0 at the trace's end, -1 with b->why, or -2 with the reader's error in
 * *message (malloc'd). */
int mta_build_fold_batches(builder *b, mta_pipe *p, char **message)
{
    mt_model *m = b->m;
    const mt_model_options *opts = b->opts;
    uint64_t size = mt_reader_size(b->r), next_progress = 1 << 20;
    for (;;) {
        mta_batch *bt = mta_pipe_take(p);
        b->why = "out of memory";
        if (p->defs && (DEFS_COPY(m->stacks.nodes, bt->nodes, 0) < 0 ||
                        DEFS_COPY(m->stacks.frames, bt->frames, 0) < 0 ||
                        DEFS_COPY(m->stacks.funcs, bt->funcs, 0) < 0)) {
            mta_pipe_release(p);
            return -1;
        }
        memcpy(m->domains.ids, bt->domain_ids, bt->n_domains * sizeof *m->domains.ids);
        m->domains.n = bt->n_domains;
        const mta_pipe_ev *ev = bt->ev;
        size_t n = bt->n, c = 0, waiting = 0; /* ev[c ..]: waiting events, not yet folded */
        for (size_t i = 0; i < n; i++) {
            const mta_pipe_ev *pe = &ev[i];
            /* (the lines come from the other core's cache) */
            if (i + PIPE_AHEAD < n)
                __builtin_prefetch(pe + PIPE_AHEAD);
            if (__builtin_expect(pe->kind == MTA_PIPE_WARNING, 0)) {
                const char *w = bt->warnings.v[pe->id];
                mt_warn(b->warn_fn, b->warn_ctx, w);
                continue;
            }
            if (b->fq_n + waiting == FOLD_AHEAD) {
                /* the oldest event meets the live blocks */
                int rc;
                if (b->fq_n) {
                    rc = fold_step(b);
                } else {
                    while (__builtin_expect(ev[c].kind == MTA_PIPE_WARNING, 0))
                        c++;
                    rc = add_folded(b, NULL, &ev[c]);
                    c++;
                    waiting--;
                }
                if (rc < 0) {
                    mta_pipe_release(p);
                    return -1;
                }
            }
            waiting++;
            /* as mta_build_fold_entered: the slot of a collected or
             * promoted block, and the record of the event MTA_LIVE_AHEAD
             * before (in this batch) */
            if (pe->kind != MT_EVENT_ALLOC)
                mta_live_prefetch(&b->live_blocks, pe->id, 0);
            if (i >= MTA_LIVE_AHEAD) {
                const mta_pipe_ev *h = pe - MTA_LIVE_AHEAD;
                if (h->kind != MT_EVENT_ALLOC && h->kind != MTA_PIPE_WARNING)
                    mta_live_prefetch(&b->live_blocks, h->id, 1);
            }
        }
        for (; c < n; c++)
            if (ev[c].kind != MTA_PIPE_WARNING)
                queue_copy(b, &ev[c]);
        if (opts && opts->on_progress && bt->offset >= next_progress) {
            opts->on_progress(opts->progress_ctx, bt->offset, size);
            next_progress = bt->offset + (1 << 20);
        }
        int status = bt->status, rc = 0;
        if (status == MTA_PIPE_READ_ERROR) {
            *message = bt->message;
            bt->message = NULL;
            b->why = bt->why;
            rc = *message ? -2 : -1;
        } else if (status == MTA_PIPE_ERROR) {
            /* as fold_push: the queue moves on before the record fails */
            rc = -1;
            if (mta_build_fold_slot(b))
                b->why = bt->why;
        }
        mta_pipe_release(p);
        if (status != MTA_PIPE_MORE)
            return rc;
    }
}
