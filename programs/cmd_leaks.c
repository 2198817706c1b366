/*
 * cmd_leaks.c - 'memtrace leaks': the allocation sites whose live memory
 * keeps growing (leak suspects), and with --plan the sampling interval a
 * run needs to find a leak of a given rate.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "memtrace/leaks.h"
#include "memtrace/present.h"
#include "report.h"
#include "units.h"

#define OPT_FROM 0x300
#define OPT_ALPHA 0x301
#define OPT_PLAN 0x302
#define OPT_WITHIN 0x303
#define OPT_SITES 0x304

static void help(void)
{
    printf("usage: memtrace leaks [OPTIONS] FILE...\n"
           "       memtrace leaks --plan RATE [--within TIME] [--sites N]\n"
           "\n"
           "Leak suspects: the allocation sites whose live memory keeps growing over\n"
           "the later half of the trace, each with its growth rate and that rate's\n"
           "error, the bytes it holds at the end, the share of its bytes whose blocks\n"
           "outlive the window, and a p-value corrected for the number of sites\n"
           "(Holm). Memory loaded once at start, caches that fill early and then stay\n"
           "flat, and churn are not suspects. Sites are named as by top.\n"
           "\n"
           "  -a, --all          every site with samples, not only suspects\n"
           "      --from TIME    start of the window tested (default: the middle of\n"
           "                     the trace), e.g. 30s, 5min\n"
           "      --alpha A      family-wise error rate (default 0.05)\n"
           "  -f, --filter F     only allocations matching the filter (docs/filters.md)\n"
           "  -n, --limit N      rows shown (default 20, 0 = all)\n"
           "  -j, --json         JSON for scripts\n"
           REPORT_SITE_HELP
           "      --by-process   several FILEs (app.ctf app.ctf.*, runs) are aggregated;\n"
           "                     this adds an outermost frame per process\n"
           "      --plan RATE    no trace: the sampling interval needed to find a leak\n"
           "                     of RATE: a size per time unit (1MiB/h, 200k/min,\n"
           "                     50/s; sizes and times as docs/units.md)\n"
           "      --within TIME  ... in a run of TIME (default 1h; the later half is\n"
           "                     tested)\n"
           "      --sites N      ... among N sites (default 100)\n"
           "  -h, --help         this help\n"
           "\n"
           "docs/leaks.md explains the test and what it cannot see.\n"
           "Example: memtrace leaks service.ctf\n");
}

/* "1MiB/h", "200k/min", "50/s": a size (docs/units.md) per a duration
 * unit; bytes per second, or -1 when malformed. */
static double parse_rate(const char *text)
{
    const char *slash = strchr(text, '/');
    uint64_t bytes, per_us;
    if (!slash || mt_units_parse_n(text, (size_t)(slash - text), mt_size_units, 1, &bytes, NULL) ||
        bytes == 0)
        return -1;
    /* the unit alone, as one of it: "h" is "1h" */
    char one[16];
    if (strlen(slash + 1) + 2 > sizeof one)
        return -1;
    snprintf(one, sizeof one, "1%s", slash + 1);
    if (!slash[1] || mt_units_duration(one, 0, &per_us) || per_us == 0)
        return -1;
    return (double)bytes * 1e6 / (double)per_us;
}

