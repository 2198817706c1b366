/*
 * memtrace/compare.h - comparing two traces, or two moments or windows of
 * one trace, with the sampling error taken into account: per allocation
 * site, function or call path, the difference of an estimate, its
 * standard error and whether it is larger than the noise; and budgets on
 * one trace or against a base decided the same way. `memtrace diff` and
 * `memtrace check` are built on it.
 *
 * docs/compare.md explains the statistics; in short:
 *
 *   Every sampled byte is a point of a Poisson process, so the samples of
 *   one entry (a site, ...) in one trace are a Poisson count K, and an
 *   estimate made of them is K times a weight per sample (bytes: the
 *   sampling interval). Two independent estimates of the same quantity
 *   split their K1 + K2 = n samples binomially, in a known proportion set
 *   by the two weights; the exact conditional binomial test gives a
 *   p-value that holds at any sample count, with any two sampling rates
 *   and any normalisation (per second). Estimates whose samples carry
 *   unequal weights (blocks allocated: one sample stands for 1/size
 *   blocks) are tested on their effective sample counts X^2/Var.
 *
 *   Comparing many entries at once, some would pass any fixed threshold
 *   by chance. Significance is decided with Holm's step-down correction
 *   over the entries that have enough samples to be significant at all
 *   (Tarone's rule), so that for two traces of the same program the
 *   chance that any entry is called significant is at most alpha.
 *
 * Link with libmemtrace-analyze. Objects: the sides of a comparison and
 * their estimates, the comparison (mt_diff), the tests, models of several
 * traces, the report.
 *
 * Units: values are in the metric's unit (bytes or blocks), divided by
 * mt_diff_side.seconds when it is set; times are microseconds since the
 * trace's start (mt_timedelta).
 * Lifetimes: results are malloc'd; free them with the matching function
 * (an mt_diff and its entries' strings with mt_diff_free). A side points to
 * its selection, which must outlive every call given the side.
 * Thread safety: nothing is shared between calls; two comparisons may be
 * computed at once on one model (its selections are read only); one mt_diff
 * or collector is used by one thread at a time.
 * Stability: everything above the "Experimental" section at the end is
 * stable. The experimental part (the folded collector, which follows the
 * analysis layer's pipeline, and the distribution functions exposed for
 * checking) may change; define MEMTRACE_STABLE_ONLY to leave it out.
 */
#ifndef MEMTRACE_COMPARE_H
#define MEMTRACE_COMPARE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "memtrace/analyze.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* What is compared                                                          */

/* One side of a comparison: the allocations that pass a selection, made in
 * [from, to] (allocation time), and for the live measures live at `at`. */
typedef struct mt_diff_side {
    const mt_selection *sel;
    mt_timedelta from, to;   /* 0, MT_TIME_END: every allocation */
    mt_timedelta at;         /* live measures: a time, MT_TIME_END or MT_TIME_PEAK */
    double seconds;          /* > 0: every value is divided by it (a rate per second) */
    const char *site;        /* not NULL: only allocations whose site (innermost
                              * frame) has a function name containing it */
    const struct mt_diff_fold *fold; /* not NULL: sel is a folded model's selection
                              * and the allocations were summed per stack by
                              * this collector while folding (experimental:
                              * mt_diff_fold_new at the end) */
} mt_diff_side;

/* A side with every allocation of a selection, live measured at `at`. */
mt_diff_side mt_diff_side_all(const mt_selection *sel, mt_timedelta at);

/* How entries are keyed; keys are names, so that entries of two traces
 * (two builds of one program, two runs) meet. */
typedef enum mt_diff_key {
    MT_DIFF_SITE = 0,        /* innermost frame: function, file and line */
    MT_DIFF_FUNCTION = 1,    /* innermost frame's function name */
    MT_DIFF_PATH = 2         /* every frame's function name, outermost first */
} mt_diff_key;

typedef struct mt_diff_options {
    mt_metric metric;        /* alloc_bytes, alloc_objects, live_bytes, live_objects */
    mt_diff_key key;
    double alpha;            /* family-wise error rate; 0: 0.05 */
} mt_diff_options;

