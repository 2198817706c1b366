/*
 * cmd_diff.c - 'memtrace diff': what changed between two traces, or two
 * windows or moments of one trace, per site, function or call path, with
 * the standard error and significance of every difference. Exit status as
 * diff(1): 0 no significant difference, 1 some, 2 trouble.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "memtrace/compare.h"
#include "options.h"
#include "report.h"

static const char diff_head[] =
    "usage: memtrace diff [OPTIONS] BASE NEW\n"
    "       memtrace diff [OPTIONS] --base BASE [--base BASE...] NEW...\n"
    "       memtrace diff [OPTIONS] --windows A B TRACE...\n"
    "\n"
    "What changed from BASE to NEW, per allocation site (or function, or call\n"
    "path): both estimates, the difference, its standard error, and whether it\n"
    "is larger than the sampling noise (exact test, Holm-Bonferroni corrected\n"
    "over the entries compared: see docs/compare.md). Traces recorded at\n"
    "different sampling rates compare correctly.\n"
    "\n"
    "BASE and NEW may be pprof profiles, gzipped or not: two Go heap profiles\n"
    "compare with the error of Go's sampling (docs/profiles-input.md).\n"
    "\n";
static const char diff_tail[] =
    "\n"
    "Memory follows the blocks live at once and the distinct stacks: each trace\n"
    "is folded while read (--at peak reads it twice; 'memtrace --route=whole diff'\n"
    "keeps every allocation instead). BASE and NEW are read at the same time,\n"
    "one thread each ('memtrace --route=one-thread diff': one after the other).\n"
    "Exit status: 0 no significant difference, 1 a significant difference,\n"
    "2 trouble (unreadable trace, bad arguments).\n"
    "Example: memtrace diff --by live --at peak before.ctf after.ctf\n";

/* A window: a range of allocation times, or one moment. */
typedef struct window {
    int is_range;
    mt_timedelta from, to, at;
    const char *text;
} window;

static int parse_window(const char *text, window *w)
{
    mt_diff_side sd = {0};
    char *err = NULL;
    w->text = text;
    if (mt_diff_parse_window(text, &sd, &w->is_range, &err) < 0) {
        fprintf(stderr, "memtrace diff: --windows: %s (a window is a range such as 0-2s or a time such as 10s, peak, end)\n",
                err ? err : text);
        free(err);
        return 2;
    }
    w->from = sd.from;
    w->to = sd.to;
    w->at = sd.at;
    return 0;
}

static void reset_fold(void *ctx)
{
    mt_diff_fold_reset(ctx);
}

/* A side that sums, while its trace is folded, what each allocation
 * brings to the sides base and new_ (NULL: not this trace's) into a new
 * collector *f (NULL when out of memory: then the whole model). */
static report_side fold_side(const char *const *paths, size_t n, int by_process,
                             const mt_diff_side *base, const mt_diff_side *new_, mt_metric metric,
                             int need_peak, mt_diff_fold **f)
{
    *f = mt_diff_fold_new(base, new_, metric);
    report_side sd = {paths, n, by_process, {*f ? mt_diff_fold_alloc : NULL, reset_fold, *f, need_peak},
                      NULL, NULL, NULL, 0};
    return sd;
}

/* The collector, if it saw every allocation (else the whole model is used). */
static const mt_diff_fold *folded(int fed, const mt_diff_fold *f)
{
    return fed ? f : NULL;
}

static double seconds_of(const mt_model *m, mt_timedelta from, mt_timedelta to)
{
    from = mt_model_resolve_time(m, from);
    to = mt_model_resolve_time(m, to);
    return (double)(to - from) / 1e6;
}

/* The command line of diff. */
typedef struct diff_args {
    mt_diff_options dopt;
    mt_diff_report_options ro;
    mt_timedelta at;
    const char *filter;
    int by_given, at_given, per_second, by_size, key, by_process, windows, live;
    const char *win_text[2];   /* --windows A B */
    window wa, wb;
    opt_list bases;            /* --base, each, or BASE */
    const char *const *news;   /* NEW..., or the TRACE of --windows */
    size_t n_news;
} diff_args;

