/*
 * cmd_lifetimes.c - 'memtrace lifetimes': allocation time and lifetime of
 * every sampled allocation, one line each, ready for gnuplot.
 */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "report.h"

static void help(void)
{
    printf("usage: memtrace lifetimes [OPTIONS] FILE\n"
           "\n"
           "One line per sampled allocation: its allocation time and its lifetime,\n"
           "both in seconds (\"%%f %%f\"). Blocks never collected count as collected\n"
           "at the end of the trace.\n"
           "\n"
           "  -f, --filter F     only allocations matching the filter (docs/filters.md)\n"
           "  -j, --json         a JSON array with size, samples and collected too\n"
           "  -h, --help         this help\n"
           "\n"
           "Example: memtrace lifetimes -f 'inside:Queue.add' app.ctf | gnuplot -p -e \"plot '-'\"\n");
}

int cmd_lifetimes(int argc, char **argv)
{
    static const struct option opts[] = {{"filter", required_argument, 0, 'f'},
                                         {"json", no_argument, 0, 'j'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *filter = NULL;
    int json = 0, c;
    while ((c = getopt_long(argc, argv, "f:jh", opts, NULL)) != -1) {
        switch (c) {
        case 'f': filter = optarg; break;
        case 'j': json = 1; break;
        case 'h': help(); return 0;
        default: return report_usage("lifetimes");
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "memtrace lifetimes: expected one trace file\n");
        return report_usage("lifetimes");
    }
    mt_model *m;
    mt_filter *f;
    mt_selection *s;
    int rc = report_open("lifetimes", argv[optind], filter, MT_TIME_END, 1, &m, &f, &s);
    if (rc)
        return rc;
    if (mt_report_lifetimes(stdout, s, json) < 0 || fflush(stdout) != 0) {
        perror("memtrace lifetimes: writing");
        rc = 1;
    }
    report_close(m, f, s);
    return rc;
}
