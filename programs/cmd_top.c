/*
 * cmd_top.c - 'memtrace top': the allocation sites that account for the
 * most memory, with their share, sampling error and callers.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "report.h"

static void help(void)
{
    printf("usage: memtrace top [OPTIONS] FILE...\n"
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
           "\n"
           "  -b, --by MEASURE   alloc (bytes allocated, default), count (blocks\n"
           "                     allocated), live (bytes live at --at), live_count,\n"
           "                     temporary (blocks freed within 1 ms), temp_bytes,\n"
           "                     samples; lost, reachable (bytes live at the end that\n"
           "                     the leak scan found lost or reachable: traces\n"
           "                     recorded with 'memtrace run --leaks'; docs/leaks.md)\n"
           "  -a, --at TIME      time for live: 2.5s, 300ms, peak, end (default end;\n"
           "                     implies --by live unless --by is given)\n"
           "  -f, --filter F     only allocations matching the filter (docs/filters.md),\n"
           "                     e.g. 'live:peak size:>=4k !inside:Stdlib'\n"
           "  -n, --limit N      sites shown (default 20, 0 = all)\n"
           "  -c, --callers N    callers shown per site (default 3)\n"
           "  -j, --json         JSON for scripts\n"
           REPORT_SITE_HELP
           "      --by-process   several FILEs (app.ctf app.ctf.*, runs) are aggregated;\n"
           "                     this adds an outermost frame per process\n"
           "  -h, --help         this help\n"
           "\n"
           "Entries marked ~ are noisy (relative error over 20%%), ? mostly noise.\n"
           "Example: memtrace top --by live --at peak app.ctf\n");
}

int cmd_top(int argc, char **argv)
{
    static const struct option opts[] = {
        {"by", required_argument, 0, 'b'},     {"at", required_argument, 0, 'a'},
        {"filter", required_argument, 0, 'f'}, {"limit", required_argument, 0, 'n'},
        {"callers", required_argument, 0, 'c'}, {"json", no_argument, 0, 'j'},
        REPORT_SITE_LONGOPTS,
        {"by-process", no_argument, 0, REPORT_OPT_BY_PROCESS},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    mt_top_options o = {MT_METRIC_ALLOC_BYTES, 20, 3, 0, NULL, 0, 0};
    mt_timedelta at = MT_TIME_END;
    int by_given = 0, at_given = 0, c;
    char *end;
    int by_process = 0;
    const char *verdict = NULL;   /* --by lost / reachable */
    char *vfilter = NULL;
    while ((c = getopt_long(argc, argv, "b:a:f:n:c:jh", opts, NULL)) != -1) {
        switch (c) {
        case 'b':
            verdict = NULL;
            if (!strcmp(optarg, "lost") || !strcmp(optarg, "reachable")) {
                /* Bytes live at the end with that verdict. */
                verdict = optarg;
                o.metric = MT_METRIC_LIVE_BYTES;
                by_given = 1;
                break;
            }
            if (report_metric("top", "--by", optarg, &o.metric))
                return 2;
            by_given = 1;
            break;
        case 'a':
            if (report_time("top", "--at", optarg, &at))
                return 2;
            at_given = 1;
            break;
        case 'f': o.filter_text = optarg; break;
        case 'n':
        case 'c': {
            unsigned long v = strtoul(optarg, &end, 10);
            if (*end || !*optarg) {
                fprintf(stderr, "memtrace top: %s %s: not a number\n", c == 'n' ? "--limit" : "--callers", optarg);
                return 2;
            }
            if (c == 'n')
                o.limit = v;
            else
                o.callers = v;
            break;
        }
        case 'j': o.json = 1; break;
        case REPORT_OPT_BY_PROCESS: by_process = 1; break;
        case 'h': help(); return 0;
        case REPORT_OPT_RAW:
        case REPORT_OPT_PLUMBING:
        case REPORT_OPT_FULL_NAMES: report_site_option("top", c, optarg); break;
        default: return report_usage("top");
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "memtrace top: expected a trace file (several: aggregated)\n");
        return report_usage("top");
    }
    if (at_given && !by_given)
        o.metric = MT_METRIC_LIVE_BYTES;
    if (verdict) {
        if (at_given && at != MT_TIME_END) {
            fprintf(stderr, "memtrace top: --by %s: verdicts are about the end; --at cannot change that\n",
                    verdict);
            return 2;
        }
        at = MT_TIME_END;
        size_t n = (o.filter_text ? strlen(o.filter_text) : 0) + 32;
        vfilter = malloc(n);
        if (!vfilter) {
            perror("memtrace top");
            return 1;
        }
        snprintf(vfilter, n, "%s%sverdict:%s", o.filter_text ? o.filter_text : "",
                 o.filter_text ? " " : "", verdict);
        o.filter_text = vfilter;
    }
    o.at_peak = at == MT_TIME_PEAK;
    mt_model *m;
    mt_filter *f;
    mt_selection *s;
    report_sites.used = 1;
    o.full_names = report_sites.full_names;
    report_stacks_only = 1;
    int rc = report_open_many("top", (const char *const *)argv + optind, (size_t)(argc - optind), by_process, o.filter_text, at, 2, &m, &f, &s);
    if (rc) {
        free(vfilter);
        return rc;
    }
    if (report_profile_measure("top", argv[optind], m, o.metric)) {
        report_close(m, f, s);
        free(vfilter);
        return 1;
    }
    if (verdict && !mt_model_scan(m, NULL)) {
        if (argc - optind > 1)   /* several traces read as one carry no verdicts */
            fprintf(stderr, "memtrace top: --by %s: verdicts are read from one trace at a time, "
                    "and %d were given: run it on each\n", verdict, argc - optind);
        else
            fprintf(stderr, "memtrace top: --by %s: %s has no leak verdicts; record it with "
                    "'memtrace run --leaks' (or MEMTRACE_LEAKS=1 under LD_PRELOAD) so that the "
                    "program's exit writes them (TRACE.leaks, beside the trace)\n", verdict,
                    argv[optind]);
        report_close(m, f, s);
        free(vfilter);
        return 1;
    }
    if (mt_report_top(stdout, s, &o) < 0) {
        rc = 1;
    } else if (verdict && !strcmp(verdict, "lost") && !o.json &&
               mt_selection_total(s).live_samples == 0) {
        /* a zero from no sample: its bound, as stats and check print it */
        double up = mt_unsampled_upper(m, 0.95);
        if (up > 0) {
            char b[40];
            mt_format_bytes(b, sizeof b, up);
            printf("no lost block sampled: the lost bytes are 0 B, at most %s (95%%)\n", b);
        }
    }
    if (rc || fflush(stdout) != 0) {
        perror("memtrace top: writing the report");
        rc = 1;
    }
    report_close(m, f, s);
    free(vfilter);
    return rc;
}
