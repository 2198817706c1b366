/*
 * cmd_pprof.c - 'memtrace pprof': export a gzipped pprof heap profile.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "report.h"

static void help(void)
{
    printf("usage: memtrace pprof [OPTIONS] -o OUT.pb.gz FILE...\n"
           "\n"
           "Write a gzipped pprof profile (profile.proto) as Go writes heap profiles:\n"
           "sample types alloc_objects/count, alloc_space/bytes, inuse_objects/count,\n"
           "inuse_space/bytes, period type space/bytes; one sample per distinct\n"
           "stack; functions, files, lines and inlined frames. Values are estimates\n"
           "extrapolated from the samples; inuse means live at --at (default: not\n"
           "collected by the end of the trace).\n"
           "\n"
           "FILE may itself be a pprof profile (re-exported: filtered, renamed,\n"
           "plumbing folded; docs/profiles-input.md).\n"
           "\n"
           "  -o, --output FILE  where to write the profile (required; - for stdout)\n"
           "  -a, --at TIME      time for inuse_*: 2.5s, peak, end (default end)\n"
           "  -f, --filter F     only allocations matching the filter (docs/filters.md)\n"
           "      --alloc        make alloc_space the default sample type\n"
           "  -l, --level N      gzip level 1-9 (default 6)\n"
           REPORT_SITE_HELP
           "      --by-process   several FILEs (app.ctf app.ctf.*, runs) are aggregated;\n"
           "                     this adds an outermost frame per process\n"
           "  -h, --help         this help\n"
           "\n"
           "Example: memtrace pprof -o heap.pb.gz app.ctf && go tool pprof -top heap.pb.gz\n");
}

int cmd_pprof(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"at", required_argument, 0, 'a'},
                                         {"filter", required_argument, 0, 'f'},
                                         {"alloc", no_argument, 0, 'A'},
                                         {"level", required_argument, 0, 'l'},
                                         REPORT_SITE_LONGOPTS,
        {"by-process", no_argument, 0, REPORT_OPT_BY_PROCESS}, {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *filter = NULL, *output = NULL;
    mt_timedelta at = MT_TIME_END;
    mt_pprof_options po = {6, 0, 0};
    int c;
    int by_process = 0;
    while ((c = getopt_long(argc, argv, "o:a:f:l:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'a':
            if (report_time("pprof", "--at", optarg, &at))
                return 2;
            break;
        case 'f': filter = optarg; break;
        case 'A': po.alloc_default = 1; break;
        case 'l':
            po.level = atoi(optarg);
            if (po.level < 1 || po.level > 9) {
                fprintf(stderr, "memtrace pprof: --level %s: use 1 to 9\n", optarg);
                return 2;
            }
            break;
        case REPORT_OPT_BY_PROCESS: by_process = 1; break;
        case 'h': help(); return 0;
        case REPORT_OPT_RAW:
        case REPORT_OPT_PLUMBING:
        case REPORT_OPT_FULL_NAMES: report_site_option("pprof", c, optarg); break;
        default: return report_usage("pprof");
        }
    }
    if (optind >= argc || !output) {
        fprintf(stderr, "memtrace pprof: expected -o OUT.pb.gz and a trace file (several: aggregated)\n");
        return report_usage("pprof");
    }
    mt_model *m;
    mt_filter *f;
    mt_selection *s;
    report_sites.used = 1;
    po.full_names = report_sites.full_names;
    report_stacks_only = 1;
    int rc = report_open_many("pprof", (const char *const *)argv + optind, (size_t)(argc - optind), by_process, filter, at, 0, &m, &f, &s);
    if (rc)
        return rc;
    char *err = NULL;
    int w = output[0] == '-' && !output[1] ? mt_write_pprof_fd(1, s, &po, &err)
                                           : mt_write_pprof(output, s, &po, &err);
    if (w < 0) {
        fprintf(stderr, "memtrace pprof: %s\n", err ? err : "cannot write the profile");
        rc = 1;
    }
    free(err);
    report_close(m, f, s);
    return rc;
}
