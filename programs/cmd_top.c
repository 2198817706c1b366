/*
 * cmd_top.c - 'memtrace top': the allocation sites that account for the
 * most memory, with their share, sampling error and callers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "options.h"
#include "report.h"
#include "verdicts.h"

static const char top_head[] =
    "usage: memtrace top [OPTIONS] FILE...\n"
    "\n"
    "Allocation sites that account for the most memory, each with its share,\n"
    "its sampling error, the allocation plumbing it went through (via ...)\n"
    "and the callers it is reached through. A site is the first frame of the\n"
    "code that asked for the memory: operator new, std::, xmalloc, g_malloc\n"
    "and other allocation plumbing are skipped (see --raw). Values are\n"
    "estimates extrapolated from the samples.\n"
    "\n"
    "FILE may be a pprof profile, gzipped or not (a Go heap profile, this\n"
    "tool's pprof output, ...): live is then what it held in use, and what\n"
    "needs times (--at, time filters) is refused (docs/profiles-input.md).\n"
    "\n";
static const char top_tail[] =
    "\n"
    "Entries marked ~ are noisy (relative error over 20%), ? mostly noise.\n"
    "Example: memtrace top --by live --at peak app.ctf\n";

/* The command line of top. */
typedef struct top_args {
    mt_top_options o;
    mt_timedelta at;
    int by_given, at_given, by_process;
    const char *verdict;     /* --by lost / reachable: bytes live at the end with it */
    const char *const *paths;
    size_t n_paths;
} top_args;

/* --by: a measure, or a verdict of the leak scan. */
static int take_by(void *ctx, const char *arg, const char *opt)
{
    top_args *a = ctx;
    a->verdict = NULL;
    a->by_given = 1;
    if (!strcmp(arg, "lost") || !strcmp(arg, "reachable")) {
        a->verdict = arg;
        a->o.metric = MT_METRIC_LIVE_BYTES;
        return 0;
    }
    opt_spec m = OPT(opt + 2, 0, OPT_MEASURE, &a->o.metric, NULL, NULL);
    return opt_value("top", &m, arg);
}

/* -1 to go on with *a set, else the exit status. */
static int top_parse(top_args *a, int argc, char **argv)
{
    const opt_spec opts[] = {
        OPT("by", 'b', OPT_CALL, NULL, "MEASURE",
            "alloc (bytes allocated, default), count (blocks\n"
            "allocated), live (bytes live at --at), live_count,\n"
            "temporary (blocks freed within 1 ms), temp_bytes,\n"
            "samples; lost, reachable (bytes live at the end that\n"
            "the leak scan found lost or reachable: traces\n"
            "recorded with 'memtrace run --leaks'; docs/leaks.md)", .fn = take_by, .ctx = a),
        OPT("at", 'a', OPT_TIME, &a->at, "TIME",
            "time for live: 2.5s, 300ms, peak, end (default end;\n"
            "implies --by live unless --by is given)", .given = &a->at_given),
        OPT("filter", 'f', OPT_FILTER, &a->o.filter_text, "F",
            "only allocations matching the filter (docs/filters.md),\n"
            "e.g. 'live:peak size:>=4k !inside:Stdlib'"),
        OPT("limit", 'n', OPT_COUNT, &a->o.limit, "N", "sites shown (default 20, 0 = all)"),
        OPT("callers", 'c', OPT_COUNT, &a->o.callers, "N", "callers shown per site (default 3)"),
        OPT("json", 'j', OPT_FLAG, &a->o.json, NULL, "JSON for scripts"),
        REPORT_SITE_OPTS,
        OPT("by-process", 0, OPT_FLAG, &a->by_process, NULL, REPORT_BY_PROCESS_HELP),
    };
    const opt_command cmd = {"top", top_head, top_tail, 21, opts, sizeof opts / sizeof opts[0]};
    int first, rc = opt_parse(&cmd, argc, argv, &first);
    if (rc >= 0)
        return rc;
    if (first >= argc) {
        fprintf(stderr, "memtrace top: expected a trace file (several: aggregated)\n");
        return opt_usage("top");
    }
    if (a->at_given && !a->by_given)
        a->o.metric = MT_METRIC_LIVE_BYTES;
    if (a->verdict && a->at_given && a->at != MT_TIME_END) {
        fprintf(stderr, "memtrace top: --by %s: verdicts are about the end; --at cannot change that\n",
                a->verdict);
        return 2;
    }
    a->paths = (const char *const *)argv + first;
    a->n_paths = (size_t)(argc - first);
    return -1;
}

/* After the report of --by lost: a zero from no sample gets its bound, as
 * stats and check print it. */
static void lost_bound(const top_args *a, const mt_model *m, const mt_selection *s)
{
    if (!a->verdict || strcmp(a->verdict, "lost") || a->o.json ||
        mt_selection_total(s).live_samples != 0)
        return;
    double up = mt_unsampled_upper(m, 0.95);
    if (up > 0) {
        char b[40];
        mt_format_bytes(b, sizeof b, up);
        printf("no lost block sampled: the lost bytes are 0 B, at most %s (95%%)\n", b);
    }
}

int cmd_top(int argc, char **argv)
{
    top_args a = {.o = {MT_METRIC_ALLOC_BYTES, 20, 3, 0, NULL, 0, 0}, .at = MT_TIME_END};
    int rc = top_parse(&a, argc, argv);
    if (rc >= 0)
        return rc;
    char *vfilter = NULL;
    if (a.verdict) {
        a.at = MT_TIME_END;
        vfilter = verdict_filter_text(a.o.filter_text, a.verdict);
        if (!vfilter) {
            perror("memtrace top");
            return 1;
        }
        a.o.filter_text = vfilter;
    }
    a.o.at_peak = a.at == MT_TIME_PEAK;
    mt_model *m;
    mt_filter *f;
    mt_selection *s;
    report_sites.used = 1;
    a.o.full_names = report_sites.full_names;
    report_stacks_only = 1;
    rc = report_open_many("top", a.paths, a.n_paths, a.by_process, a.o.filter_text, a.at, 2, &m,
                          &f, &s);
    if (rc) {
        free(vfilter);
        return rc;
    }
    if (report_profile_measure("top", a.paths[0], m, a.o.metric))
        rc = 1;
    else if (a.verdict && !mt_model_scan(m, NULL)) {
        char opt[32];
        snprintf(opt, sizeof opt, "--by %s", a.verdict);
        verdicts_missing("top", opt, a.n_paths, a.paths[0]);
        rc = 1;
    } else {
        if (mt_report_top(stdout, s, &a.o) < 0)
            rc = 1;
        else
            lost_bound(&a, m, s);
        if (rc || fflush(stdout) != 0) {
            perror("memtrace top: writing the report");
            rc = 1;
        }
    }
    report_close(m, f, s);
    free(vfilter);
    return rc;
}
