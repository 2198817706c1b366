/*
 * cmd_folded.c - 'memtrace folded': collapsed stacks for flamegraph.pl,
 * inferno and speedscope.
 */
#include <stdio.h>

#include "commands.h"
#include "options.h"
#include "report.h"

static const char folded_head[] =
    "usage: memtrace folded [OPTIONS] FILE...\n"
    "\n"
    "Collapsed stacks, one line per distinct call path: function names from\n"
    "the outermost caller to the allocating function, separated by ';', then\n"
    "a space and the weight (an integer). Input for flamegraph.pl, inferno\n"
    "(inferno-flamegraph) and speedscope.\n"
    "\n"
    "FILE may be a pprof profile, gzipped or not (docs/profiles-input.md).\n"
    "\n";
static const char folded_tail[] =
    "\n"
    "Stacks deeper than 1024 frames start with a frame named [truncated]. Past\n"
    "2,000,000 call-tree nodes, the cost of the paths that do not fit is on\n"
    "'...;caller;[truncated] W' lines, with a warning on stderr. Control\n"
    "characters in names are written \\xHH.\n"
    "\n"
    "Example: memtrace folded --at peak app.ctf | flamegraph.pl > peak.svg\n";

int cmd_folded(int argc, char **argv)
{
    const char *filter = NULL;
    mt_metric weight = MT_METRIC_ALLOC_BYTES;
    mt_timedelta at = MT_TIME_END;
    int wgiven = 0, agiven = 0;
    int by_process = 0;
    const opt_spec opts[] = {
        OPT("weight", 'w', OPT_MEASURE, &weight, "M",
            "alloc (estimated bytes allocated, default), count,\n"
            "live (bytes live at --at), live_count, temporary\n"
            "(blocks freed within 1 ms), temp_bytes, samples", .given = &wgiven),
        OPT("at", 'a', OPT_TIME, &at, "TIME",
            "time for live: 2.5s, peak, end (default end; implies\n"
            "--weight live unless --weight is given)", .given = &agiven),
        OPT("filter", 'f', OPT_FILTER, &filter, "F", "only allocations matching the filter (docs/filters.md)"),
        REPORT_SITE_OPTS,
        OPT("by-process", 0, OPT_FLAG, &by_process, NULL, REPORT_BY_PROCESS_HELP),
    };
    const opt_command cmd = {"folded", folded_head, folded_tail, 21, opts, sizeof opts / sizeof opts[0]};
    int first, prc = opt_parse(&cmd, argc, argv, &first);
    if (prc >= 0)
        return prc;
    if (first >= argc) {
        fprintf(stderr, "memtrace folded: expected a trace file (several: aggregated)\n");
        return opt_usage("folded");
    }
    if (agiven && !wgiven)
        weight = MT_METRIC_LIVE_BYTES;
    mt_model *m;
    mt_filter *f;
    mt_selection *s;
    report_sites.used = 1;
    report_stacks_only = 1;
    int rc = report_open_many("folded", (const char *const *)argv + first, (size_t)(argc - first), by_process, filter, at, 0, &m, &f, &s);
    if (rc)
        return rc;
    if (report_profile_measure("folded", argv[first], m, weight)) {
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
