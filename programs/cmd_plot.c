/*
 * cmd_plot.c - 'memtrace plot': SVG pictures of live memory over time,
 * block sizes and lifetimes.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safefile.h"
#include "commands.h"
#include "report.h"
#include "stream_report.h"

static void help(void)
{
    printf("usage: memtrace plot [OPTIONS] -o OUT.svg FILE...\n"
           "\n"
           "Draw an SVG picture:\n"
           "  memory     live memory over time, all allocations and (with --filter)\n"
           "             the selected ones, and the process's resident memory (RSS)\n"
           "             when FILE.rss is beside the trace, with the ledger's rows\n"
           "             beyond the heap stacked beneath (memtrace rss) (default)\n"
           "  sizes      estimated bytes allocated by block size, per kind (malloc, mmap)\n"
           "  lifetimes  allocation time against lifetime of every sampled block\n"
           "\n"
           "  -o, --output FILE  where to write the SVG (required; - for stdout)\n"
           "  -k, --kind KIND    memory, sizes or lifetimes\n"
           "  -f, --filter F     only allocations matching the filter (docs/filters.md)\n"
           "      --width N      picture width in pixels (default 900)\n"
           "      --height N     picture height in pixels (default 420)\n"
           "      --title TEXT   title (default: the executable's name)\n"
           "      --by-process   several FILEs (app.ctf app.ctf.*, runs) are aggregated;\n"
           "                     this adds an outermost frame per process\n"
           "  -h, --help         this help\n"
           "\n"
           "Example: memtrace plot -o mem.svg --filter 'collect:never' app.ctf\n");
}

int cmd_plot(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"kind", required_argument, 0, 'k'},
                                         {"filter", required_argument, 0, 'f'},
                                         {"width", required_argument, 0, 'W'},
                                         {"height", required_argument, 0, 'H'},
                                         {"title", required_argument, 0, 'T'},
                                         {"by-process", no_argument, 0, REPORT_OPT_BY_PROCESS},
        {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *filter = NULL, *output = NULL;
    mt_plot_options po = {MT_PLOT_MEMORY, 0, 0, NULL, NULL};
    int c;
    int by_process = 0;
    while ((c = getopt_long(argc, argv, "o:k:f:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'k':
            if (!strcmp(optarg, "memory")) po.kind = MT_PLOT_MEMORY;
            else if (!strcmp(optarg, "sizes")) po.kind = MT_PLOT_SIZES;
            else if (!strcmp(optarg, "lifetimes")) po.kind = MT_PLOT_LIFETIMES;
            else {
                fprintf(stderr, "memtrace plot: --kind %s: use memory, sizes or lifetimes\n", optarg);
                return 2;
            }
            break;
        case 'f': filter = optarg; break;
        case 'W':
        case 'H': {
            int v = atoi(optarg);
            if (v < 200 || v > 20000) {
                fprintf(stderr, "memtrace plot: %s %s: use 200 to 20000 pixels\n",
                        c == 'W' ? "--width" : "--height", optarg);
                return 2;
            }
            if (c == 'W') po.width = v; else po.height = v;
            break;
        }
        case 'T': po.title = optarg; break;
        case REPORT_OPT_BY_PROCESS: by_process = 1; break;
        case 'h': help(); return 0;
        default: return report_usage("plot");
        }
    }
    if (optind >= argc || !output) {
        fprintf(stderr, "memtrace plot: expected -o OUT.svg and a trace file (several: aggregated)\n");
        return report_usage("plot");
    }
    stream_input in = {(const char *const *)argv + optind, (size_t)(argc - optind), by_process};
    return stream_plot(&in, filter, &po, output);
}
