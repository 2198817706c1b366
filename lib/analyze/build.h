/*
 * build.h - the builder of a model from a trace (build.c, buildread.c,
 * buildfold.c, buildpipe.c): its state while one pass reads the trace,
 * which the finished model does not keep. Internal to those files.
 */
#ifndef MTA_BUILD_H
#define MTA_BUILD_H

#include "model.h"
#include "pipe.h"

#define FOLD_AHEAD (2 * MTA_LIVE_AHEAD) /* a power of two */
#define PATH_MEMO_BITS 14
#define PATH_MEMO_CAP (1u << 20)  /* codes (8 bytes) and nodes (4) */
#define PATH_MIN 4               /* shorter paths are walked */

typedef struct builder {
    mt_model *m;             /* the model built (NULL: the reading thread's builder) */
    mta_stacks *st;          /* where the stacks are interned: m's, or the reading thread's own */
    mta_domains *dom;        /* where the domains are numbered: m's, or the reading thread's own */
    const mt_scale *sc;      /* the trace's scale (m's) */
    mt_reader *r;
    /* Whole stacks: the codes below a node that a backtrace went through
     * before -> the nodes after each of them, so that coming back to a
     * call path costs a hash and a comparison of its codes instead of a
     * trie step (likely cache misses) per code. Direct-mapped; the buffer
     * holds the codes and nodes, and starts over when full. */
    struct path_memo { uint64_t hash; size_t off; uint32_t from, n; } *path_memo; /* n 0: empty */
    uint64_t *pm_codes;
    mt_node_id *pm_nodes;
    size_t pm_used;
    mta_table ids;           /* obj id -> alloc index, when ids are not dense */
    int sparse_ids;
    /* Previous backtrace of each domain (v3 traces interleave domains, each
     * with its own common prefixes): the trie node after each of its codes,
     * and for shallow models the codes themselves. */
    struct prev_bt { unsigned domain; size_t len, cap; mt_node_id *path; uint64_t *codes; } *prev;
    size_t n_prev, cur_prev;
    int warned_unknown;
    size_t max_depth;        /* 0: whole stacks */
    /* Shallow models (max_depth 1 or 2): the truncated backtrace itself ->
     * its trie node, one probe per allocation instead of a code lookup and
     * a child lookup per code (each a likely cache miss when the trace has
     * many distinct stacks). */
    struct short_stack { uint64_t code[2]; uint32_t node; uint32_t len; } *shorts; /* len + 1; 0 empty */
    size_t shorts_mask, n_shorts;
    struct short_stack last_short;  /* the last one found (programs allocate
                                     * from one place many times in a row) */
    /* The last allocation's backtrace: its domain, full length and node
     * (same_ok 0: none yet). The next allocation of the same domain whose
     * common prefix with the domain's previous backtrace covers it whole,
     * and of that length, has that backtrace again: its node without a
     * look at its codes (stack_of). */
    unsigned same_dom;
    int same_ok;
    size_t same_len;
    mt_node_id same_node;
    /* promotions and collections, applied to their allocations after
     * reading: no random access to the allocation array while decoding */
    struct pending { int64_t time; uint32_t alloc; uint32_t kind; } *pend;
    size_t n_pend, cap_pend;        /* applied every PEND_CHUNK events */
    int double_collect;             /* an object collected twice: */
    uint32_t double_alloc;          /* the first, warned about at the end */
    const mt_model_options *opts;
    int64_t live;            /* samples allocated less those collected */
    uint64_t total_samples;  /* of every allocation: at most MTA_MAX_SAMPLES */
    mt_timedelta cur_time;   /* time of the previous event */
    int64_t live_at_time;    /* folded models: live samples before cur_time's events */
    uint64_t alloc_at_time;  /* and the samples they allocated */
    /* folded models: the blocks still live, the ones displaced by a reused
     * id (never collected), and the peak found on the fly */
    mta_live live_blocks;
    MTA_VEC(mta_live_rec) displaced;
    /* Folded models: events wait FOLD_AHEAD steps (their allocation record
     * already made) before they meet the live blocks, so that the slots
     * and records they will touch are prefetched by then: a block freed
     * long after its allocation is likely out of the caches. */
    struct fold_q { mt_alloc a; mt_obj_id id; mt_timedelta time; int kind; } fq[FOLD_AHEAD];
    size_t fq_head, fq_n;
    const char *why;         /* what failed */
    /* Two threads (folded models): the reading thread's builder finds the
     * stacks in an interner of its own and fills batch with events for
     * the folding thread's builder; sent_*: what of its interner the
     * batches carried so far. The folding thread's builder passes the
     * reader's warnings on to warn_fn. */
    mta_pipe *pipe;
    mta_batch *batch;
    size_t sent_nodes, sent_frames, sent_funcs;
    mt_warning_fn warn_fn;
    void *warn_ctx;
} builder;