/* An estimate over some allocations with its sampling statistics. */
typedef struct mt_estimate {
    double value;            /* the estimate (unbiased) */
    double var;              /* estimated variance: sum of (weight of a sample)^2 */
    double unit;             /* weight of one sample (mean over the samples; for an
                              * estimate without samples, what one would weigh) */
    uint64_t samples;        /* sample points behind it */
} mt_estimate;
/* Standard error of an estimate: sqrt(var), and never less than one
 * sample's weight (an estimate of 0 from 0 samples is not exact). */
double mt_estimate_se(const mt_estimate *e);

typedef struct mt_diff_entry {
    char *name;              /* "func (file:line)" or "func"; NULL for a call path
                              * (mt_diff_entry_name spells it out) */
    uint32_t path;           /* call paths: the path's id in the result (0: empty) */
    const char *function;    /* innermost function (owned by the result) */
    const char *file;        /* of the innermost frame; "" when unknown or for paths */
    uint32_t line;           /* 0 when unknown or for functions and paths */
    mt_estimate base, new_;  /* the two sides' estimates */
    double delta;            /* new - base */
    double se;               /* standard error of delta */
    double z;                /* delta / se */
    double samples;          /* effective samples behind the test (0: untested) */
    double p;                /* two-sided p-value of the exact conditional test */
    double p_adj;            /* Holm-adjusted p-value; 1 when not in the family */
    int tested;              /* in the family of tests (could reach significance) */
    int significant;         /* p_adj < alpha */
} mt_diff_entry;

typedef struct mt_diff {
    mt_diff_options opts;    /* as used (alpha filled in) */
    size_t n;                /* entries with samples on either side */
    mt_diff_entry *entries;
    mt_diff_entry total;     /* all allocations of each side (p unadjusted, not in the family) */
    size_t n_tested;         /* size of the family */
    size_t n_significant;
    int same_trace;          /* both sides from one selection (moments, windows) */
    mt_timedelta base_at, new_at; /* live times used, resolved */
} mt_diff;

/* Compare. Both sides must be over the same kind of trace (bytes per word).
 * When both sides share a selection, allocations counted on both sides
 * cancel exactly and only the allocations that differ carry noise (two
 * moments of one trace are not independent). NULL only when out of memory.
 * Entries come sorted by significance (mt_diff_sort). */
mt_diff *mt_diff_compute(const mt_diff_side *base, const mt_diff_side *new_,
                         const mt_diff_options *o);
void mt_diff_free(mt_diff *d);
/* The entry's name into buf (capacity cap, always terminated when cap > 0;
 * a call path as "main;f;g", outermost first, clipped at the end when the
 * buffer is short). Returns the full length (call with cap 0 to size). */
size_t mt_diff_entry_name(const mt_diff *d, const mt_diff_entry *e, char *buf, size_t cap);
/* Sort: by_size 0: most significant first (p, then |z|); 1: largest |delta| first. */
void mt_diff_sort(mt_diff *d, int by_size);

/* A window as `memtrace diff --windows` takes it: a range of allocation
 * times ("0-2s", "8s-", "-1s", "2s-end") sets side->from/to and *is_range
 * = 1; one time ("10s", "peak", "end") sets side->at and *is_range = 0.
 * Returns 0, or -1 with a malloc'd message in *err. */
int mt_diff_parse_window(const char *text, mt_diff_side *side, int *is_range, char **err);


/* The total of one side by one measure. */
mt_estimate mt_diff_estimate(const mt_diff_side *s, mt_metric metric);
/* The time at which the side's own live bytes are highest (first time
 * reached; window and site apply, `at` is ignored). */
mt_timedelta mt_diff_side_peak(const mt_diff_side *s);
/* The same, and the estimate of that peak's live bytes (mt_peak) in *out. */
mt_timedelta mt_diff_side_peak_est(const mt_diff_side *s, mt_peak *out);

/* ------------------------------------------------------------------------ */
/* Tests (docs/compare.md)                                                   */

/* Two-sided p-value that a and b estimate the same quantity (exact
 * conditional binomial test on the effective sample counts). */
double mt_test_equal(const mt_estimate *a, const mt_estimate *b);
/* One-sided p-value of "the true value is at most limit" given e (exact
 * Poisson test): small means e is significantly above limit. */
