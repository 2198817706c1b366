/*
 * memtrace/leaks.h - leak suspects: the allocation sites whose live memory
 * keeps growing, each with its growth rate, the rate's standard error, a
 * p-value corrected for the number of sites, and the share of its bytes
 * that outlive the window; and the sampling interval a run needs to show a
 * leak of a given rate. docs/leaks.md gives the reasoning.
 *
 * Stable. Every function is reentrant; results are owned by the caller
 * (free with the matching _free). Times are mt_timedelta (microseconds
 * since the trace's start), rates bytes per second.
 */
#ifndef MEMTRACE_LEAKS_H
#define MEMTRACE_LEAKS_H

#include "memtrace/analyze.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One sampled block of a site, for mt_leak_test: when it was allocated,
 * when it was freed (MT_TIME_NEVER: still live at the end) and the bytes
 * it stands for (its samples times the bytes per sample). */
typedef struct mt_leak_block {
    mt_timedelta alloc;
    mt_timedelta free;
    double bytes;
} mt_leak_block;

/* The test's result for one site. */
typedef struct mt_leak_site {
    mt_frame_id frame;       /* the site, as `top` names it; MT_NO_FRAME: no stack */
    double live_end;         /* estimated bytes live at the end of the window */
    double live_high;        /* the highest of the site's live bytes in the
                              * window (on the test's grid) */
    double growth;           /* bytes per second: least-squares slope of the
                              * site's live bytes over the window */
    double growth_se;        /* its standard error (blocks allocated and
                              * freed in the same stretch of the window count
                              * as one unit, so bursts do not pass for trend) */
    double z;                /* growth / growth_se; 0 when growth_se is 0 */
    double p;                /* one-sided p-value of "no growth" */
    double p_adj;            /* Holm-adjusted over the tested sites; 1 when not tested */
    double kept;             /* Kaplan-Meier estimate of the share of the
                              * site's sampled bytes whose blocks outlive the
                              * window's length (blocks live at the end are
                              * censored, not counted as leaked); NaN when no
                              * block was watched that long */
    double lost;             /* estimated bytes of the site's blocks the leak
                              * scan judged lost (docs/leaks.md, verdicts);
                              * NaN when the trace has no verdicts */
    uint64_t units;          /* independent units that moved the slope */
    uint64_t samples;        /* samples of the site's blocks */
    int tested;              /* in Holm's family (could be significant) */
    int suspect;             /* tested, growing, p_adj < alpha, and still
                              * holding at least half its highest at the end
                              * (growth given back by the end is no leak) */
} mt_leak_site;

/* The slope test alone, on one site's blocks over [from, to] (from < to).
 * Fills growth, growth_se, z, p, kept, units, live_end; p_adj = p. */
void mt_leak_test(const mt_leak_block *blocks, size_t n, mt_timedelta from, mt_timedelta to,
                  mt_leak_site *out);

typedef struct mt_leak_options {
    double alpha;            /* family-wise error rate; 0: 0.05 */
    mt_timedelta from;       /* start of the window; MT_TIME_NEVER: the
                              * middle of the trace (the later half is
                              * tested, so that memory loaded at start and
                              * caches that fill early are not suspects) */
} mt_leak_options;

typedef struct mt_leak_report {
    mt_timedelta from, to;   /* the window tested */
    double alpha;
    size_t n_sites;          /* sites with samples in the selection */
    size_t n_tested;         /* sites in Holm's family */
    size_t n_suspects;
    size_t n;                /* rows: every site with samples, suspects first
                              * (by growth), then by growth */
    mt_leak_site *sites;
    double min_growth;       /* the smallest growth rate (bytes per second)
                              * a pure leak would need to be found in this
                              * window at this sampling rate with 80% power */
} mt_leak_report;

/* Sites are those of the selection's stacks' innermost frames (a
 * selection made with mt_select_sites has plumbing removed, as top's).
 * NULL when out of memory or the window is empty. */
mt_leak_report *mt_query_leaks(const mt_selection *s, const mt_leak_options *o);
void mt_leak_report_free(mt_leak_report *r);

/* [experimental] The same report from a folded read (bounded memory: the
 * sums per stack and grid unit, and per distinct lifetime shorter than
 * the window, not a record per allocation). The window needs the trace's
 * end before the read (mt_scan_events gives it): mt_leak_fold_new(end, o)
 * (NULL when out of memory or the window is empty); pass
 * mt_leak_fold_alloc as an mt_sink's on_done (mt_leak_fold_reset as its
 * on_reset) with the collector as ctx; then mt_query_leaks_fold on the
 * folded model's selection (mt_select_sites, the read's filter, live at
 * the end) gives what mt_query_leaks gives on the whole model, byte for
 * byte; NULL when out of memory or the model's end is not the one given. */
typedef struct mt_leak_fold mt_leak_fold;
mt_leak_fold *mt_leak_fold_new(mt_timedelta end, const mt_leak_options *o);
/* The collector for a read of these traces when it can fold (one file
 * read again, its times never going back, the route whole not forced:
 * its end found first by the codec alone), else NULL: read the whole
 * model and call mt_query_leaks. */
mt_leak_fold *mt_leak_fold_plan(const char *const *paths, size_t n, int by_process,
                                const mt_leak_options *o);
int mt_leak_fold_alloc(void *fold, const mt_model *m, const mt_alloc *a, uint64_t seq);
void mt_leak_fold_reset(void *fold);
mt_timedelta mt_leak_fold_end(const mt_leak_fold *f);
void mt_leak_fold_free(mt_leak_fold *f);
mt_leak_report *mt_query_leaks_fold(const mt_selection *s, mt_leak_fold *f,
                                    const mt_leak_options *o);

/* Planning: the largest sampling interval (bytes) with which a leak of
 * `rate` bytes per second, tested over a window of `window_s` seconds among
 * `sites` sites at family-wise level alpha, is found with probability
 * `power` (a pure leak: the site frees nothing; blocks smaller than the
 * interval). 0 when no interval would do. */
double mt_leak_plan_interval(double rate, double window_s, size_t sites, double alpha,
                             double power);
/* The converse: the smallest rate found with that power at an interval. */
double mt_leak_min_rate(double interval, double window_s, size_t sites, double alpha,
                        double power);

#ifdef __cplusplus
}
#endif
#endif
