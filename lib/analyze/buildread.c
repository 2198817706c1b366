/*
 * buildread.c - the builder's pass over a trace's events in file order:
 * each allocation's record and the trie node of its backtrace (the
 * previous allocation's when the codec repeated its backtrace; else
 * through the previous backtrace of its domain, a memo of whole call
 * paths, or for shallow models the truncated backtrace itself), then into the
 * whole model's allocation table, a folded model's queue (buildfold.c) or
 * the reading thread's batch (buildpipe.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "domains.h"

static uint64_t short_hash(uint64_t c0, uint64_t c1, size_t len)
{
    return mta_hash64(c0 ^ mta_hash64(c1 ^ len));
}

static int shorts_grow(builder *b)
{
    size_t cap = b->shorts ? (b->shorts_mask + 1) * 2 : 1024;
    struct short_stack *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; b->shorts && i <= b->shorts_mask; i++) {
        const struct short_stack *e = &b->shorts[i];
        if (!e->len)
            continue;
        size_t j = short_hash(e->code[0], e->code[1], e->len - 1) & (cap - 1);
        while (t[j].len)
            j = (j + 1) & (cap - 1);
        t[j] = *e;
    }
    free(b->shorts);
    b->shorts = t;
    b->shorts_mask = cap - 1;
    return 0;
}

static struct prev_bt *prev_of(builder *b, unsigned domain);
static int64_t trie_path(builder *b, struct prev_bt *pv, const mt_location_code *bt, size_t len,
                         size_t shared);

static int64_t stack_lookup(builder *b, const mt_event *ev);

/* The trie node of an allocation's backtrace. The reader's common prefix
 * is counted against the previous backtrace of the event's domain: when
 * the previous allocation was of that domain, had this length, and the
 * prefix covers it whole, the backtrace is that one again (the codec's
 * repeat of a backtrace: no new codeword), and so is its node. Any other
 * allocation looks its codes up, and becomes the one to compare with. */
static inline __attribute__((always_inline)) int64_t stack_of(builder *b, const mt_event *ev)
{
    size_t len = ev->backtrace_length;
    if (b->same_ok && ev->domain == b->same_dom && len == b->same_len && ev->common_prefix >= len)
        return b->same_node;
    int64_t node = stack_lookup(b, ev);
    b->same_ok = node >= 0;
    b->same_dom = ev->domain;
    b->same_len = len;
    b->same_node = (mt_node_id)node;
    return node;
}

static __attribute__((noinline)) int64_t stack_lookup(builder *b, const mt_event *ev)
{
    size_t len = ev->backtrace_length;
    const mt_location_code *bt = ev->backtrace;
    if (!b->max_depth) {
        /* whole stacks: the reader's common prefix (capped at the domain's
         * previous length in trie_path) says what is shared */
        struct prev_bt *pv = prev_of(b, ev->domain);
        return pv ? trie_path(b, pv, bt, len, ev->common_prefix) : -1;
    }
    /* shallow model: only the innermost codes, compared with the previous
     * ones (whatever the domain) */
    if (len > b->max_depth) {
        bt += len - b->max_depth;
        len = b->max_depth;
    }
    struct prev_bt *pv;
    if (!b->shorts) {
        pv = prev_of(b, 0);
        return pv ? trie_path(b, pv, bt, len, SIZE_MAX) : -1;
    }
    uint64_t c0 = len > 0 ? bt[0] : 0, c1 = len > 1 ? bt[1] : 0;
    struct short_stack *last = &b->last_short;
    if (last->len == len + 1 && last->code[0] == c0 && last->code[1] == c1)
        return last->node;
    size_t j = short_hash(c0, c1, len) & b->shorts_mask;
    for (;;) {
        struct short_stack *e = &b->shorts[j];
        if (!e->len)
            break;
        if (e->len == len + 1 && e->code[0] == c0 && e->code[1] == c1) {
            *last = *e;
            return e->node;
        }
        j = (j + 1) & b->shorts_mask;
    }
    /* (the previous backtrace's state only for a stack not seen before) */
    pv = prev_of(b, 0);
    if (!pv)
        return -1;
    int64_t node = trie_path(b, pv, bt, len, SIZE_MAX);
    if (node < 0)
        return -1;
    if ((b->n_shorts + 1) * 4 > (b->shorts_mask + 1) * 3) {
        if (shorts_grow(b) < 0)
            return -1;
        j = short_hash(c0, c1, len) & b->shorts_mask;
        while (b->shorts[j].len)
            j = (j + 1) & b->shorts_mask;
    }
    b->shorts[j].code[0] = c0;
    b->shorts[j].code[1] = c1;
    b->shorts[j].node = (uint32_t)node;
    b->shorts[j].len = (uint32_t)len + 1;
    b->n_shorts++;
    *last = b->shorts[j];
    return node;
}