double mt_test_above(const mt_estimate *e, double limit);
/* p-value of "the true peak is above limit" for a peak's estimate (mt_peak):
 * the chance that a peak of limit bytes gives a curve as high as this one
 * (the highest of the readings of the top, peak.c), 0 or 1 when exact. */
double mt_test_peak_above(const mt_peak *p, double limit);
/* One-sided p-value of "new is at most ratio times base". */
double mt_test_ratio_above(const mt_estimate *base, const mt_estimate *new_, double ratio);
/* Holm's step-down adjustment of n p-values (adj may be p). */
void mt_holm(const double *p, size_t n, double *adj);


/* ------------------------------------------------------------------------ */
/* Several traces as one                                                     */

/* One model from n traces (a process tree, repeated runs) recorded at one
 * sampling rate: mt_read with paths and n (analyze.h): their events merged
 * by absolute time (each trace's start time plus the event's), codes and
 * ids renumbered per trace, the header of the first (with the earliest
 * start time). by_process: every stack gets an outermost frame
 * "[pid N exe]" naming its trace's process, so that trees, flame graphs,
 * folded stacks and call paths split by process (and inside:"[pid N"
 * selects one). */

/* ------------------------------------------------------------------------ */
/* Report (memtrace diff)                                                    */

typedef struct mt_diff_report_options {
    size_t limit;            /* entries shown in text (0: all) */
    int json;
    int all;                 /* text: show entries that are not significant too */
    const char *base_name, *new_name;   /* shown in the header */
    const char *unit;        /* "" or "/s" after values */
    size_t json_limit;       /* entries in JSON (0: all) */
} mt_diff_report_options;
int mt_report_diff(FILE *out, const mt_diff *d, const mt_diff_report_options *o);
/* The same for live memory at a side's peak: the estimate of that peak
 * (mt_model_peak: all the trace's allocations) shown with the side (NULL:
 * not at its peak). */
int mt_report_diff_peaks(FILE *out, const mt_diff *d, const mt_diff_report_options *o,
                         const mt_peak *base_peak, const mt_peak *new_peak);

/* ------------------------------------------------------------------------ */
/* Experimental (leave out with MEMTRACE_STABLE_ONLY)                        */

#ifndef MEMTRACE_STABLE_ONLY

/* Comparing in bounded memory. A collector sums, per stack, what the
 * allocations of a folded model (mt_model_options.fold) bring to one or
 * both sides of a comparison under one measure: pass mt_diff_fold_alloc as
 * the model's on_fold hook with the collector as its context. The sides
 * give from, to and at (END: blocks never freed; PEAK: the model's
 * fold_peak, so load with fold_peak_known); their sel, seconds and site
 * are not used here. Then give the collector in mt_diff_side.fold, with
 * the folded model's selection (same filter and time as the fold) in sel,
 * to mt_diff_compute, mt_diff_estimate (same measure) or
 * mt_diff_side_peak (the model's own peak: no filter, site or window may
 * apply). Results are those of the whole model. Two traces: one collector
 * per trace (base NULL for the new trace's). NULL when out of memory. */
typedef struct mt_diff_fold mt_diff_fold;
mt_diff_fold *mt_diff_fold_new(const mt_diff_side *base, const mt_diff_side *new_,
                               mt_metric metric);
int mt_diff_fold_alloc(void *collector, const mt_model *m, const mt_alloc *a, uint64_t seq);
/* Forget what was summed (before reading the trace again). */
void mt_diff_fold_reset(mt_diff_fold *f);
void mt_diff_fold_free(mt_diff_fold *f);

/* Distribution functions used by the tests, exposed for checking. */
/* Regularized incomplete beta I_x(a, b), a, b > 0, 0 <= x <= 1. */
double mt_stat_ibeta(double a, double b, double x);
/* Regularized lower incomplete gamma P(a, x), a > 0, x >= 0. */
double mt_stat_igamma(double a, double x);
/* P(K >= k) for K ~ Binomial(n, p) (k, n may be fractional: the beta form). */
double mt_stat_binom_upper(double k, double n, double p);
/* P(K >= k) for K ~ Poisson(lambda). */
double mt_stat_poisson_upper(double k, double lambda);

#endif /* MEMTRACE_STABLE_ONLY */

#ifdef __cplusplus
}
#endif
#endif