/* The builder's functions are the library's own (hidden: calls within
 * a file may be inlined, as they were when one file held them all). */
#pragma GCC visibility push(hidden)

/* build.c */
void mta_build_warn_collect(builder *b, mt_obj_id id);

/* buildread.c: the pass over the events. */
/* The stack tables of a builder (the interner's and its own), and the
 * trie's root. Returns 0, or -1 when out of memory. */
int mta_build_stacks_init(builder *b);
/* Reads the trace to its end. Returns 0 at the end, -1 on the reader's
 * error (mt_reader_error), -2 with b->why. */
int mta_build_read(builder *b);
/* Applies the pending promotions and collections. 0, or -1 when out of memory. */
int mta_build_apply_pending(builder *b);
void mta_build_free(builder *b);

/* buildfold.c: a folded model's events. */
/* The oldest queued event meets the live blocks. 0, or -1 with b->why. */
int mta_build_fold_step(builder *b);
/* The queued events, at the end of the trace. */
int mta_build_fold_drain(builder *b);
/* End of a folded model: the blocks never collected, the peak. */
int mta_build_fold_rest(builder *b);
/* Folding thread: the batches until the reading thread's last. Returns 0
 * at the trace's end, -1 with b->why, or -2 with the reader's error in
 * *message (malloc'd). */
int mta_build_fold_batches(builder *b, mta_pipe *p, char **message);

/* The queue's next place, the oldest event having met the live blocks
 * if the queue was full; NULL when that failed (b->why). */
static inline struct fold_q *mta_build_fold_slot(builder *b)
{
    if (b->fq_n == FOLD_AHEAD && mta_build_fold_step(b) < 0)
        return NULL;
    return &b->fq[(b->fq_head + b->fq_n) & (FOLD_AHEAD - 1)];
}

/* The event filled in at fold_slot's place enters the queue: the slot of
 * a collected or promoted block is prefetched, and so is the record of the
 * one that entered half the queue ago. */
static inline void mta_build_fold_entered(builder *b, const struct fold_q *e)
{
    if (e->kind != MT_EVENT_ALLOC)
        mta_live_prefetch(&b->live_blocks, e->id, 0);
    b->fq_n++;
    if (b->fq_n > MTA_LIVE_AHEAD) {
        const struct fold_q *h = &b->fq[(b->fq_head + b->fq_n - 1 - MTA_LIVE_AHEAD) & (FOLD_AHEAD - 1)];
        if (h->kind != MT_EVENT_ALLOC)
            mta_live_prefetch(&b->live_blocks, h->id, 1);
    }
}

/* buildpipe.c: the reading thread of a two-thread pass. */
#define PIPE_AHEAD 12    /* events prefetched ahead in a batch */
/* Appends src[from .. n) to a batch's vector (both MTA_VEC of one type). */
#define DEFS_COPY(dst, src, from) \
    ((src).n <= (from) ? 0 \
     : ((dst).n + (src).n - (from) <= (dst).cap || \
        mta_grow((void **)&(dst).v, &(dst).cap, (dst).n + (src).n - (from), sizeof *(dst).v) == 0) \
         ? (memcpy((dst).v + (dst).n, (src).v + (from), ((src).n - (from)) * sizeof *(dst).v), \
            (dst).n += (src).n - (from), 0) \
         : -1)

/* Hands the batch over with its status, and takes the next one (status
 * MTA_PIPE_MORE). 0, or -1 when the folding thread stopped or the
 * interner's news did not fit in memory. */
int mta_build_pipe_publish(builder *b, int status);
/* A warning of the reader takes its place among the events (ctx: the
 * reading thread's builder). */
void mta_build_pipe_warning(void *ctx, const char *msg);
/* The reading thread's main (arg: its builder). */
void *mta_build_read_main(void *arg);

#pragma GCC visibility pop

#endif
