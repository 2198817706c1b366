/*
 * cmd_diff.c - 'memtrace diff': what changed between two traces, or two
 * windows or moments of one trace, per site, function or call path, with
 * the standard error and significance of every difference. Exit status as
 * diff(1): 0 no significant difference, 1 some, 2 trouble.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "memtrace/compare.h"
#include "report.h"

static void help(void)
{
    printf("usage: memtrace diff [OPTIONS] BASE NEW\n"
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
           "\n"
           "  -b, --by MEASURE   alloc (bytes allocated, default), count (blocks\n"
           "                     allocated), live (bytes live at --at), live_count\n"
           "  -a, --at TIME      time for live: 2.5s, peak, end (default end; implies\n"
           "                     --by live); peak is each trace's own peak\n"
           "  -k, --key KEY      site (function and line, default), function, path\n"
           "                     (the whole call path, outermost first)\n"
           "  -f, --filter F     only allocations matching the filter, on both sides\n"
           "  -p, --per-second   divide by each trace's duration (or window's length)\n"
           "  -w, --windows A B  two windows of one TRACE: ranges such as 0-2s and\n"
           "                     8s-10s compare what was allocated in each; two times\n"
           "                     such as 2s and 10s (or peak, end) compare what was live\n"
           "  -B, --base FILE    a base trace; repeat it for several (a process tree,\n"
           "                     runs: aggregated); every other file is then a NEW trace\n"
           "      --by-process   aggregated traces get an outermost frame per process\n"
           "                     (--key path then splits by process)\n"
           "  -s, --sort ORDER   significance (default) or size (largest |change| first)\n"
           "  -n, --limit N      entries shown (default 20, 0 = all)\n"
           "      --all          show entries that are not significant too\n"
           "      --alpha A      false-positive rate for the whole comparison (0.05)\n"
           "  -j, --json         JSON for scripts (every entry)\n"
           REPORT_SITE_HELP
           "  -h, --help         this help\n"
           "\n"
           "Memory follows the blocks live at once and the distinct stacks: each trace\n"
           "is folded while read (--at peak reads it twice; 'memtrace --route=whole diff'\n"
           "keeps every allocation instead). BASE and NEW are read at the same time,\n"
           "one thread each ('memtrace --route=one-thread diff': one after the other).\n"
           "Exit status: 0 no significant difference, 1 a significant difference,\n"
           "2 trouble (unreadable trace, bad arguments).\n"
           "Example: memtrace diff --by live --at peak before.ctf after.ctf\n");
}

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

int cmd_diff(int argc, char **argv)
{
    enum { OPT_ALL = 256, OPT_ALPHA, OPT_BY_PROCESS };
    static const struct option opts[] = {
        {"by", required_argument, 0, 'b'},      {"at", required_argument, 0, 'a'},
        {"key", required_argument, 0, 'k'},     {"filter", required_argument, 0, 'f'},
        {"per-second", no_argument, 0, 'p'},    {"windows", required_argument, 0, 'w'},
        {"sort", required_argument, 0, 's'},    {"limit", required_argument, 0, 'n'},
        {"all", no_argument, 0, OPT_ALL},       {"alpha", required_argument, 0, OPT_ALPHA},
        {"json", no_argument, 0, 'j'},          {"help", no_argument, 0, 'h'},
        {"base", required_argument, 0, 'B'},    {"by-process", no_argument, 0, OPT_BY_PROCESS},
        REPORT_SITE_LONGOPTS,                   {0, 0, 0, 0}};
    mt_diff_options dopt = {MT_METRIC_ALLOC_BYTES, MT_DIFF_SITE, 0.05};
    mt_diff_report_options ro = {20, 0, 0, NULL, NULL, "", 0};
    mt_timedelta at = MT_TIME_END;
    const char *filter = NULL;
    int by_given = 0, at_given = 0, per_second = 0, by_size = 0, windows = 0, c;
    window wa, wb;
    char *end;
    const char *bases[argc > 0 ? argc : 1];
    size_t n_bases = 0;
    int by_process = 0;
    while ((c = getopt_long(argc, argv, "b:a:k:f:pw:s:n:jhB:", opts, NULL)) != -1) {
        switch (c) {
        case 'b':
            if (report_metric("diff", "--by", optarg, &dopt.metric))
                return 2;
            if (dopt.metric == MT_METRIC_SAMPLES) {
                fprintf(stderr, "memtrace diff: --by samples: samples of two traces are not comparable; use alloc or count\n");
                return 2;
            }
            by_given = 1;
            break;
        case 'a':
            if (report_time("diff", "--at", optarg, &at))
                return 2;
            at_given = 1;
            break;
        case 'k':
            if (!strcmp(optarg, "site"))
                dopt.key = MT_DIFF_SITE;
            else if (!strcmp(optarg, "function"))
                dopt.key = MT_DIFF_FUNCTION;
            else if (!strcmp(optarg, "path"))
                dopt.key = MT_DIFF_PATH;
            else {
                fprintf(stderr, "memtrace diff: --key %s: use site, function or path\n", optarg);
                return 2;
            }
            break;
        case 'f': filter = optarg; break;
        case 'p': per_second = 1; break;
        case 'w':
            if (optind >= argc) {
                fprintf(stderr, "memtrace diff: --windows takes two windows: --windows A B TRACE\n");
                return 2;
            }
            if (parse_window(optarg, &wa) || parse_window(argv[optind], &wb))
                return 2;
            optind++;
            windows = 1;
            break;
        case 's':
            if (!strcmp(optarg, "size"))
                by_size = 1;
            else if (!strcmp(optarg, "significance"))
                by_size = 0;
            else {
                fprintf(stderr, "memtrace diff: --sort %s: use significance or size\n", optarg);
                return 2;
            }
            break;
        case 'n':
            ro.limit = strtoul(optarg, &end, 10);
            if (*end || !*optarg) {
                fprintf(stderr, "memtrace diff: --limit %s: not a number\n", optarg);
                return 2;
            }
            ro.all = ro.all || ro.limit == 0;
            break;
        case OPT_ALL: ro.all = 1; break;
        case OPT_ALPHA:
            dopt.alpha = strtod(optarg, &end);
            if (*end || !(dopt.alpha > 0 && dopt.alpha < 1)) {
                fprintf(stderr, "memtrace diff: --alpha %s: expected a number between 0 and 1, e.g. 0.01\n", optarg);
                return 2;
            }
            break;
        case 'j': ro.json = 1; break;
        case 'B': bases[n_bases++] = optarg; break;
        case OPT_BY_PROCESS: by_process = 1; break;
        case 'h': help(); return 0;
        case REPORT_OPT_RAW:
        case REPORT_OPT_PLUMBING:
        case REPORT_OPT_FULL_NAMES:
            if (report_site_option("diff", c, optarg))
                return 2;
            break;
        default: return report_usage("diff");
        }
    }
    report_sites.used = 1; /* sites in the user's code, as in top */
    int nfiles = argc - optind;
    if (windows && n_bases) {
        fprintf(stderr, "memtrace diff: --windows compares windows of one trace (or of several aggregated): no --base\n");
        return 2;
    }
    if (windows ? nfiles < 1 : n_bases ? nfiles < 1 : nfiles != 2) {
        fprintf(stderr, windows ? "memtrace diff: --windows A B takes a trace file\n"
                        : n_bases ? "memtrace diff: expected the NEW trace files after the --base ones\n"
                                  : "memtrace diff: expected two trace files, BASE and NEW (several: --base)\n");
        return report_usage("diff");
    }
    const char *const *news = (const char *const *)argv + optind;
    size_t n_news = (size_t)nfiles;
    if (!windows && !n_bases) {
        bases[n_bases++] = argv[optind];
        news++;
        n_news--;
    }
    if (at_given && !by_given)
        dopt.metric = MT_METRIC_LIVE_BYTES;
    int live = dopt.metric == MT_METRIC_LIVE_BYTES || dopt.metric == MT_METRIC_LIVE_OBJECTS;
    if (windows) {
        if (wa.is_range != wb.is_range) {
            fprintf(stderr, "memtrace diff: --windows %s %s: give two ranges (allocations) or two times (live memory)\n",
                    wa.text, wb.text);
            return 2;
        }
        if (at_given) {
            fprintf(stderr, "memtrace diff: --at and --windows: the windows give the times\n");
            return 2;
        }
        if (!wa.is_range && !by_given)
            dopt.metric = MT_METRIC_LIVE_BYTES, live = 1;
        if (wa.is_range && live) {
            fprintf(stderr, "memtrace diff: --windows with ranges compares allocations (--by alloc or count); give two times, e.g. 2s 10s, to compare live memory\n");
            return 2;
        }
        if (!wa.is_range && !live) {
            fprintf(stderr, "memtrace diff: --windows with two times compares live memory (--by live or live_count); give ranges, e.g. 0-2s 8s-10s, to compare allocations\n");
            return 2;
        }
        if (!wa.is_range && per_second) {
            fprintf(stderr, "memtrace diff: --per-second needs ranges: live memory at a moment is no rate\n");
            return 2;
        }
    }
    size_t shallow = dopt.key == MT_DIFF_PATH ? 0 : 2;
    mt_model *m1 = NULL, *m2 = NULL;
    mt_filter *f1 = NULL, *f2 = NULL;
    mt_selection *s1 = NULL, *s2 = NULL;
    char nb[512], nn[512];
    mt_diff_side sb, sn;
    mt_diff_fold *fold1 = NULL, *fold2 = NULL;
    if (windows) {
        const char *path = argv[optind];
        /* the sides as the collector needs them before the trace is read */
        sb = mt_diff_side_all(NULL, MT_TIME_END);
        sn = sb;
        if (wa.is_range) {
            sb.from = wa.from, sb.to = wa.to;
            sn.from = wb.from, sn.to = wb.to;
        } else {
            sb.at = wa.at;
            sn.at = wb.at;
        }
        report_side side = fold_side(news, n_news, by_process, &sb, &sn, dopt.metric,
                                     sb.at == MT_TIME_PEAK || sn.at == MT_TIME_PEAK, &fold1);
        if (report_open_sides("diff", &side, 1, filter, MT_TIME_END, shallow)) {
            mt_diff_fold_free(fold1);
            return 2;
        }
        m1 = side.m, f1 = side.f, s1 = side.s;
        sb = mt_diff_side_all(s1, MT_TIME_END);
        sb.fold = folded(side.fed, fold1);
        sn = sb;
        if (wa.is_range) {
            sb.from = wa.from, sb.to = wa.to;
            sn.from = wb.from, sn.to = wb.to;
            if (per_second) {
                sb.seconds = seconds_of(m1, wa.from, wa.to);
                sn.seconds = seconds_of(m1, wb.from, wb.to);
                if (!(sb.seconds > 0) || !(sn.seconds > 0)) {
                    fprintf(stderr, "memtrace diff: --per-second: a window has no length in this trace\n");
                    report_close(m1, f1, s1);
                    mt_diff_fold_free(fold1);
                    return 2;
                }
            }
            snprintf(nb, sizeof nb, "%s, allocated in %s", path, wa.text);
            snprintf(nn, sizeof nn, "%s, allocated in %s", path, wb.text);
        } else {
            sb.at = wa.at;
            sn.at = wb.at;
            snprintf(nb, sizeof nb, "%s", path);
            snprintf(nn, sizeof nn, "%s", path);
        }
    } else {
        mt_diff_side spec = mt_diff_side_all(NULL, at);
        int need_peak = live && at == MT_TIME_PEAK;
        report_side sides[2] = {
            fold_side(bases, n_bases, by_process, &spec, NULL, dopt.metric, need_peak, &fold1),
            fold_side(news, n_news, by_process, NULL, &spec, dopt.metric, need_peak, &fold2)};
        if (report_open_sides("diff", sides, 2, filter, at, shallow)) {
            mt_diff_fold_free(fold1);
            mt_diff_fold_free(fold2);
            return 2;
        }
        m1 = sides[0].m, f1 = sides[0].f, s1 = sides[0].s;
        m2 = sides[1].m, f2 = sides[1].f, s2 = sides[1].s;
        if (report_profile_measure("diff", bases[0], m1, dopt.metric) ||
            report_profile_measure("diff", news[0], m2, dopt.metric)) {
            report_close(m1, f1, s1);
            report_close(m2, f2, s2);
            mt_diff_fold_free(fold1);
            mt_diff_fold_free(fold2);
            return 1;
        }
        if (mt_model_info(m1)->word_size != mt_model_info(m2)->word_size)
            fprintf(stderr, "memtrace diff: warning: the traces have different word sizes (%u and %u bits): a C and an OCaml trace?\n",
                    (unsigned)mt_model_info(m1)->word_size, (unsigned)mt_model_info(m2)->word_size);
        sb = mt_diff_side_all(s1, at);
        sn = mt_diff_side_all(s2, at);
        sb.fold = folded(sides[0].fed, fold1);
        sn.fold = folded(sides[1].fed, fold2);
        if (per_second) {
            sb.seconds = seconds_of(m1, 0, MT_TIME_END);
            sn.seconds = seconds_of(m2, 0, MT_TIME_END);
            if (!(sb.seconds > 0) || !(sn.seconds > 0)) {
                fprintf(stderr, "memtrace diff: --per-second: %s lasts no time\n",
                        sb.seconds > 0 ? news[0] : bases[0]);
                report_close(m1, f1, s1);
                report_close(m2, f2, s2);
                mt_diff_fold_free(fold1);
                mt_diff_fold_free(fold2);
                return 2;
            }
        }
        snprintf(nb, sizeof nb, n_bases > 1 ? "%s (+%zu more)" : "%s", bases[0], n_bases - 1);
        snprintf(nn, sizeof nn, n_news > 1 ? "%s (+%zu more)" : "%s", news[0], n_news - 1);
    }
    ro.base_name = nb;
    ro.new_name = nn;
    ro.unit = per_second ? "/s" : "";
    /* live at a trace's peak (of all its allocations): that peak's estimate */
    mt_peak pb, pn, *base_peak = NULL, *new_peak = NULL;
    if (live && sb.at == MT_TIME_PEAK) {
        mt_model_peak(mt_selection_model(sb.sel), &pb);
        base_peak = &pb;
    }
    if (live && sn.at == MT_TIME_PEAK) {
        mt_model_peak(mt_selection_model(sn.sel), &pn);
        new_peak = &pn;
    }
    int rc = 2;
    mt_diff *d = mt_diff_compute(&sb, &sn, &dopt);
    if (!d) {
        fprintf(stderr, "memtrace diff: out of memory\n");
    } else {
        if (by_size)
            mt_diff_sort(d, 1);
        if (mt_report_diff_peaks(stdout, d, &ro, base_peak, new_peak) < 0 || fflush(stdout) != 0)
            perror("memtrace diff: writing the report");
        else
            rc = d->n_significant ? 1 : 0;
        mt_diff_free(d);
    }
    report_close(m1, f1, s1);
    if (m2)
        report_close(m2, f2, s2);
    mt_diff_fold_free(fold1);
    mt_diff_fold_free(fold2);
    return rc;
}
