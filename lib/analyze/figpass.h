/*
 * figpass.h - the passes mt_read_figures plans (figpass.c): one folded
 * read of the request's traces with the selection's sink, and the scans
 * by the codec alone (the end, the peak, the selection's curve). Internal
 * to lib/analyze; figures.c chooses which of them a request takes.
 */
#ifndef MTA_FIGPASS_H
#define MTA_FIGPASS_H

#include "memtrace/stream.h"

#pragma GCC visibility push(hidden)

/* The answer of a strategy when the input needs the whole model after
 * all: nothing handed to the caller yet, nothing read from a pipe. */
#define MTA_FIG_WHOLE (-1)

/* One request's passes: what they fill, and why they failed. */
typedef struct mta_figrun {
    const mt_figures_request *rq;
    const char *path;           /* the first file (messages, scans) */
    int one_file;               /* one file, not by process: the codec alone can scan it */
    int regular;                /* every file can be read again (none is a pipe) */
    mt_stream_filter *sf;
    mt_timedelta peak;          /* what live:peak stands for */
    char *ferr;                 /* the filter's error (a regex over its limits) */
    /* per selected allocation, in the pass that feeds */
    uint64_t n_selected;
    mt_timedelta max_life;
    mt_stats_acc *stats;
    int feed;                   /* call rq->on_selected */
    /* the pass's fold applies the whole filter (it has no stack clauses):
     * every allocation the sink sees is selected */
    int prefiltered;
    /* the selected ones by index in the file, when the filter needs the
     * collection (bits_write in the pass that evaluates it, bits_read
     * later) */
    uint64_t *bits;
    size_t n_bits;
    int bits_write, bits_read;
    mt_curve_acc *curve;        /* fed in file order: allocations and collections */
    /* warnings held until the pass shows the trace can stream (else the
     * whole model says them) */
    int hold;
    char **held;
    size_t n_held;
    int status;                 /* of the failure: 1 input, 2 the filter */
    char *why;                  /* its reason (malloc'd) */
} mta_figrun;

enum { MTA_HOOKS_NONE, MTA_HOOKS_ALL, MTA_HOOKS_CURVE };

/* Compiles nothing: sets r up for rq, finds the peak first when the live
 * time or the filter needs it. 0, MTA_FIG_WHOLE, or 1 / 2 (r->why). */
int mta_fig_start(mta_figrun *r, const mt_figures_request *rq);
void mta_fig_finish(mta_figrun *r);
/* Records the failure (status, a copy of why; "out of memory" for NULL). */
void mta_fig_fail(mta_figrun *r, int status, const char *why);
/* Says the warnings held (say) or drops them; stops holding. */
void mta_fig_release(mta_figrun *r, int say);
/* One folded read with the hooks (MTA_HOOKS_*; NONE: a plain folded
 * model, the end and the peak); the request's warnings when loud. NULL
 * with r->why set. */
mt_model *mta_fig_pass(mta_figrun *r, int hooks, int loud);
/* The trace's end and whether its times never decrease, by the codec
 * alone. 0, or -1 (one file only; a model pass says why). */
int mta_fig_scan_end(mta_figrun *r, mt_timedelta *end, int *monotone);
/* mt_scan_events of r->path into r->curve (the blocks r->bits selects
 * when bits_read), or the longest lifetime of a freed block into
 * r->max_life without a curve. The scan's return. */
int mta_fig_scan(mta_figrun *r, mt_scan_result *res);
/* 1 when every clause of the filter looks at a block's times alone
 * (alloc:, live:, collect:, lifetime:), which the codec gives without
 * the allocations' records or stacks. */
int mta_fig_times_alone(const mta_figrun *r);
/* For such a filter: mt_scan_events of r->path noting in r->bits the
 * blocks it selects, a block never collected living to the end of
 * r->rq->info (which must be r->path's: res->end says). The scan's
 * return. */
int mta_fig_scan_mark(mta_figrun *r, mt_scan_result *res);
/* The selected allocations' peak by another pass reading r->bits, into
 * st's peak_filtered*. 0, or 1 (r->why). */
int mta_fig_peak_pass(mta_figrun *r, double bps, double rate, mt_stats *st);

#pragma GCC visibility pop

#endif