static int plan(const char *rate_text, mt_timedelta within, const char *within_text, size_t sites,
                double alpha)
{
    double rate = parse_rate(rate_text);
    if (rate <= 0) {
        fprintf(stderr, "memtrace leaks: --plan %s: expected a rate such as 1MiB/h, 200KiB/min, 50B/s\n",
                rate_text);
        return 2;
    }
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

int cmd_leaks(int argc, char **argv)
{
    static const struct option opts[] = {
        {"all", no_argument, 0, 'a'},          {"from", required_argument, 0, OPT_FROM},
        {"alpha", required_argument, 0, OPT_ALPHA}, {"filter", required_argument, 0, 'f'},
        {"limit", required_argument, 0, 'n'},  {"json", no_argument, 0, 'j'},
        {"plan", required_argument, 0, OPT_PLAN}, {"within", required_argument, 0, OPT_WITHIN},
        {"sites", required_argument, 0, OPT_SITES},
        REPORT_SITE_LONGOPTS,
        {"by-process", no_argument, 0, REPORT_OPT_BY_PROCESS},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    mt_leaks_report_options ro = {0};
    ro.limit = 20;
    mt_leak_options lo = {0.05, MT_TIME_NEVER};
    const char *plan_rate = NULL;
    mt_timedelta within = 3600 * (mt_timedelta)1000000;
    const char *within_text = "1h";
    size_t sites = 100;
    int by_process = 0, c;
    char *end;
    while ((c = getopt_long(argc, argv, "af:n:jh", opts, NULL)) != -1) {
        switch (c) {
        case 'a': ro.all = 1; break;
        case OPT_FROM:
            if (report_time("leaks", "--from", optarg, &lo.from))
                return 2;
            if (lo.from == MT_TIME_END || lo.from == MT_TIME_PEAK) {
                fprintf(stderr, "memtrace leaks: --from %s: expected a time such as 30s or 5min\n", optarg);
                return 2;
            }
            ro.from_given = 1;
            break;
        case OPT_ALPHA:
            lo.alpha = strtod(optarg, &end);
            if (*end || !(lo.alpha > 0 && lo.alpha < 1)) {
                fprintf(stderr, "memtrace leaks: --alpha %s: expected a number between 0 and 1\n", optarg);
                return 2;
            }
            break;
        case 'f': ro.filter_text = optarg; break;
        case 'n':
        case OPT_SITES: {
            unsigned long v = strtoul(optarg, &end, 10);
            if (*end || !*optarg || (c == OPT_SITES && v == 0)) {
                fprintf(stderr, "memtrace leaks: %s %s: not a %snumber\n", c == 'n' ? "--limit" : "--sites",
                        optarg, c == 'n' ? "" : "positive ");
                return 2;
            }
            if (c == 'n')
                ro.limit = v;
            else
                sites = v;
            break;
        }
        case 'j': ro.json = 1; break;
        case OPT_PLAN: plan_rate = optarg; break;
        case OPT_WITHIN:
            if (report_time("leaks", "--within", optarg, &within))
                return 2;
            within_text = optarg;
            if (within <= 0 || within >= MT_TIME_PEAK) {
                fprintf(stderr, "memtrace leaks: --within %s: expected a duration such as 1h\n", optarg);
                return 2;
            }
            break;
        case REPORT_OPT_BY_PROCESS: by_process = 1; break;
        case 'h': help(); return 0;
        case REPORT_OPT_RAW:
        case REPORT_OPT_PLUMBING:
        case REPORT_OPT_FULL_NAMES: report_site_option("leaks", c, optarg); break;
        default: return report_usage("leaks");
        }
    }
    if (plan_rate) {
        if (optind < argc) {
            fprintf(stderr, "memtrace leaks: --plan takes no trace file\n");
            return report_usage("leaks");
        }
        return plan(plan_rate, within, within_text, sites, lo.alpha);
    }
    if (optind >= argc) {
        fprintf(stderr, "memtrace leaks: expected a trace file (several: aggregated)\n");
        return report_usage("leaks");
    }
    mt_model *m;
    mt_filter *f;
    mt_selection *s;
    report_sites.used = 1;
    ro.full_names = report_sites.full_names;
    int rc = report_open_many("leaks", (const char *const *)argv + optind, (size_t)(argc - optind),
                              by_process, ro.filter_text, MT_TIME_END, 2, &m, &f, &s);
    if (rc)
        return rc;
    mt_leak_report *r = mt_query_leaks(s, &lo);
    if (!r) {
        char b[64];
        mt_format_time(b, sizeof b, mt_model_end(m));
        if (lo.from != MT_TIME_NEVER && lo.from >= mt_model_end(m))
            fprintf(stderr, "memtrace leaks: --from is at or after the trace's end (%s)\n", b);
        else if (mt_model_end(m) <= 0)
            fprintf(stderr, "memtrace leaks: the trace spans no time: nothing can grow\n");
        else
            fprintf(stderr, "memtrace leaks: out of memory\n");
        report_close(m, f, s);
        return 1;
    }
    if (mt_report_leaks(stdout, s, r, &ro) < 0 || fflush(stdout) != 0) {
        perror("memtrace leaks: writing the report");
        rc = 1;
    }
    mt_leak_report_free(r);
    report_close(m, f, s);
    return rc;
}