/* The previous-backtrace state of a domain, created on first sight. */
static struct prev_bt *prev_of(builder *b, unsigned domain)
{
    if (b->cur_prev < b->n_prev && b->prev[b->cur_prev].domain == domain)
        return &b->prev[b->cur_prev];
    for (size_t i = 0; i < b->n_prev; i++)
        if (b->prev[i].domain == domain) {
            b->cur_prev = i;
            return &b->prev[i];
        }
    struct prev_bt *np = realloc(b->prev, (b->n_prev + 1) * sizeof *np);
    if (!np)
        return NULL;
    b->prev = np;
    memset(&np[b->n_prev], 0, sizeof *np);
    np[b->n_prev].domain = domain;
    b->cur_prev = b->n_prev++;
    return &np[b->cur_prev];
}

/* The trie node of a backtrace (outermost code first), creating it. shared:
 * how many of its first codes are known to be those of the domain's
 * previous backtrace (SIZE_MAX: unknown, compare them). The work is that of
 * the codes past the shared part: a trace of stacks millions of frames deep
 * that differ in their last frame costs a few steps per allocation. */
static int64_t trie_path(builder *b, struct prev_bt *pv, const mt_location_code *bt, size_t len,
                         size_t shared)
{
    int keep_codes = shared == SIZE_MAX;
    if (len > pv->cap) {
        size_t cap = pv->cap ? pv->cap : 64;
        while (cap < len)
            cap *= 2;
        mt_node_id *p = realloc(pv->path, cap * sizeof *p);
        if (!p)
            return -1;
        pv->path = p;
        if (keep_codes) {
            uint64_t *c = realloc(pv->codes, cap * sizeof *c);
            if (!c)
                return -1;
            pv->codes = c;
        }
        pv->cap = cap;
    }
    size_t cp = 0, lim = len < pv->len ? len : pv->len;
    if (keep_codes) {
        while (cp < lim && pv->codes[cp] == bt[cp])
            cp++;
    } else {
        cp = shared < lim ? shared : lim;
    }
    mt_node_id node = cp ? pv->path[cp - 1] : 0, pv_from = node;
    size_t n = len - cp;
    struct path_memo *pm = NULL;
    uint64_t h = 0;
    if (!keep_codes && n >= PATH_MIN && n <= PATH_MEMO_CAP / 8 && b->path_memo) {
        h = (uint64_t)node * 0x9E3779B97F4A7C15ULL ^ n;
        for (size_t i = cp; i < len; i++)
            h = (h ^ bt[i]) * 0x100000001b3ULL;
        h ^= h >> 29;
        pm = &b->path_memo[(h * 0x9E3779B97F4A7C15ULL) >> (64 - PATH_MEMO_BITS)];
        if (pm->n == n && pm->hash == h && pm->from == node &&
            memcmp(b->pm_codes + pm->off, bt + cp, n * sizeof *bt) == 0) {
            memcpy(pv->path + cp, b->pm_nodes + pm->off, n * sizeof *pv->path);
            pv->len = len;
            return pv->path[len - 1];
        }
    }
    for (size_t i = cp; i < len; i++) {
        uint64_t code = bt[i];
        int64_t f = mta_stacks_code(b->st, b->r, code);
        if (f < 0)
            return -1;
        unsigned cnt = b->st->frames.v[f].inline_count;
        for (unsigned k = 0; k < cnt; k++) {
            int64_t n = mta_stacks_child(b->st, node, (mt_frame_id)(f + k));
            if (n < 0)
                return -1;
            node = (mt_node_id)n;
        }
        if (keep_codes)
            pv->codes[i] = code;
        pv->path[i] = node;
    }
    if (pm) {
        if (b->pm_used + n > PATH_MEMO_CAP) {
            memset(b->path_memo, 0, ((size_t)1 << PATH_MEMO_BITS) * sizeof *b->path_memo);
            b->pm_used = 0;
        }
        memcpy(b->pm_codes + b->pm_used, bt + cp, n * sizeof *bt);
        memcpy(b->pm_nodes + b->pm_used, pv->path + cp, n * sizeof *pv->path);
        pm->hash = h;
        pm->off = b->pm_used;
        pm->from = pv_from;
        pm->n = (uint32_t)n;
        b->pm_used += n;
    }
    pv->len = len;
    return node;
}

