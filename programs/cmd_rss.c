/*
 * cmd_rss.c - 'memtrace rss': the resident-memory ledger of a trace at a
 * moment, rows that add up to RSS with their sources and errors
 * (docs/rss.md, lib/analyze/ledger.c, lib/present/ledger.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "options.h"
#include "report.h"
#include "trace_cli.h"

static const char rss_head[] =
    "usage: memtrace rss [OPTIONS] FILE\n"
    "\n"
    "Where the resident memory went: rows that add up to the process's RSS at\n"
    "a moment, each with its source and its 95% interval. The live heap and\n"
    "the program's own mappings come from the samples; what the allocator holds\n"
    "beyond them (in use, free but resident, metadata) from its own statistics;\n"
    "stacks, modules, file maps and shared memory from /proc/self/smaps;\n"
    "memtrace's own memory is shown so that it can be subtracted; the rest is\n"
    "the row 'unexplained'. Needs FILE.rss of version 2 beside the trace (what\n"
    "memtrace run writes); see docs/rss.md.\n"
    "\n";
static const char rss_tail[] =
    "\n"
    "Example: memtrace rss --at end app.ctf\n";

int cmd_rss(int argc, char **argv)
{
    mt_timedelta at = MT_TIME_PEAK;
    int json = 0;
    const opt_spec opts[] = {
        OPT("at", 'a', OPT_TIME, &at, "WHEN",
            "peak (the reading with the largest RSS, not the true\n"
            "peak: the report gives the high-water mark; default),\n"
            "end, or a time (2.5s: the last reading at or before it)"),
        OPT("json", 'j', OPT_FLAG, &json, NULL, "JSON for scripts"),
    };
    const opt_command cmd = {"rss", rss_head, rss_tail, 21, opts, sizeof opts / sizeof opts[0]};
    int first, prc = opt_parse(&cmd, argc, argv, &first);
    if (prc >= 0)
        return prc;
    if (first != argc - 1) {
        fprintf(stderr, "memtrace rss: expected one trace file\n");
        return opt_usage("rss");
    }
    const char *path = argv[first];
    if (mt_path_is_profile(path))
        return report_not_profile("rss", path);
    char *err = NULL;
    /* the whole model: the ledger counts the samples live at a reading's time */
    mt_read_request rq = { .paths = &path, .n = 1, .fold = 0, .live_at = MT_TIME_END,
                           .on_warning = trace_cli_warning, .warning_ctx = "rss" };
    mt_model *m = mt_read(&rq, &err);
    if (!m) {
        fprintf(stderr, "memtrace rss: %s\n", err ? err : path);
        free(err);
        return 1;
    }
    mt_rss *rss = mt_rss_load(path, m, NULL, NULL);
    const mt_rss_reading *r = mt_rss_reading_at(rss, at);
    int rc = 0;
    if (!r) {
        fprintf(stderr, "memtrace rss: %s: no ledger readings beside the trace (%s.rss missing or "
                "of version 1: record with this memtrace's run)\n", path, path);
        rc = 1;
    } else {
        uint64_t heap = 0, maps = 0;
        mt_ledger_live_samples(m, r->time, &heap, &maps);
        const mt_scale *sc = mt_model_scale(m);
        mt_ledger L;
        mt_ledger_make(r, heap, maps, sc->bytes_per_sample, sc->sample_rate, &L);
        char when[48];
        if (at == MT_TIME_PEAK) {
            /* the largest reading, which is not the true peak */
            L.readings = rss->nl;
            L.true_peak_rss = rss->peak_rss > 0 ? (double)rss->peak_rss : -1;
            snprintf(when, sizeof when, "largest reading");
        }
        else if (at == MT_TIME_END)
            snprintf(when, sizeof when, "end");
        else
            snprintf(when, sizeof when, "last reading at or before --at");
        if (mt_report_ledger(stdout, &L, when, json) < 0 || (json && fputc('\n', stdout) == EOF) ||
            fflush(stdout) != 0) {
            perror("memtrace rss: writing the report");
            rc = 1;
        }
    }
    mt_rss_free(rss);
    mt_model_free(m);
    return rc;
}
