/*
 * cmd_leaks.c - 'memtrace leaks': the allocation sites whose live memory
 * keeps growing (leak suspects), and with --plan the sampling interval a
 * run needs to find a leak of a given rate.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "memtrace/leaks.h"
#include "memtrace/present.h"
#include "options.h"
#include "report.h"

static const char leaks_head[] =
    "usage: memtrace leaks [OPTIONS] FILE...\n"
    "       memtrace leaks --plan RATE [--within TIME] [--sites N]\n"
    "\n"
    "Leak suspects: the allocation sites whose live memory keeps growing over\n"
    "the later half of the trace, each with its growth rate and that rate's\n"
    "error, the bytes it holds at the end, the share of its bytes whose blocks\n"
    "outlive the window, and a p-value corrected for the number of sites\n"
    "(Holm). Memory loaded once at start, caches that fill early and then stay\n"
    "flat, and churn are not suspects. Sites are named as by top.\n"
    "\n";
static const char leaks_tail[] =
    "\n"
    "docs/leaks.md explains the test and what it cannot see.\n"
    "Example: memtrace leaks service.ctf\n";

/* --plan: the interval that finds a leak of rate bytes per second. */
static int plan(double rate, const char *rate_text, mt_timedelta within, const char *within_text,
                size_t sites, double alpha)
{
    double window = (double)within / 2e6;
    double iv = mt_leak_plan_interval(rate, window, sites, alpha, 0.8);
    char b1[64], b3[64];
    mt_format_bytes(b1, sizeof b1, rate);
    printf("To find a leak of %s/s (%s) in a run of %s (its later half is tested)\n"
           "among %zu sites, 80%% of the time at alpha %g:\n", b1, rate_text, within_text, sites, alpha);
    if (iv < 1) {
        printf("  no sampling interval will do: run longer, or trace every allocation.\n");
        return 0;
    }
    mt_format_bytes(b3, sizeof b3, iv);
    printf("  sample every %s or less: memtrace run --interval %.0f ...\n", b3, floor(iv));
    printf("  (a pure leak: the site frees none of its blocks, each smaller than the interval)\n");
    return 0;
}

/* The suspects of the traces at paths (several: aggregated) on stdout:
 * the exit status, after a message on stderr when it is not 0. */
static int suspects(const char *const *paths, size_t n, int by_process, const mt_leak_options *lo,
                    const mt_leaks_report_options *ro)
{
    report_side side = {.paths = paths, .n = n, .by_process = by_process};
    mt_leak_fold *lf = mt_leak_fold_plan(side.paths, side.n, by_process, lo);
    side.hook = (report_hook){lf ? mt_leak_fold_alloc : NULL, lf ? mt_leak_fold_reset : NULL, lf, 0};
    int rc = report_open_sides("leaks", &side, 1, ro->filter_text, MT_TIME_END, 2);
    if (rc) {
        mt_leak_fold_free(lf);
        return rc;
    }
    mt_model *m = side.m;
    mt_filter *f = side.f;
    mt_selection *s = side.s;
    mt_leak_report *r = lf && side.fed ? mt_query_leaks_fold(s, lf, lo) : mt_query_leaks(s, lo);
    mt_leak_fold_free(lf);
    if (!r) {
        char b[64];
        mt_format_time(b, sizeof b, mt_model_end(m));
        if (lo->from != MT_TIME_NEVER && lo->from >= mt_model_end(m))
            fprintf(stderr, "memtrace leaks: --from is at or after the trace's end (%s)\n", b);
        else if (mt_model_end(m) <= 0)
            fprintf(stderr, "memtrace leaks: the trace spans no time: nothing can grow\n");
        else
            fprintf(stderr, "memtrace leaks: out of memory\n");
        report_close(m, f, s);
        return 1;
    }
    if (mt_report_leaks(stdout, s, r, ro) < 0 || fflush(stdout) != 0) {
        perror("memtrace leaks: writing the report");
        rc = 1;
    }
    mt_leak_report_free(r);
    report_close(m, f, s);
    return rc;
}

int cmd_leaks(int argc, char **argv)
{
    mt_leaks_report_options ro = {0};
    ro.limit = 20;
    mt_leak_options lo = {0.05, MT_TIME_NEVER};
    const char *plan_text = NULL;
    double plan_rate = 0;
    mt_timedelta within = 3600 * (mt_timedelta)1000000;
    const char *within_text = "1h";
    size_t sites = 100;
    int by_process = 0;
    const opt_spec opts[] = {
        OPT("all", 'a', OPT_FLAG, &ro.all, NULL, "every site with samples, not only suspects"),
        OPT("from", 0, OPT_TIME, &lo.from, "TIME",
            "start of the window tested (default: the middle of\n"
            "the trace), e.g. 30s, 5min", .given = &ro.from_given),
        OPT("alpha", 0, OPT_REAL, &lo.alpha, "A", "family-wise error rate (default 0.05)", .lo = 0,
            .hi = 1),
        OPT("filter", 'f', OPT_FILTER, &ro.filter_text, "F",
            "only allocations matching the filter (docs/filters.md)"),
        OPT("limit", 'n', OPT_COUNT, &ro.limit, "N", "rows shown (default 20, 0 = all)"),
        OPT("json", 'j', OPT_FLAG, &ro.json, NULL, "JSON for scripts"),
        REPORT_SITE_OPTS,
        OPT("by-process", 0, OPT_FLAG, &by_process, NULL, REPORT_BY_PROCESS_HELP),
        OPT("plan", 0, OPT_RATE, &plan_rate, "RATE",
            "no trace: the sampling interval needed to find a leak\n"
            "of RATE: a size per time unit (1MiB/h, 200k/min,\n"
            "50/s; sizes and times as docs/units.md)", .text = &plan_text),
        OPT("within", 0, OPT_DURATION, &within, "TIME",
            "... in a run of TIME (default 1h; the later half is\ntested)", .text = &within_text),
        OPT("sites", 0, OPT_COUNT, &sites, "N", "... among N sites (default 100)", .lo = 1),
    };
    const opt_command cmd = {"leaks", leaks_head, leaks_tail, 21, opts, sizeof opts / sizeof opts[0]};
    int first, prc = opt_parse(&cmd, argc, argv, &first);
    if (prc >= 0)
        return prc;
    if (lo.from == MT_TIME_END || lo.from == MT_TIME_PEAK) {
        fprintf(stderr, "memtrace leaks: --from: expected a time such as 30s or 5min, not peak or end\n");
        return 2;
    }
    if (plan_text) {
        if (first < argc) {
            fprintf(stderr, "memtrace leaks: --plan takes no trace file\n");
            return opt_usage("leaks");
        }
        return plan(plan_rate, plan_text, within, within_text, sites, lo.alpha);
    }
    if (first >= argc) {
        fprintf(stderr, "memtrace leaks: expected a trace file (several: aggregated)\n");
        return opt_usage("leaks");
    }
    report_sites.used = 1;
    ro.full_names = report_sites.full_names;
    return suspects((const char *const *)argv + first, (size_t)(argc - first), by_process, &lo,
                    &ro);
}
