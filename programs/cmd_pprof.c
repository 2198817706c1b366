/*
 * cmd_pprof.c - 'memtrace pprof': export a gzipped pprof heap profile.
 */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "options.h"
#include "report.h"

static const char pprof_head[] =
    "usage: memtrace pprof [OPTIONS] -o OUT.pb.gz FILE...\n"
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
    "\n";
static const char pprof_tail[] =
    "\n"
    "Example: memtrace pprof -o heap.pb.gz app.ctf && go tool pprof -top heap.pb.gz\n";

int cmd_pprof(int argc, char **argv)
{
    const char *filter = NULL, *output = NULL;
    mt_timedelta at = MT_TIME_END;
    mt_pprof_options po = {6, 0, 0};
    int by_process = 0;
    const opt_spec opts[] = {
        OPT("output", 'o', OPT_STRING, &output, "FILE", "where to write the profile (required; - for stdout)"),
        OPT("at", 'a', OPT_TIME, &at, "TIME", "time for inuse_*: 2.5s, peak, end (default end)"),
        OPT("filter", 'f', OPT_FILTER, &filter, "F", "only allocations matching the filter (docs/filters.md)"),
        OPT("alloc", 0, OPT_FLAG, &po.alloc_default, NULL, "make alloc_space the default sample type"),
        OPT("level", 'l', OPT_INT, &po.level, "N", "gzip level 1-9 (default 6)", .lo = 1, .hi = 9),
        REPORT_SITE_OPTS,
        OPT("by-process", 0, OPT_FLAG, &by_process, NULL, REPORT_BY_PROCESS_HELP),
    };
    const opt_command cmd = {"pprof", pprof_head, pprof_tail, 21, opts, sizeof opts / sizeof opts[0]};
    int first, prc = opt_parse(&cmd, argc, argv, &first);
    if (prc >= 0)
        return prc;
    if (first >= argc || !output) {
        fprintf(stderr, "memtrace pprof: expected -o OUT.pb.gz and a trace file (several: aggregated)\n");
        return opt_usage("pprof");
    }
    mt_model *m;
    mt_filter *f;
    mt_selection *s;
    report_sites.used = 1;
    po.full_names = report_sites.full_names;
    report_stacks_only = 1;
    int rc = report_open_many("pprof", (const char *const *)argv + first, (size_t)(argc - first), by_process, filter, at, 0, &m, &f, &s);
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