static int64_t find_alloc(builder *b, mt_obj_id id)
{
    if (!b->sparse_ids)
        return id < b->m->whole->allocs.n ? (int64_t)id : -1;
    return mta_table_get(&b->ids, id);
}

/* Apply the pending promotions and collections in file order (independent
 * random accesses, which the processor overlaps). Done in chunks while
 * reading: a small buffer that stays in the caches instead of one entry
 * per event for the whole trace (40 MB of page faults on 5 million
 * events), and the allocations a chunk refers to are often still cached. */
#define PEND_CHUNK 65536

int mta_build_apply_pending(builder *b)
{
    mta_alloctab *t = b->m->whole;
    for (size_t k = 0; k < b->n_pend; k++) {
        if (k + 16 < b->n_pend)
            __builtin_prefetch(&t->allocs.v[b->pend[k + 16].alloc], 1);
        mt_alloc *a = &t->allocs.v[b->pend[k].alloc];
        if (b->pend[k].kind == MT_EVENT_PROMOTE) {
            if (a->promote == MT_TIME_NEVER)
                a->promote = b->pend[k].time;
        } else if (a->collect == MT_TIME_NEVER) {
            a->collect = b->pend[k].time < a->time ? a->time : b->pend[k].time;
            if (MTA_PUSH(t->collects, b->pend[k].alloc) < 0)
                return -1;
            b->live -= (int64_t)a->n_samples;
        } else if (!b->double_collect) {
            /* warned about after reading, as unknown objects come first */
            b->double_collect = 1;
            b->double_alloc = b->pend[k].alloc;
        }
    }
    b->n_pend = 0;
    return 0;
}

/* The allocation record of an event. */
static inline __attribute__((always_inline)) int64_t alloc_of(builder *b, const mt_event *ev, mt_alloc *a)
{
    if (ev->n_samples > MTA_MAX_SAMPLES - b->total_samples) {
        b->why = "sample counts add up to more than 2^62 (a damaged or forged trace)";
        return -1;
    }
    b->total_samples += ev->n_samples;
    b->why = "out of memory";
    int64_t st = stack_of(b, ev);
    if (st < 0)
        return -1;
    double bytes = (double)ev->length * b->sc->word_bytes + 0.5;
    a->time = ev->time;
    a->collect = MT_TIME_NEVER;
    a->promote = MT_TIME_NEVER;
    a->size = bytes < 18446744073709549568.0 ? (uint64_t)bytes : UINT64_MAX;
    a->n_samples = ev->n_samples;
    a->stack = (mt_node_id)st;
    a->source = (uint8_t)(ev->source > MT_SOURCE_EXTERNAL ? MT_SOURCE_EXTERNAL : ev->source);
    a->carried = ev->carried != 0;
    a->verdict = (uint8_t)ev->verdict;
    int dom = mta_domain_index(b->dom, ev->domain);
    if (dom < 0) {
        b->why = MTA_DOMAINS_FULL;
        return -1;
    }
    a->domain = (uint8_t)dom;
    return 0;
}

/* An event of a folded model enters the queue, an allocation with its
 * record (and stack) made now. */
static int fold_push(builder *b, const mt_event *ev)
{
    struct fold_q *e = mta_build_fold_slot(b);
    if (!e)
        return -1;
    e->kind = ev->kind;
    e->time = ev->time;
    e->id = ev->id;
    if (ev->kind == MT_EVENT_ALLOC && alloc_of(b, ev, &e->a) < 0)
        return -1;
    mta_build_fold_entered(b, e);
    return 0;
}

/* Reading thread: an event goes into the batch; an allocation with its
 * record made (its stack found) here. Returns 0, or -1 with b->why (NULL:
 * the batches stopped, nothing more to say). */
static inline __attribute__((always_inline)) int pipe_emit(builder *b, const mt_event *ev)
{
    /* (no batch: a warning found the batches stopped) */
    if (!b->batch ||
        (b->batch->n == MTA_PIPE_EVENTS && mta_build_pipe_publish(b, MTA_PIPE_MORE) < 0)) {
        b->why = NULL;
        return -1;
    }
    mta_pipe_ev *e = &b->batch->ev[b->batch->n];
    if (b->batch->n + PIPE_AHEAD < MTA_PIPE_EVENTS)
        __builtin_prefetch(e + PIPE_AHEAD, 1);
    e->kind = (uint8_t)ev->kind;
    e->time = ev->time;
    e->id = ev->id;
    if (ev->kind == MT_EVENT_ALLOC) {
        mt_alloc a;
        if (alloc_of(b, ev, &a) < 0)
            return -1;
        e->size = a.size;
        e->n_samples = a.n_samples;
        e->stack = a.stack;
        e->source = a.source;
        e->carried = a.carried;
        e->verdict = a.verdict;
        e->domain = a.domain;
    }
    b->batch->n++;
    return 0;
}

