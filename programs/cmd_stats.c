/*
 * cmd_stats.c - 'memtrace stats': totals, estimates, peak live memory,
 * allocation rate and size/lifetime histograms per source.
 */
#include <stdio.h>

#include "commands.h"
#include "options.h"
#include "report.h"
#include "stream_report.h"

static const char stats_head[] =
    "usage: memtrace stats [OPTIONS] FILE...\n"
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
    "\n";
static const char stats_tail[] =
    "\n"
    "Example: memtrace stats --filter 'kind:mmap' app.ctf\n";

int cmd_stats(int argc, char **argv)
{
    const char *filter = NULL;
    mt_timedelta at = MT_TIME_END;
    int json = 0;
    int by_process = 0;
    const opt_spec opts[] = {
        OPT("filter", 'f', OPT_FILTER, &filter, "F", "only allocations matching the filter (docs/filters.md)"),
        OPT("at", 'a', OPT_TIME, &at, "TIME", "time at which live_* figures are taken (default end)"),
        OPT("json", 'j', OPT_FLAG, &json, NULL, "JSON for scripts"),
        OPT("by-process", 0, OPT_FLAG, &by_process, NULL, REPORT_BY_PROCESS_HELP),
    };
    const opt_command cmd = {"stats", stats_head, stats_tail, 21, opts, sizeof opts / sizeof opts[0]};
    int first, prc = opt_parse(&cmd, argc, argv, &first);
    if (prc >= 0)
        return prc;
    if (first >= argc) {
        fprintf(stderr, "memtrace stats: expected a trace file (several: aggregated)\n");
        return opt_usage("stats");
    }
    if (argc - first == 1 && mt_path_is_profile(argv[first]))
        return stats_profile(argv[first], filter, at, json);
    stream_input in = {(const char *const *)argv + first, (size_t)(argc - first), by_process};
    return stream_stats(&in, filter, at, json);
}
