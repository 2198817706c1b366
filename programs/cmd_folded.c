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
           "  -w, --weight M     alloc (estimated bytes allocated, default), count,\n"
           "                     live (bytes live at --at), live_count, samples\n"
           "  -a, --at TIME      time for live: 2.5s, peak, end (default end; implies\n"
           "                     --weight live unless --weight is given)\n"
           "  -f, --filter F     only allocations matching the filter (docs/filters.md)\n"
           "      --by-process   several FILEs (app.ctf app.ctf.*, runs) are aggregated;\n"
           "                     this adds an outermost frame per process\n"
           "  -h, --help         this help\n"
           "\n"
           "Example: memtrace folded --at peak app.ctf | flamegraph.pl > peak.svg\n");
}

int cmd_folded(int argc, char **argv)
{
    static const struct option opts[] = {{"weight", required_argument, 0, 'w'},
                                         {"at", required_argument, 0, 'a'},
                                         {"filter", required_argument, 0, 'f'},
                                         {"by-process", no_argument, 0, REPORT_OPT_BY_PROCESS},
        {"help", no_argument, 0, 'h'},
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
    int rc = report_open_many("folded", (const char *const *)argv + optind, (size_t)(argc - optind), by_process, filter, at, 0, &m, &f, &s);
    if (rc)
        return rc;
    if (mt_report_folded(stdout, s, weight) < 0 || fflush(stdout) != 0) {
        perror("memtrace folded: writing");
        rc = 1;
    }
    report_close(m, f, s);
    return rc;
}
