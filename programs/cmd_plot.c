/*
 * cmd_plot.c - 'memtrace plot': SVG pictures of live memory over time,
 * block sizes and lifetimes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safefile.h"
#include "commands.h"
#include "options.h"
#include "report.h"
#include "stream_report.h"

static const char plot_head[] =
    "usage: memtrace plot [OPTIONS] -o OUT.svg FILE...\n"
    "\n"
    "Draw an SVG picture:\n"
    "  memory     live memory over time, all allocations and (with --filter)\n"
    "             the selected ones, and the process's resident memory (RSS)\n"
    "             when FILE.rss is beside the trace, with the ledger's rows\n"
    "             beyond the heap stacked beneath (memtrace rss) (default)\n"
    "  sizes      estimated bytes allocated by block size, per kind (malloc, mmap)\n"
    "  lifetimes  allocation time against lifetime of every sampled block\n"
    "\n";
static const char plot_tail[] =
    "\n"
    "Example: memtrace plot -o mem.svg --filter 'collect:never' app.ctf\n";

int cmd_plot(int argc, char **argv)
{
    static const char *const kinds[] = {"memory", "sizes", "lifetimes", NULL};
    const char *filter = NULL, *output = NULL;
    mt_plot_options po = {MT_PLOT_MEMORY, 0, 0, NULL, NULL};
    int kind = MT_PLOT_MEMORY;
    int by_process = 0;
    const opt_spec opts[] = {
        OPT("output", 'o', OPT_STRING, &output, "FILE", "where to write the SVG (required; - for stdout)"),
        OPT("kind", 'k', OPT_CHOICE, &kind, "KIND", "memory, sizes or lifetimes", .choices = kinds),
        OPT("filter", 'f', OPT_FILTER, &filter, "F", "only allocations matching the filter (docs/filters.md)"),
        OPT("width", 0, OPT_INT, &po.width, "N", "picture width in pixels (default 900)", .lo = 200, .hi = 20000),
        OPT("height", 0, OPT_INT, &po.height, "N", "picture height in pixels (default 420)", .lo = 200, .hi = 20000),
        OPT("title", 0, OPT_STRING, &po.title, "TEXT", "title (default: the executable's name)"),
        OPT("by-process", 0, OPT_FLAG, &by_process, NULL, REPORT_BY_PROCESS_HELP),
    };
    const opt_command cmd = {"plot", plot_head, plot_tail, 21, opts, sizeof opts / sizeof opts[0]};
    int first, prc = opt_parse(&cmd, argc, argv, &first);
    if (prc >= 0)
        return prc;
    po.kind = (mt_plot_kind)kind;
    if (first >= argc || !output) {
        fprintf(stderr, "memtrace plot: expected -o OUT.svg and a trace file (several: aggregated)\n");
        return opt_usage("plot");
    }
    stream_input in = {(const char *const *)argv + first, (size_t)(argc - first), by_process};
    return stream_plot(&in, filter, &po, output);
}
