/*
 * cmd_folded.c - 'memtrace folded': collapsed stacks for flamegraph.pl,
 * inferno and speedscope.
 */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "report.h"

static void help(void)
{
    printf("usage: memtrace folded [OPTIONS] FILE...\n"
           "\n"
           "Collapsed stacks, one line per distinct call path: function names from\n"
           "the outermost caller to the allocating function, separated by ';', then\n"
           "a space and the weight (an integer). Input for flamegraph.pl, inferno\n"
           "(inferno-flamegraph) and speedscope.\n"
           "\n"
           "FILE may be a pprof profile, gzipped or not (docs/profiles-input.md).\n"
           "\n"
           "  -w, --weight M     alloc (estimated bytes allocated, default), count,\n"
           "                     live (bytes live at --at), live_count, temporary\n"
           "                     (blocks freed within 1 ms), temp_bytes, samples\n"
           "  -a, --at TIME      time for live: 2.5s, peak, end (default end; implies\n"
           "                     --weight live unless --weight is given)\n"
           "  -f, --filter F     only allocations matching the filter (docs/filters.md)\n"
           REPORT_SITE_HELP
           "      --by-process   several FILEs (app.ctf app.ctf.*, runs) are aggregated;\n"
           "                     this adds an outermost frame per process\n"
           "  -h, --help         this help\n"
           "\n"
           "Stacks deeper than 1024 frames start with a frame named [truncated]. Past\n"
           "2,000,000 call-tree nodes, the cost of the paths that do not fit is on\n"
           "'...;caller;[truncated] W' lines, with a warning on stderr. Control\n"
           "characters in names are written \\xHH.\n"
           "\n"
           "Example: memtrace folded --at peak app.ctf | flamegraph.pl > peak.svg\n");
}

int cmd_folded(int argc, char **argv)
{
    static const struct option opts[] = {{"weight", required_argument, 0, 'w'},
                                         {"at", required_argument, 0, 'a'},
                                         {"filter", required_argument, 0, 'f'},
                                         REPORT_SITE_LONGOPTS,
        {"by-process", no_argument, 0, REPORT_OPT_BY_PROCESS}, {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *filter = NULL;
    mt_metric weight = MT_METRIC_ALLOC_BYTES;
    mt_timedelta at = MT_TIME_END;
    int wgiven = 0, agiven = 0, c;
    int by_process = 0;
    while ((c = getopt_long(argc, argv, "w:a:f:h", opts, NULL)) != -1) {
        switch (c) {
        case 'w':
            if (report_metric("folded", "--weight", optarg, &weight))
                return 2;
            wgiven = 1;
            break;
        case 'a':
            if (report_time("folded", "--at", optarg, &at))
                return 2;
            agiven = 1;
            break;
        case 'f': filter = optarg; break;
        case REPORT_OPT_BY_PROCESS: by_process = 1; break;
        case 'h': help(); return 0;
        case REPORT_OPT_RAW:
        case REPORT_OPT_PLUMBING:
        case REPORT_OPT_FULL_NAMES: report_site_option("folded", c, optarg); break;
        default: return report_usage("folded");
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "memtrace folded: expected a trace file (several: aggregated)\n");
        return report_usage("folded");
    }
    if (agiven && !wgiven)
        weight = MT_METRIC_LIVE_BYTES;
    mt_model *m;
    mt_filter *f;
    mt_selection *s;
    report_sites.used = 1;
    report_stacks_only = 1;
    int rc = report_open_many("folded", (const char *const *)argv + optind, (size_t)(argc - optind), by_process, filter, at, 0, &m, &f, &s);
    if (rc)
        return rc;
    if (report_profile_measure("folded", argv[optind], m, weight)) {
        report_close(m, f, s);
        return 1;
    }
    int truncated = 0;
    if (mt_report_folded_ex(stdout, s, weight, report_sites.full_names, &truncated) < 0 ||
        fflush(stdout) != 0) {
        perror("memtrace folded: writing");
        rc = 1;
    } else if (truncated) {
        fprintf(stderr,
                "memtrace folded: warning: the call tree has more than %d nodes; the cost of the "
                "stacks past that is in lines ending with '%s' (narrow the output with --filter, "
                "e.g. hide: or inside:)\n",
                MT_TREE_MAX_NODES, MT_TRUNCATED_NAME);
    }
    report_close(m, f, s);
    return rc;
}
