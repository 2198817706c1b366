/*
 * cmd_lifetimes.c - 'memtrace lifetimes': allocation time and lifetime of
 * every sampled allocation, one line each, ready for gnuplot.
 */
#include <stdio.h>

#include "commands.h"
#include "options.h"
#include "report.h"
#include "stream_report.h"

static const char lifetimes_head[] =
    "usage: memtrace lifetimes [OPTIONS] FILE...\n"
    "\n"
    "One line per sampled allocation: its allocation time and its lifetime,\n"
    "both in seconds (\"%f %f\"). Blocks never collected count as collected\n"
    "at the end of the trace. Lines come in the order blocks end (freed ones\n"
    "as freed, then the never-collected ones): each is printed when its block\n"
    "ends, so memory follows the live blocks; sort for allocation order.\n"
    "\n";
static const char lifetimes_tail[] =
    "\n"
    "Example: memtrace lifetimes -f 'inside:Queue.add' app.ctf | gnuplot -p -e \"plot '-'\"\n";

int cmd_lifetimes(int argc, char **argv)
{
    const char *filter = NULL;
    int json = 0;
    int by_process = 0;
    const opt_spec opts[] = {
        OPT("filter", 'f', OPT_FILTER, &filter, "F", "only allocations matching the filter (docs/filters.md)"),
        OPT("json", 'j', OPT_FLAG, &json, NULL, "a JSON array with size, samples and collected too"),
        OPT("by-process", 0, OPT_FLAG, &by_process, NULL, REPORT_BY_PROCESS_HELP),
    };
    const opt_command cmd = {"lifetimes", lifetimes_head, lifetimes_tail, 21, opts, sizeof opts / sizeof opts[0]};
    int first, prc = opt_parse(&cmd, argc, argv, &first);
    if (prc >= 0)
        return prc;
    if (first >= argc) {
        fprintf(stderr, "memtrace lifetimes: expected a trace file (several: aggregated)\n");
        return opt_usage("lifetimes");
    }
    stream_input in = {(const char *const *)argv + first, (size_t)(argc - first), by_process};
    return stream_lifetimes(&in, filter, json);
}