static int diff_options(diff_args *a, int argc, char **argv, int *first)
{
    static const char *const keys[] = {"site", "function", "path", NULL};
    static const char *const sorts[] = {"significance", "size", NULL};
    const opt_spec opts[] = {
        OPT("by", 'b', OPT_MEASURE, &a->dopt.metric, "MEASURE",
            "alloc (bytes allocated, default), count (blocks\n"
            "allocated), live (bytes live at --at), live_count", .given = &a->by_given),
        OPT("at", 'a', OPT_TIME, &a->at, "TIME",
            "time for live: 2.5s, peak, end (default end; implies\n"
            "--by live); peak is each trace's own peak", .given = &a->at_given),
        OPT("key", 'k', OPT_CHOICE, &a->key, "KEY",
            "site (function and line, default), function, path\n"
            "(the whole call path, outermost first)", .choices = keys),
        OPT("filter", 'f', OPT_FILTER, &a->filter, "F",
            "only allocations matching the filter, on both sides"),
        OPT("per-second", 'p', OPT_FLAG, &a->per_second, NULL,
            "divide by each trace's duration (or window's length)"),
        OPT("windows", 'w', OPT_PAIR, a->win_text, "A B",
            "two windows of one TRACE: ranges such as 0-2s and\n"
            "8s-10s compare what was allocated in each; two times\n"
            "such as 2s and 10s (or peak, end) compare what was live", .given = &a->windows),
        OPT("base", 'B', OPT_LIST, &a->bases, "FILE",
            "a base trace; repeat it for several (a process tree,\n"
            "runs: aggregated); every other file is then a NEW trace"),
        OPT("by-process", 0, OPT_FLAG, &a->by_process, NULL,
            "aggregated traces get an outermost frame per process\n"
            "(--key path then splits by process)"),
        OPT("sort", 's', OPT_CHOICE, &a->by_size, "ORDER",
            "significance (default) or size (largest |change| first)", .choices = sorts),
        OPT("limit", 'n', OPT_COUNT, &a->ro.limit, "N", "entries shown (default 20, 0 = all)"),
        OPT("all", 0, OPT_FLAG, &a->ro.all, NULL, "show entries that are not significant too"),
        OPT("alpha", 0, OPT_REAL, &a->dopt.alpha, "A",
            "false-positive rate for the whole comparison (0.05)", .lo = 0, .hi = 1),
        OPT("json", 'j', OPT_FLAG, &a->ro.json, NULL, "JSON for scripts (every entry)"),
        REPORT_SITE_OPTS,
    };
    const opt_command cmd = {"diff", diff_head, diff_tail, 21, opts, sizeof opts / sizeof opts[0]};
    return opt_parse(&cmd, argc, argv, first);
}

/* What the windows ask, checked against the measure. */
static int check_windows(diff_args *a)
{
    if (parse_window(a->win_text[0], &a->wa) || parse_window(a->win_text[1], &a->wb))
        return 2;
    if (a->wa.is_range != a->wb.is_range) {
        fprintf(stderr, "memtrace diff: --windows %s %s: give two ranges (allocations) or two times (live memory)\n",
                a->wa.text, a->wb.text);
        return 2;
    }
    if (a->at_given) {
        fprintf(stderr, "memtrace diff: --at and --windows: the windows give the times\n");
        return 2;
    }
    if (!a->wa.is_range && !a->by_given)
        a->dopt.metric = MT_METRIC_LIVE_BYTES, a->live = 1;
    if (a->wa.is_range && a->live) {
        fprintf(stderr, "memtrace diff: --windows with ranges compares allocations (--by alloc or count); give two times, e.g. 2s 10s, to compare live memory\n");
        return 2;
    }
    if (!a->wa.is_range && !a->live) {
        fprintf(stderr, "memtrace diff: --windows with two times compares live memory (--by live or live_count); give ranges, e.g. 0-2s 8s-10s, to compare allocations\n");
        return 2;
    }
    if (!a->wa.is_range && a->per_second) {
        fprintf(stderr, "memtrace diff: --per-second needs ranges: live memory at a moment is no rate\n");
        return 2;
    }
    return 0;
}

