/*
 * cmd_stats.c - 'memtrace stats': totals, estimates, peak live memory,
 * allocation rate and size/lifetime histograms per source.
 */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "report.h"
#include "stream_report.h"

static void help(void)
{
    printf("usage: memtrace stats [OPTIONS] FILE...\n"
           "\n"
           "Totals and estimates of a trace: events, bytes and blocks allocated per\n"
           "kind (malloc and mmap in C traces; minor, major, external in OCaml ones),\n"
           "allocation rate, peak live memory and when, live memory at the end, peak\n"
           "resident memory (RSS, from FILE.rss beside the trace) and its gap to the\n"
           "heap, the resident-memory ledger (rows that add up to RSS: memtrace rss)\n"
           "at --at when no filter is given, lifetimes, and histograms of block sizes and lifetimes\n"
           "(power-of-two buckets) per kind. One trace file is read as it comes\n"
           "(memory for the live blocks and the stacks, not the events).\n"
           "\n"
           "FILE may be a pprof profile: stats then gives its totals, allocated and\n"
           "in use, with their error (docs/profiles-input.md).\n"
           "\n"
           "  -f, --filter F     only allocations matching the filter (docs/filters.md)\n"
           "  -a, --at TIME      time at which live_* figures are taken (default end)\n"
           "  -j, --json         JSON for scripts\n"
           "      --by-process   several FILEs (app.ctf app.ctf.*, runs) are aggregated;\n"
           "                     this adds an outermost frame per process\n"
           "  -h, --help         this help\n"
           "\n"
           "Example: memtrace stats --filter 'kind:mmap' app.ctf\n");
}

int cmd_stats(int argc, char **argv)
{
    static const struct option opts[] = {{"filter", required_argument, 0, 'f'},
                                         {"at", required_argument, 0, 'a'},
                                         {"json", no_argument, 0, 'j'},
                                         {"by-process", no_argument, 0, REPORT_OPT_BY_PROCESS},
        {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *filter = NULL;
    mt_timedelta at = MT_TIME_END;
    int json = 0, c;
    int by_process = 0;
    while ((c = getopt_long(argc, argv, "f:a:jh", opts, NULL)) != -1) {
        switch (c) {
        case 'f': filter = optarg; break;
        case 'a':
            if (report_time("stats", "--at", optarg, &at))
                return 2;
            break;
        case 'j': json = 1; break;
        case REPORT_OPT_BY_PROCESS: by_process = 1; break;
        case 'h': help(); return 0;
        default: return report_usage("stats");
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "memtrace stats: expected a trace file (several: aggregated)\n");
        return report_usage("stats");
    }
    if (argc - optind == 1 && mt_path_is_profile(argv[optind]))
        return stats_profile(argv[optind], filter, at, json);
    stream_input in = {(const char *const *)argv + optind, (size_t)(argc - optind), by_process};
    return stream_stats(&in, filter, at, json);
}
