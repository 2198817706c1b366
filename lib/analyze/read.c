/*
 * read.c - one read of a trace (or of several, merged), many sinks: the
 * planner that chooses how a trace is read, and the loop that hands every
 * finished allocation to the sinks that asked for it (analyze.h, "Reading").
 *
 * Design. A report or the viewer says what it wants: the per-stack costs
 * of a filter at a time (the folded model: mt_select_sites), figures fed
 * allocation by allocation (sinks: mt_sink), and whether the peak's time is
 * needed before the pass (live:peak, --at peak). It never says how to read.
 * mt_read plans the passes from that and from what the input allows:
 *
 *   one pass       the default: a folded model, the sinks called as the
 *                  blocks are allocated (on_alloc) and finished (on_done:
 *                  collected, or live at the end), in file order;
 *   peak first     the peak's time first: by the codec alone for one file
 *                  (mt_scan_peak), else a folded pass of the merged stream;
 *   whole          a pipe cannot be read twice, and a trace whose times go
 *                  back has no peak in file order: then the whole model
 *                  (every allocation kept, its events sorted) is read, and
 *                  the sinks are not called: the caller queries the model.
 *
 * The sinks see an mt_alloc: a new per-allocation attribute goes into it
 * and every sink sees it; a new figure is a new sink, added to a request's
 * list without touching the loop. The allocation index and the viewer's
 * reads keep their own loops for now (viewer/big.c, lib/analyze/allocindex.c).
 *
 * The route can be forced for tests and benchmarks (mt_read_force), never
 * by the environment: the CLI's global option --route sets it.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "memtrace/analyze.h"
#include "memtrace/compare.h"
#include "memtrace/stream.h"

static unsigned forced;

int mt_read_force(const char *spec)
{
    unsigned f = 0;
    const char *p = spec;
    while (p && *p) {
        size_t n = strcspn(p, ",");
        static const struct { const char *name; unsigned flag; } names[] = {
            {"auto", 0},
            {"whole", MT_ROUTE_WHOLE},
            {"one-thread", MT_ROUTE_ONE_THREAD},
            {"two-threads", MT_ROUTE_TWO_THREADS},
            {"qsort", MT_ROUTE_QSORT},
        };
        size_t i;
        for (i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == n && !strncmp(p, names[i].name, n))
                break;
        if (i == sizeof names / sizeof names[0])
            return -1;
        f |= names[i].flag;
        p += n;
        if (*p == ',')
            p++;
    }
    if ((f & MT_ROUTE_ONE_THREAD) && (f & MT_ROUTE_TWO_THREADS))
        return -1;
    forced = f;
    return 0;
}

unsigned mt_read_forced(void)
{
    return forced;
}

int mt_read_regular(const char *const *paths, size_t n)
{
    struct stat st;
    for (size_t i = 0; i < n; i++)
        if (stat(paths[i], &st) != 0 || !S_ISREG(st.st_mode))
            return 0;
    return 1;
}

int mt_read_may_fold(const char *const *paths, size_t n, int need_peak)
{
    if (forced & MT_ROUTE_WHOLE)
        return 0;
    /* the peak first reads the trace twice: a pipe cannot be */
    return !need_peak || mt_read_regular(paths, n);
}

static void no_warning(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
}

/* The sinks of one read, called in the order given. */
typedef struct fanout {
    const mt_sink *sinks;
    size_t n;
} fanout;

static int fan_alloc(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    fanout *f = ctx;
    for (size_t i = 0; i < f->n; i++)
        if (f->sinks[i].on_alloc && f->sinks[i].on_alloc(f->sinks[i].ctx, m, a, seq) < 0)
            return -1;
    return 0;
}

static int fan_done(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    fanout *f = ctx;
    for (size_t i = 0; i < f->n; i++)
        if (f->sinks[i].on_done && f->sinks[i].on_done(f->sinks[i].ctx, m, a, seq) < 0)
            return -1;
    return 0;
}

mt_model *mt_read_pass(const mt_read_request *rq, int fold, char **err)
{
    mt_model_options mo = {
        .on_warning = rq->on_warning,
        .warning_ctx = rq->warning_ctx,
        .on_progress = rq->on_progress,
        .progress_ctx = rq->progress_ctx,
        .max_depth = rq->max_depth,
    };
    fanout f = {rq->sinks, rq->n_sinks};
    int any_alloc = 0, any_done = 0;
    for (size_t i = 0; i < rq->n_sinks; i++) {
        any_alloc |= rq->sinks[i].on_alloc != NULL;
        any_done |= rq->sinks[i].on_done != NULL;
    }
    if (fold) {
        mo.fold = 1;
        mo.fold_filter = rq->filter;
        mo.fold_live_at = rq->live_at;
        mo.fold_peak_known = rq->peak_known;
        mo.fold_peak = rq->peak;
        if (any_done || any_alloc) {
            mo.on_fold = any_done ? fan_done : NULL;
            mo.on_alloc = any_alloc ? fan_alloc : NULL;
            mo.fold_ctx = &f;
        }
        for (size_t i = 0; i < rq->n_sinks; i++)
            if (rq->sinks[i].on_reset)
                rq->sinks[i].on_reset(rq->sinks[i].ctx);
    }
    return mt_model_load_many(rq->paths, rq->n, rq->by_process, &mo, err);
}

int mt_read_peak(const mt_read_request *rq, mt_timedelta *peak, char **err)
{
    if (rq->n == 1 && !rq->by_process) {
        /* the peak by the codec alone (no stacks): about the time of
         * reading the file; a model pass below when that fails, to say why */
        int sc = mt_scan_peak(rq->paths[0], rq->on_progress, rq->progress_ctx, peak, NULL);
        if (sc >= 0)
            return sc;
    }
    mt_read_request p = *rq;
    p.filter = NULL;
    p.live_at = MT_TIME_END;
    p.peak_known = 0;
    p.sinks = NULL;
    p.n_sinks = 0;
    p.on_warning = no_warning; /* the pass that follows says them */
    char *e = NULL;
    mt_model *pm = mt_read_pass(&p, 1, &e);
    if (!pm) {
        if (err)
            *err = e;
        else
            free(e);
        return -1;
    }
    free(e);
    int known = mt_model_peak_known(pm);
    *peak = mt_model_peak_time(pm);
    mt_model_free(pm);
    return known ? 0 : 1;
}

mt_model *mt_read(mt_read_request *rq, char **err)
{
    int fold = rq->fold && mt_read_may_fold(rq->paths, rq->n, rq->need_peak);
    if (fold && rq->need_peak && !rq->peak_known) {
        mt_timedelta peak;
        int rc = mt_read_peak(rq, &peak, NULL);
        if (rc == 0) {
            rq->peak_known = 1;
            rq->peak = peak;
        } else {
            fold = 0; /* times go back somewhere: the whole model finds the peak */
        }
    }
    rq->folded = fold;
    return mt_read_pass(rq, fold, err);
}