/* -1 to go on with *a set, else the exit status. */
static int diff_parse(diff_args *a, int argc, char **argv)
{
    int first, rc = diff_options(a, argc, argv, &first);
    if (rc >= 0)
        return rc;
    if (a->by_given && a->dopt.metric == MT_METRIC_SAMPLES) {
        fprintf(stderr, "memtrace diff: --by samples: samples of two traces are not comparable; use alloc or count\n");
        return 2;
    }
    a->dopt.key = (mt_diff_key)a->key;
    a->ro.all = a->ro.all || a->ro.limit == 0;
    report_sites.used = 1; /* sites in the user's code, as in top */
    int nfiles = argc - first;
    if (a->windows && a->bases.n) {
        fprintf(stderr, "memtrace diff: --windows compares windows of one trace (or of several aggregated): no --base\n");
        return 2;
    }
    if (a->windows ? nfiles < 1 : a->bases.n ? nfiles < 1 : nfiles != 2) {
        fprintf(stderr, a->windows ? "memtrace diff: --windows A B takes a trace file\n"
                        : a->bases.n ? "memtrace diff: expected the NEW trace files after the --base ones\n"
                                     : "memtrace diff: expected two trace files, BASE and NEW (several: --base)\n");
        return opt_usage("diff");
    }
    a->news = (const char *const *)argv + first;
    a->n_news = (size_t)nfiles;
    if (!a->windows && !a->bases.n) {
        a->bases.v[a->bases.n++] = argv[first];
        a->news++;
        a->n_news--;
    }
    if (a->at_given && !a->by_given)
        a->dopt.metric = MT_METRIC_LIVE_BYTES;
    a->live = a->dopt.metric == MT_METRIC_LIVE_BYTES || a->dopt.metric == MT_METRIC_LIVE_OBJECTS;
    if (a->windows && check_windows(a))
        return 2;
    return -1;
}

/* What was read: one model (windows) or two, their collectors, the sides
 * compared and their names. */
typedef struct diff_read {
    mt_model *m1, *m2;
    mt_filter *f1, *f2;
    mt_selection *s1, *s2;
    mt_diff_fold *fold1, *fold2;
    mt_diff_side sb, sn;
    char nb[512], nn[512];
} diff_read;

static void diff_close(diff_read *r)
{
    if (r->m1)
        report_close(r->m1, r->f1, r->s1);
    if (r->m2)
        report_close(r->m2, r->f2, r->s2);
    mt_diff_fold_free(r->fold1);
    mt_diff_fold_free(r->fold2);
}

/* The two windows' sides, of the one model when s is not NULL. */
static void window_sides(const diff_args *a, mt_selection *s, mt_diff_side *sb, mt_diff_side *sn)
{
    *sb = mt_diff_side_all(s, MT_TIME_END);
    *sn = *sb;
    if (a->wa.is_range) {
        sb->from = a->wa.from, sb->to = a->wa.to;
        sn->from = a->wb.from, sn->to = a->wb.to;
    } else {
        sb->at = a->wa.at;
        sn->at = a->wb.at;
    }
}

/* --windows: one trace (or several aggregated), two windows of it. */
static int read_windows(const diff_args *a, diff_read *r)
{
    const char *path = a->news[0];
    /* the sides as the collector needs them before the trace is read */
    window_sides(a, NULL, &r->sb, &r->sn);
    report_side side = fold_side(a->news, a->n_news, a->by_process, &r->sb, &r->sn, a->dopt.metric,
                                 r->sb.at == MT_TIME_PEAK || r->sn.at == MT_TIME_PEAK, &r->fold1);
    if (report_open_sides("diff", &side, 1, a->filter, MT_TIME_END,
                          a->dopt.key == MT_DIFF_PATH ? 0 : 2))
        return 2;
    r->m1 = side.m, r->f1 = side.f, r->s1 = side.s;
    window_sides(a, r->s1, &r->sb, &r->sn);
    r->sb.fold = r->sn.fold = folded(side.fed, r->fold1);
    if (!a->wa.is_range) {
        snprintf(r->nb, sizeof r->nb, "%s", path);
        snprintf(r->nn, sizeof r->nn, "%s", path);
        return 0;
    }
    if (a->per_second) {
        r->sb.seconds = seconds_of(r->m1, a->wa.from, a->wa.to);
        r->sn.seconds = seconds_of(r->m1, a->wb.from, a->wb.to);
        if (!(r->sb.seconds > 0) || !(r->sn.seconds > 0)) {
            fprintf(stderr, "memtrace diff: --per-second: a window has no length in this trace\n");
            return 2;
        }
    }
    snprintf(r->nb, sizeof r->nb, "%s, allocated in %s", path, a->wa.text);
    snprintf(r->nn, sizeof r->nn, "%s, allocated in %s", path, a->wb.text);
    return 0;
}