/* One event of the trace, in file order. Returns 0, or -1 with b->why. */
static inline __attribute__((always_inline)) int add_event(builder *b, const mt_event *ev)
{
    mt_model *m = b->m;
    if (b->pipe)
        return pipe_emit(b, ev);
    if (m->fold)
        return fold_push(b, ev);
    if (ev->time < b->cur_time)
        m->monotone = 0;
    b->cur_time = ev->time;
    if (ev->time > m->end)
        m->end = ev->time;
    if (ev->kind == MT_EVENT_ALLOC) {
        mta_alloctab *t = m->whole;
        size_t idx = t->allocs.n;
        if (idx >= UINT32_MAX - 1) {
            b->why = "too many allocations (more than 2^32)";
            return -1;
        }
        b->why = "out of memory";
        if (!b->sparse_ids && ev->id != idx) {
            /* Ids are not 0, 1, 2, ...: switch to a lookup table. */
            if (mta_table_init(&b->ids, idx + 1024) < 0)
                return -1;
            for (size_t i = 0; i < idx; i++)
                if (mta_table_put(&b->ids, i, (uint32_t)i) < 0)
                    return -1;
            b->sparse_ids = 1;
        }
        if (b->sparse_ids && mta_table_put(&b->ids, ev->id, (uint32_t)idx) < 0)
            return -1;
        /* Every sum of sample counts (live memory, costs, peaks) is a
         * subset of this total, so bounding it keeps them all in range. */
        if (ev->n_samples > MTA_MAX_SAMPLES - b->total_samples) {
            b->why = "sample counts add up to more than 2^62 (a damaged or forged trace)";
            return -1;
        }
        b->total_samples += ev->n_samples;
        int64_t st = stack_of(b, ev);
        if (st < 0)
            return -1;
        int dom = mta_domain_index(b->dom, ev->domain);
        if (dom < 0) {
            b->why = MTA_DOMAINS_FULL;
            return -1;
        }
        double bytes = (double)ev->length * b->sc->word_bytes + 0.5;
        mt_alloc a = {
            .time = ev->time,
            .collect = MT_TIME_NEVER,
            .promote = MT_TIME_NEVER,
            .size = bytes < 18446744073709549568.0 ? (uint64_t)bytes : UINT64_MAX,
            .n_samples = ev->n_samples,
            .stack = (mt_node_id)st,
            .source = (uint8_t)ev->source,
            .carried = ev->carried != 0,
            .verdict = (uint8_t)ev->verdict,
            .domain = (uint8_t)dom,
        };
        if (ev->source > MT_SOURCE_EXTERNAL)
            a.source = MT_SOURCE_EXTERNAL;
        if (MTA_PUSH(t->allocs, a) < 0)
            return -1;
        b->live += (int64_t)a.n_samples;
        return 0;
    }
    int64_t i = find_alloc(b, ev->id);
    if (ev->kind == MT_EVENT_PROMOTE)
        m->n_promotes++;
    else
        m->n_collects++;
    if (i < 0) {
        if (ev->kind != MT_EVENT_PROMOTE)
            mta_build_warn_collect(b, ev->id);
        return 0;
    }
    if (b->n_pend == PEND_CHUNK && mta_build_apply_pending(b) < 0) {
        b->why = "out of memory";
        return -1;
    }
    if (b->n_pend == b->cap_pend &&
        mta_grow((void **)&b->pend, &b->cap_pend, b->n_pend + 1, sizeof *b->pend) < 0) {
        b->why = "out of memory";
        return -1;
    }
    b->pend[b->n_pend].time = ev->time;
    b->pend[b->n_pend].alloc = (uint32_t)i;
    b->pend[b->n_pend].kind = ev->kind;
    b->n_pend++;
    return 0;
}

void mta_build_free(builder *b)
{
    mta_table_destroy(&b->ids);
    free(b->path_memo);
    free(b->pm_codes);
    free(b->pm_nodes);
    free(b->pend);
    for (size_t i = 0; i < b->n_prev; i++) {
        free(b->prev[i].path);
        free(b->prev[i].codes);
    }
    free(b->prev);
    free(b->shorts);
    mta_live_free(&b->live_blocks);
    free(b->displaced.v);
}

