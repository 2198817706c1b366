/*
 * cmd_lifetimes.c - 'memtrace lifetimes': allocation time and lifetime of
 * every sampled allocation, one line each, ready for gnuplot.
 */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "report.h"
#include "stream_report.h"

static void help(void)
{
    printf("usage: memtrace lifetimes [OPTIONS] FILE...\n"
           "\n"
           "One line per sampled allocation: its allocation time and its lifetime,\n"
           "both in seconds (\"%%f %%f\"). Blocks never collected count as collected\n"
           "at the end of the trace. Lines come in the order blocks end (freed ones\n"
           "as freed, then the never-collected ones): each is printed when its block\n"
           "ends, so memory follows the live blocks; sort for allocation order.\n"
           "\n"
           "  -f, --filter F     only allocations matching the filter (docs/filters.md)\n"
           "  -j, --json         a JSON array with size, samples and collected too\n"
           "      --by-process   several FILEs (app.ctf app.ctf.*, runs) are aggregated;\n"
           "                     this adds an outermost frame per process\n"
           "  -h, --help         this help\n"
           "\n"
           "Example: memtrace lifetimes -f 'inside:Queue.add' app.ctf | gnuplot -p -e \"plot '-'\"\n");
}

int cmd_lifetimes(int argc, char **argv)
{
    static const struct option opts[] = {{"filter", required_argument, 0, 'f'},
                                         {"json", no_argument, 0, 'j'},
                                         {"by-process", no_argument, 0, REPORT_OPT_BY_PROCESS},
        {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *filter = NULL;
    int json = 0, c;
    int by_process = 0;
    while ((c = getopt_long(argc, argv, "f:jh", opts, NULL)) != -1) {
        switch (c) {
        case 'f': filter = optarg; break;
        case 'j': json = 1; break;
        case REPORT_OPT_BY_PROCESS: by_process = 1; break;
        case 'h': help(); return 0;
        default: return report_usage("lifetimes");
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "memtrace lifetimes: expected a trace file (several: aggregated)\n");
        return report_usage("lifetimes");
    }
    stream_input in = {(const char *const *)argv + optind, (size_t)(argc - optind), by_process};
    return stream_lifetimes(&in, filter, json);
}