/* BASE and NEW, read at once. */
static int read_two(const diff_args *a, diff_read *r)
{
    mt_diff_side spec = mt_diff_side_all(NULL, a->at);
    int need_peak = a->live && a->at == MT_TIME_PEAK;
    report_side sides[2] = {
        fold_side(a->bases.v, a->bases.n, a->by_process, &spec, NULL, a->dopt.metric, need_peak,
                  &r->fold1),
        fold_side(a->news, a->n_news, a->by_process, NULL, &spec, a->dopt.metric, need_peak,
                  &r->fold2)};
    if (report_open_sides("diff", sides, 2, a->filter, a->at, a->dopt.key == MT_DIFF_PATH ? 0 : 2))
        return 2;
    r->m1 = sides[0].m, r->f1 = sides[0].f, r->s1 = sides[0].s;
    r->m2 = sides[1].m, r->f2 = sides[1].f, r->s2 = sides[1].s;
    if (report_profile_measure("diff", a->bases.v[0], r->m1, a->dopt.metric) ||
        report_profile_measure("diff", a->news[0], r->m2, a->dopt.metric))
        return 1;
    unsigned w1 = mt_model_info(r->m1)->word_size, w2 = mt_model_info(r->m2)->word_size;
    if (w1 != w2)
        fprintf(stderr, "memtrace diff: warning: the traces have different word sizes (%u and %u bits): a C and an OCaml trace?\n",
                w1, w2);
    r->sb = mt_diff_side_all(r->s1, a->at);
    r->sn = mt_diff_side_all(r->s2, a->at);
    r->sb.fold = folded(sides[0].fed, r->fold1);
    r->sn.fold = folded(sides[1].fed, r->fold2);
    if (a->per_second) {
        r->sb.seconds = seconds_of(r->m1, 0, MT_TIME_END);
        r->sn.seconds = seconds_of(r->m2, 0, MT_TIME_END);
        if (!(r->sb.seconds > 0) || !(r->sn.seconds > 0)) {
            fprintf(stderr, "memtrace diff: --per-second: %s lasts no time\n",
                    r->sb.seconds > 0 ? a->news[0] : a->bases.v[0]);
            return 2;
        }
    }
    snprintf(r->nb, sizeof r->nb, a->bases.n > 1 ? "%s (+%zu more)" : "%s", a->bases.v[0],
             a->bases.n - 1);
    snprintf(r->nn, sizeof r->nn, a->n_news > 1 ? "%s (+%zu more)" : "%s", a->news[0],
             a->n_news - 1);
    return 0;
}

/* The comparison and its report: the exit status. */
static int compare(diff_args *a, diff_read *r)
{
    a->ro.base_name = r->nb;
    a->ro.new_name = r->nn;
    a->ro.unit = a->per_second ? "/s" : "";
    /* live at a trace's peak (of all its allocations): that peak's estimate */
    mt_peak pb, pn, *base_peak = NULL, *new_peak = NULL;
    if (a->live && r->sb.at == MT_TIME_PEAK) {
        mt_model_peak(mt_selection_model(r->sb.sel), &pb);
        base_peak = &pb;
    }
    if (a->live && r->sn.at == MT_TIME_PEAK) {
        mt_model_peak(mt_selection_model(r->sn.sel), &pn);
        new_peak = &pn;
    }
    int rc = 2;
    mt_diff *d = mt_diff_compute(&r->sb, &r->sn, &a->dopt);
    if (!d) {
        fprintf(stderr, "memtrace diff: out of memory\n");
        return 2;
    }
    if (a->by_size)
        mt_diff_sort(d, 1);
    if (mt_report_diff_peaks(stdout, d, &a->ro, base_peak, new_peak) < 0 || fflush(stdout) != 0)
        perror("memtrace diff: writing the report");
    else
        rc = d->n_significant ? 1 : 0;
    mt_diff_free(d);
    return rc;
}

int cmd_diff(int argc, char **argv)
{
    const char *bases[argc > 0 ? argc : 1];
    diff_args a = {.dopt = {MT_METRIC_ALLOC_BYTES, MT_DIFF_SITE, 0.05},
                   .ro = {20, 0, 0, NULL, NULL, "", 0}, .at = MT_TIME_END,
                   .bases = {bases, 0, (size_t)(argc > 0 ? argc : 1)}};
    int rc = diff_parse(&a, argc, argv);
    if (rc >= 0)
        return rc;
    diff_read r;
    memset(&r, 0, sizeof r);
    rc = a.windows ? read_windows(&a, &r) : read_two(&a, &r);
    if (rc == 0)
        rc = compare(&a, &r);
    diff_close(&r);
    return rc;
}