int mta_build_stacks_init(builder *b)
{
    if (mta_stacks_init(b->st) < 0)
        return -1;
    if (!b->max_depth &&
        (!(b->path_memo = calloc((size_t)1 << PATH_MEMO_BITS, sizeof *b->path_memo)) ||
         !(b->pm_codes = malloc(PATH_MEMO_CAP * sizeof *b->pm_codes)) ||
         !(b->pm_nodes = malloc(PATH_MEMO_CAP * sizeof *b->pm_nodes))))
        return -1;
    if (b->max_depth && b->max_depth <= 2 && shorts_grow(b) < 0)
        return -1;
    return 0;
}

/* Reads the trace to its end into add_event. Returns 0 at the end, -1 on
 * the reader's error (mt_reader_error), -2 with b->why. */
int mta_build_read(builder *b)
{
    mt_reader *r = b->r;
    const mt_model_options *opts = b->opts;
    uint64_t size = mt_reader_size(r), next_progress = 1 << 20, n_read = 0;
    mt_event ev;
    int rc;
    /* Shallow models read AHEAD events in advance: the slot of each queued
     * allocation's stack is prefetched, so the processor overlaps those
     * cache misses instead of waiting for each in turn. */
    enum { AHEAD = 16, BIG_SHORTS = 1 << 16 };
    struct queued { mt_event ev; mt_location_code code[2]; } q[AHEAD];
    size_t qhead = 0, qn = 0;
    /* the previous queued allocation's domain and whole length (q_ok 0:
     * none yet) */
    int q_ok = 0;
    unsigned q_dom = 0;
    size_t q_len = 0;
    /* (with two threads the folding thread reports the progress) */
    int progress = opts && opts->on_progress && !b->pipe;
    /* Events one at a time, to the end for whole stacks; for shallow
     * models until their table outgrows the caches, when the queue pays
     * off. This loop's tests are paid for every event: only these. */
    while (!b->shorts || b->shorts_mask < BIG_SHORTS) {
        rc = mt_reader_next(r, &ev);
        if (rc <= 0)
            return rc < 0 ? -1 : 0;
        if (add_event(b, &ev) < 0)
            return -2;
        if (progress && (++n_read & 1023) == 0 && mt_reader_offset(r) >= next_progress) {
            opts->on_progress(opts->progress_ctx, mt_reader_offset(r), size);
            next_progress = mt_reader_offset(r) + (1 << 20);
        }
    }
    rc = 1;
    for (;;) {
        if (rc > 0)
            rc = mt_reader_next(r, &ev); /* once 0 (end) or -1, stays */
        if (rc <= 0 && qn == 0)
            break;
        if (rc > 0) {
            struct queued *e = &q[(qhead + qn++) % AHEAD];
            e->ev = ev;
            if (ev.kind == MT_EVENT_ALLOC) {
                size_t len = ev.backtrace_length;
                const mt_location_code *bt = ev.backtrace;
                if (len > b->max_depth) {
                    bt += len - b->max_depth;
                    len = b->max_depth;
                }
                for (size_t k = 0; k < len; k++)
                    e->code[k] = bt[k];
                e->ev.backtrace = e->code;
                e->ev.backtrace_length = len;
                /* the prefix said of the whole backtrace, not of its
                 * cut: the cut is shared whole only when the whole
                 * backtrace is the previous one (stack_of) */
                int same = q_ok && ev.domain == q_dom && ev.backtrace_length == q_len &&
                           ev.common_prefix >= q_len;
                e->ev.common_prefix = same ? len : 0;
                q_ok = 1;
                q_dom = ev.domain;
                q_len = ev.backtrace_length;
                uint64_t c0 = len > 0 ? bt[0] : 0, c1 = len > 1 ? bt[1] : 0;
                __builtin_prefetch(&b->shorts[short_hash(c0, c1, len) & b->shorts_mask]);
            }
        }
        if (qn == AHEAD || (rc <= 0 && qn)) {
            if (add_event(b, &q[qhead].ev) < 0)
                return -2;
            qhead = (qhead + 1) % AHEAD;
            qn--;
        }
        if (rc <= 0)
            continue;
        if (progress && (++n_read & 1023) == 0 && mt_reader_offset(r) >= next_progress) {
            opts->on_progress(opts->progress_ctx, mt_reader_offset(r), size);
            next_progress = mt_reader_offset(r) + (1 << 20);
        }
    }
    return rc < 0 ? -1 : 0;
}

