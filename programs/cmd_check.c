/*
 * cmd_check.c - 'memtrace check': memory budgets for CI. Budgets on one
 * trace (peak, live at the end, allocated) and against a base trace (an
 * increase in percent), each decided by a one-sided exact test so that a
 * check fails only when the excess is larger than the sampling noise.
 * Output for CI logs (and GitHub Actions annotations), JUnit XML.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "safefile.h"
#include "commands.h"
#include "units.h"
#include "memtrace/compare.h"
#include "memtrace/present.h"
#include "report.h"

static void help(void)
{
    printf("usage: memtrace check [OPTIONS] TRACE...\n"
           "       memtrace check [OPTIONS] --base BASE [--base BASE...] TRACE...\n"
           "\n"
           "Check memory budgets, for CI. A budget fails only when the estimate is\n"
           "above it by more than the sampling noise (one-sided exact test at --alpha,\n"
           "Holm-corrected over the budgets); the report says how sure.\n"
           "TRACE may be a pprof profile (--max-live-end, --max-alloc, --max-increase\n"
           "without --at; docs/profiles-input.md).\n"
           "\n"
           "  --max-peak SIZE      peak live bytes at most SIZE (e.g. 200MiB)\n"
           "  --max-live-end SIZE  bytes live at the end (leaks) at most SIZE\n"
           "  --max-alloc SIZE     bytes allocated at most SIZE\n"
           "  --max-lost SIZE      bytes the leak scan found lost at exit at most SIZE\n"
           "                       (a trace recorded with 'memtrace run --leaks')\n"
           "  --max-unexplained SIZE|PCT  at the peak of RSS, the ledger's unexplained\n"
           "                       row (memtrace rss) at most SIZE or PCT of RSS (5%%)\n"
           "  --max-increase PCT   against --base: the measure (--by, --at; default the\n"
           "                       peak live bytes) grows by at most PCT (e.g. 10%%)\n"
           "  --base BASE          the trace to compare with (repeat for several)\n"
           "  -b, --by MEASURE     for --max-increase: alloc, count, live, live_count\n"
           "  -a, --at TIME        for --max-increase with live: 2s, peak, end\n"
           "  -f, --filter F       budgets apply to allocations matching the filter\n"
           "  -s, --site NAME      budgets apply to allocations whose site (innermost\n"
           "                       function) contains NAME\n"
           "      --alpha A        false-failure rate of the whole check (default 0.05)\n"
           "      --junit FILE     also write the results as JUnit XML\n"
           "      --name NAME      name of the check in the output (default: the trace)\n"
           REPORT_SITE_HELP
           "  -h, --help           this help\n"
           "\n"
           "Several traces (app.ctf app.ctf.*, runs) are checked as one.\n"
           "Sizes: bytes, or with a unit k, M, G, T (1024-based; also KiB, kB, ...;\n"
           "either case; docs/units.md).\n"
           "Memory follows the blocks live at once and the distinct stacks (a peak\n"
           "budget with --filter or --site keeps every allocation).\n"
           "Exit status: 0 every budget holds, 1 one is exceeded, 2 trouble.\n"
           "Example: memtrace check --max-peak 200MiB --max-live-end 1MiB app.ctf\n");
}

enum { B_PEAK, B_LIVE_END, B_ALLOC, B_INCREASE, B_LOST, B_UNEXPLAINED };

typedef struct budget {
    int kind;
    const char *limit_text;
    double limit;            /* bytes, or the allowed ratio new/base */
    char what[400];          /* "peak live bytes", ...: stable, names the JUnit test */
    char when[96];           /* " (at 1.2s)": where the peak was found, or "" */
    mt_estimate est, base;
    mt_peak peak;            /* B_PEAK: the peak's estimate (est.value is its bytes) */
    double unsampled_upper;  /* B_LOST with no lost block sampled: its 95% bound */
    double pct;              /* B_UNEXPLAINED given as a share of RSS (0: a size) */
    double lo, hi, rss;      /* B_UNEXPLAINED: its 95% interval, the RSS then */
    double p, p_adj;
    int fail;
    char line[1024];         /* the verdict, one line */
} budget;

static int write_junit(const char *path, const char *name, const budget *b, size_t n,
                       size_t failed, const char **why)
{
    mt_outfile of;
    FILE *out = mt_outfile_fopen(&of, path, why);
    if (!out)
        return -1;
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(out, "<testsuites tests=\"%zu\" failures=\"%zu\">\n", n, failed);
    fputs("  <testsuite name=\"memtrace check: ", out);
    mt_xml_put(out, name);
    fprintf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n", n, failed);
    for (size_t i = 0; i < n; i++) {
        fputs("    <testcase classname=\"memtrace.check\" name=\"", out);
        mt_xml_put(out, b[i].what);
        fputs(" &lt;= ", out);
        mt_xml_put(out, b[i].limit_text);
        fputs("\" time=\"0\">\n", out);
        if (b[i].fail) {
            fputs("      <failure type=\"budget\" message=\"", out);
            mt_xml_put(out, b[i].line);
            fputs("\">", out);
            mt_xml_put(out, b[i].line);
            fputs("</failure>\n", out);
        } else {
            fputs("      <system-out>", out);
            mt_xml_put(out, b[i].line);
            fputs("</system-out>\n", out);
        }
        fputs("    </testcase>\n", out);
    }
    fputs("  </testsuite>\n</testsuites>\n", out);
    return mt_outfile_fclose(&of, out, 0, why);
}

static void fmt_sure(char *buf, size_t cap, double p)
{
    double c = 100 * (1 - p);
    if (c > 99.99)
        snprintf(buf, cap, ">99.99%%");
    else
        snprintf(buf, cap, "%.*f%%", c >= 99 ? 2 : 1, c);
}

static const char *fmt_p(char *buf, size_t cap, double p)
{
    if (p < 1e-10)
        snprintf(buf, cap, "p < 1e-10");
    else
        snprintf(buf, cap, "p = %.2g", p);
    return buf;
}

/* Decide one budget and write its verdict line. */
static void verdict(budget *b, double alpha)
{
    char v[160], se[64], lim[64], sure[32], pb[32];
    b->fail = b->p_adj < alpha;
    fmt_sure(sure, sizeof sure, b->p);
    if (b->kind == B_INCREASE) {
        double r = b->base.value > 0 ? b->est.value / b->base.value : INFINITY;
        char bv[64];
        mt_format_bytes(v, sizeof v, b->est.value);
        mt_format_bytes(bv, sizeof bv, b->base.value);
        int over = r > b->limit;
        snprintf(b->line, sizeof b->line,
                 "%s: %s -> %s (%+.1f%%), allowed +%s: %s", b->what, bv, v,
                 isfinite(r) ? 100 * (r - 1) : INFINITY, b->limit_text,
                 b->fail ? "exceeded" : over ? "above, but within the sampling noise" : "within");
        if (b->fail || over) {
            size_t l = strlen(b->line);
            snprintf(b->line + l, sizeof b->line - l, " (%s sure it is exceeded: %s)", sure,
                     fmt_p(pb, sizeof pb, b->p));
        }
        return;
    }
    mt_format_bytes(v, sizeof v, b->est.value);
    mt_format_bytes(se, sizeof se, mt_estimate_se(&b->est));
    mt_format_bytes(lim, sizeof lim, b->limit);
    int over = b->est.value > b->limit;
    if (b->kind == B_UNEXPLAINED) {
        char lo[32], hi[32], r[32];
        mt_format_bytes(lo, sizeof lo, b->lo);
        mt_format_bytes(hi, sizeof hi, b->hi);
        mt_format_bytes(r, sizeof r, b->rss);
        snprintf(b->line, sizeof b->line, "%s%s: %s (%.1f%% of RSS %s; 95%%: %s - %s), budget %s "
                 "(%s): %s", b->what, b->when, v, b->rss > 0 ? 100 * b->est.value / b->rss : 0, r,
                 lo, hi, b->limit_text, lim,
                 b->fail ? "exceeded" : over ? "above, but within the sampling noise" : "within");
        return;
    }
    if (b->kind == B_PEAK && b->peak.sd > 0) {
        /* the peak: its interval, not a standard error (peak.c) */
        mt_format_peak(v, sizeof v, &b->peak);
    }
    if (b->kind == B_LOST && b->unsampled_upper > 0) {
        mt_format_bytes(se, sizeof se, b->unsampled_upper);
        snprintf(b->line, sizeof b->line, "%s%s: 0 B, at most %s (95%%: no lost block sampled), "
                 "budget %s: %s", b->what, b->when, se, lim,
                 b->unsampled_upper > b->limit ? "within the sampling noise" : "within");
    } else if (b->kind == B_PEAK)
        snprintf(b->line, sizeof b->line, "%s%s: %s, budget %s: %s", b->what, b->when, v, lim,
                 b->fail ? "exceeded" : over ? "above, but within the sampling noise" : "within");
    else
        snprintf(b->line, sizeof b->line, "%s%s: %s ± %s, budget %s: %s", b->what, b->when, v, se,
                 lim, b->fail ? "exceeded" : over ? "above, but within the sampling noise" : "within");
    if (b->fail || over) {
        size_t l = strlen(b->line);
        snprintf(b->line + l, sizeof b->line - l, " (%s sure it is exceeded: %s)", sure,
                     fmt_p(pb, sizeof pb, b->p));
    }
}

/* The collectors of one trace, one per budget (NULL: none), summed while
 * the trace is folded. */
typedef struct folds {
    mt_diff_fold *f[8];
    int lost_only[8];      /* B_LOST: only the blocks the leak scan found lost */
    size_t n;
} folds;

static int folds_alloc(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    folds *fs = ctx;
    for (size_t i = 0; i < fs->n; i++)
        if (fs->f[i] && (!fs->lost_only[i] || a->verdict == MT_VERDICT_LOST) &&
            mt_diff_fold_alloc(fs->f[i], m, a, seq) < 0)
            return -1;
    return 0;
}

static void folds_reset(void *ctx)
{
    folds *fs = ctx;
    for (size_t i = 0; i < fs->n; i++)
        if (fs->f[i])
            mt_diff_fold_reset(fs->f[i]);
}

static void folds_free(folds *fs)
{
    for (size_t i = 0; i < fs->n; i++)
        mt_diff_fold_free(fs->f[i]);
    fs->n = 0;
}

/* A collector for one budget's measure over a whole trace. */
static int add_fold(folds *fs, size_t i, mt_metric metric, mt_timedelta at)
{
    mt_diff_side spec = mt_diff_side_all(NULL, at);
    fs->f[i] = mt_diff_fold_new(&spec, NULL, metric);
    if (fs->n <= i)
        fs->n = i + 1;
    return fs->f[i] ? 0 : -1;
}

/* --max-unexplained: the resident-memory ledger of path at its peak RSS
 * (docs/rss.md), from a whole model of the trace and its .rss: the
 * residual, its interval, and the p-value of "above the budget" from the
 * interval read as a normal one. 0, or 2 after a message. */
static int unexplained(const char *path, budget *x)
{
    char *err = NULL;
    /* the whole model: the ledger counts the samples live at a reading's time */
    mt_read_request rq = { .paths = &path, .n = 1, .fold = 0, .live_at = MT_TIME_END };
    mt_model *m = mt_read(&rq, &err);
    if (!m) {
        fprintf(stderr, "memtrace check: %s\n", err ? err : path);
        free(err);
        return 2;
    }
    mt_rss *rss = mt_rss_load(path, m, NULL, NULL);
    const mt_rss_reading *r = mt_rss_reading_at(rss, MT_TIME_PEAK);
    if (!r) {
        fprintf(stderr, "memtrace check: --max-unexplained: %s has no ledger readings beside it "
                "(%s.rss missing or of version 1: record with this memtrace's run)\n", path, path);
        mt_rss_free(rss);
        mt_model_free(m);
        return 2;
    }
    uint64_t heap, maps;
    mt_ledger_live_samples(m, r->time, &heap, &maps);
    const mt_scale *sc = mt_model_scale(m);
    mt_ledger L;
    mt_ledger_make(r, heap, maps, sc->bytes_per_sample, sc->sample_rate, &L);
    const mt_ledger_row *u = &L.row[L.n - 1];
    x->est.value = u->bytes;
    x->lo = u->lo;
    x->hi = u->hi;
    x->rss = L.rss;
    if (x->pct > 0 || strchr(x->limit_text, '%'))
        x->limit = x->pct / 100 * L.rss;
    double sd = (u->hi - u->lo) / (2 * 1.959964);
    x->p = sd > 0 ? 0.5 * erfc((u->bytes - x->limit) / (sd * sqrt(2.0)))
                  : u->bytes > x->limit ? 0 : 1;
    char tb[32];
    mt_format_time(tb, sizeof tb, r->time);
    snprintf(x->when, sizeof x->when, " (at peak RSS, %s)", tb);
    mt_rss_free(rss);
    mt_model_free(m);
    return 0;
}

int cmd_check(int argc, char **argv)
{
    enum { O_PEAK = 256, O_LIVE_END, O_ALLOC, O_INCREASE, O_BASE, O_ALPHA, O_JUNIT, O_NAME, O_LOST,
           O_UNEXPLAINED };
    static const struct option opts[] = {
        {"max-peak", required_argument, 0, O_PEAK},
        {"max-live-end", required_argument, 0, O_LIVE_END},
        {"max-alloc", required_argument, 0, O_ALLOC},
        {"max-lost", required_argument, 0, O_LOST},
        {"max-increase", required_argument, 0, O_INCREASE},
        {"max-unexplained", required_argument, 0, O_UNEXPLAINED},
        {"base", required_argument, 0, O_BASE},
        {"by", required_argument, 0, 'b'},
        {"at", required_argument, 0, 'a'},
        {"filter", required_argument, 0, 'f'},
        {"site", required_argument, 0, 's'},
        {"alpha", required_argument, 0, O_ALPHA},
        {"junit", required_argument, 0, O_JUNIT},
        {"name", required_argument, 0, O_NAME},
        {"help", no_argument, 0, 'h'},
        REPORT_SITE_LONGOPTS,
        {0, 0, 0, 0}};
    budget b[8];
    size_t nb = 0;
    const char *filter = NULL, *site = NULL, *base_path = NULL, *junit = NULL, *name = NULL;
    const char *bases[argc > 0 ? argc : 1];
    size_t n_bases = 0;
    double alpha = 0.05;
    mt_metric inc_metric = MT_METRIC_LIVE_BYTES;
    mt_timedelta inc_at = MT_TIME_PEAK;
    int by_given = 0, at_given = 0, c;
    char *end;
    memset(b, 0, sizeof b);
    while ((c = getopt_long(argc, argv, "b:a:f:s:h", opts, NULL)) != -1) {
        switch (c) {
        case O_PEAK:
        case O_LIVE_END:
        case O_ALLOC:
        case O_LOST:
        case O_UNEXPLAINED:
        case O_INCREASE: {
            if (nb == sizeof b / sizeof b[0]) {
                fprintf(stderr, "memtrace check: too many budgets\n");
                return 2;
            }
            budget *x = &b[nb];
            x->limit_text = optarg;
            if (c == O_INCREASE) {
                double pct = strtod(optarg, &end);
                if (end != optarg && *end == '%')
                    end++;
                if (end == optarg || *end || !(pct >= 0) || !isfinite(pct)) {
                    fprintf(stderr, "memtrace check: --max-increase %s: expected a percentage, e.g. 10%%\n", optarg);
                    return 2;
                }
                x->kind = B_INCREASE;
                x->limit = 1 + pct / 100;
            } else if (c == O_UNEXPLAINED && strchr(optarg, '%')) {
                double pct = strtod(optarg, &end);
                if (end == optarg || strcmp(end, "%") != 0 || !(pct >= 0 && pct <= 100)) {
                    fprintf(stderr, "memtrace check: --max-unexplained %s: expected a size (64MiB) "
                            "or a share of RSS (5%%)\n", optarg);
                    return 2;
                }
                x->kind = B_UNEXPLAINED;
                x->pct = pct;
            } else {
                uint64_t bytes;
                if (mt_units_size(optarg, &bytes) != MT_UNITS_OK) {
                    fprintf(stderr, "memtrace check: %s %s: expected a size, e.g. 200MiB, 512k, 1g%s\n",
                            c == O_PEAK ? "--max-peak" : c == O_LIVE_END ? "--max-live-end"
                            : c == O_LOST ? "--max-lost" : c == O_UNEXPLAINED ? "--max-unexplained"
                            : "--max-alloc", optarg,
                            c == O_UNEXPLAINED ? ", or a share of RSS, e.g. 5%" : "");
                    return 2;
                }
                x->limit = (double)bytes;
                x->kind = c == O_PEAK ? B_PEAK : c == O_LIVE_END ? B_LIVE_END
                          : c == O_LOST ? B_LOST : c == O_UNEXPLAINED ? B_UNEXPLAINED : B_ALLOC;
            }
            nb++;
            break;
        }
        case O_BASE: base_path = bases[n_bases++] = optarg; break;
        case 'b':
            if (report_metric("check", "--by", optarg, &inc_metric))
                return 2;
            if (inc_metric == MT_METRIC_SAMPLES) {
                fprintf(stderr, "memtrace check: --by samples: use alloc, count, live or live_count\n");
                return 2;
            }
            by_given = 1;
            break;
        case 'a':
            if (report_time("check", "--at", optarg, &inc_at))
                return 2;
            at_given = 1;
            break;
        case 'f': filter = optarg; break;
        case 's': site = optarg; break;
        case O_ALPHA:
            alpha = strtod(optarg, &end);
            if (*end || !(alpha > 0 && alpha < 1)) {
                fprintf(stderr, "memtrace check: --alpha %s: expected a number between 0 and 1, e.g. 0.01\n", optarg);
                return 2;
            }
            break;
        case O_JUNIT: junit = optarg; break;
        case O_NAME: name = optarg; break;
        case 'h': help(); return 0;
        case REPORT_OPT_RAW:
        case REPORT_OPT_PLUMBING:
        case REPORT_OPT_FULL_NAMES:
            if (report_site_option("check", c, optarg))
                return 2;
            break;
        default: return report_usage("check");
        }
    }
    report_sites.used = 1; /* --site names a site in the user's code, as top shows it */
    if (optind >= argc) {
        fprintf(stderr, "memtrace check: expected a trace file\n");
        return report_usage("check");
    }
    if (nb == 0) {
        fprintf(stderr, "memtrace check: no budget given (--max-peak, --max-live-end, --max-alloc, --max-lost, --max-increase, --max-unexplained)\n");
        return report_usage("check");
    }
    int has_inc = 0;
    for (size_t i = 0; i < nb; i++)
        has_inc |= b[i].kind == B_INCREASE;
    if (has_inc && !base_path) {
        fprintf(stderr, "memtrace check: --max-increase needs --base BASE\n");
        return 2;
    }
    if (base_path && !has_inc) {
        fprintf(stderr, "memtrace check: --base without --max-increase: nothing to compare\n");
        return 2;
    }
    if (at_given && !by_given)
        inc_metric = MT_METRIC_LIVE_BYTES;
    int inc_live = inc_metric == MT_METRIC_LIVE_BYTES || inc_metric == MT_METRIC_LIVE_OBJECTS;
    const char *path = argv[optind];
    char many[600];
    if (!name && argc - optind > 1) {
        snprintf(many, sizeof many, "%s (+%d more)", path, argc - optind - 1);
        name = many;
    }
    if (!name)
        name = path;

    /* Folding (memory for the live blocks and the stacks, not for every
     * allocation): a collector per budget. A peak under a filter or a site
     * is that of the filtered curve, which needs the whole model. */
    folds main_f = {{0}, {0}, 0}, base_f = {{0}, {0}, 0};
    int need_peak = 0, can_fold = 1;
    for (size_t i = 0; i < nb; i++) {
        int peak = b[i].kind == B_PEAK || (b[i].kind == B_INCREASE && inc_live && inc_at == MT_TIME_PEAK);
        need_peak |= peak;
        if (peak && (filter || site))
            can_fold = 0;
    }
    for (size_t i = 0; i < nb && can_fold; i++) {
        int bad = 0;
        switch (b[i].kind) {
        case B_PEAK: bad = add_fold(&main_f, i, MT_METRIC_LIVE_BYTES, MT_TIME_PEAK); break;
        case B_LIVE_END: bad = add_fold(&main_f, i, MT_METRIC_LIVE_BYTES, MT_TIME_END); break;
        case B_ALLOC: bad = add_fold(&main_f, i, MT_METRIC_ALLOC_BYTES, MT_TIME_END); break;
        case B_LOST:
            bad = add_fold(&main_f, i, MT_METRIC_LIVE_BYTES, MT_TIME_END);
            main_f.lost_only[i] = 1;
            break;
        case B_INCREASE: {
            mt_timedelta t = inc_live ? inc_at : MT_TIME_END;
            bad = add_fold(&main_f, i, inc_metric, t) || add_fold(&base_f, i, inc_metric, t);
            break;
        }
        }
        if (bad)
            can_fold = 0; /* out of memory: the whole model */
    }
    mt_model *m = NULL, *bm = NULL;
    mt_filter *f = NULL, *bf = NULL;
    mt_selection *s = NULL, *bs = NULL;
    report_side sides[2] = {
        {(const char *const *)argv + optind, (size_t)(argc - optind), 0,
         {can_fold ? folds_alloc : NULL, folds_reset, &main_f, need_peak}, NULL, NULL, NULL, 0},
        {bases, n_bases, 0, {can_fold ? folds_alloc : NULL, folds_reset, &base_f, need_peak},
         NULL, NULL, NULL, 0}};
    if (report_open_sides("check", sides, base_path ? 2 : 1, filter, MT_TIME_END, 2)) {
        folds_free(&main_f);
        folds_free(&base_f);
        return 2;
    }
    m = sides[0].m, f = sides[0].f, s = sides[0].s;
    bm = sides[1].m, bf = sides[1].f, bs = sides[1].s;
    int m_folded = sides[0].fed, b_folded = bm && sides[1].fed;
    mt_filter *lost_filter = NULL;
    mt_selection *lost_sel = NULL;   /* --max-lost on a whole model */
    for (size_t i = 0; i < nb; i++) {
        if (b[i].kind != B_LOST)
            continue;
        if (!mt_model_scan(m, NULL)) {
            if (argc - optind > 1)   /* several traces read as one carry no verdicts */
                fprintf(stderr, "memtrace check: --max-lost: verdicts are read from one trace at "
                        "a time, and %d were given: check each\n", argc - optind);
            else
                fprintf(stderr, "memtrace check: --max-lost: %s has no leak verdicts; record it "
                        "with 'memtrace run --leaks' (or MEMTRACE_LEAKS=1 under LD_PRELOAD)\n",
                        path);
            report_close(m, f, s);
            if (bm)
                report_close(bm, bf, bs);
            folds_free(&main_f);
            folds_free(&base_f);
            return 2;
        }
        if (!m_folded && !lost_sel) {
            /* A whole model: the selection with verdict:lost added. */
            size_t n = (filter ? strlen(filter) : 0) + 20;
            char *t = malloc(n);
            if (t) {
                snprintf(t, n, "%s%sverdict:lost", filter ? filter : "", filter ? " " : "");
                lost_filter = mt_filter_parse(t, NULL, NULL);
                free(t);
            }
            lost_sel = lost_filter ? mt_select(m, lost_filter, MT_TIME_END) : NULL;
            if (!lost_sel) {
                fprintf(stderr, "memtrace check: --max-lost: out of memory\n");
                return 2;
            }
        }
    }
    mt_diff_side side = mt_diff_side_all(s, MT_TIME_END);
    side.site = site;
    char scope[300] = "";
    if (filter && site)
        snprintf(scope, sizeof scope, " (filter '%s', site %s)", filter, site);
    else if (filter)
        snprintf(scope, sizeof scope, " (filter '%s')", filter);
    else if (site)
        snprintf(scope, sizeof scope, " (site %s)", site);
    static const char *const what[] = {"allocated bytes", "allocated blocks", "live bytes",
                                       "live blocks", "samples"};
    double p[8];
    for (size_t i = 0; i < nb; i++) {
        budget *x = &b[i];
        mt_diff_side sd = side;
        char tb[64];
        sd.fold = m_folded ? main_f.f[i] : NULL;
        switch (x->kind) {
        case B_PEAK:
            sd.at = mt_diff_side_peak_est(&sd, &x->peak);
            mt_format_time(tb, sizeof tb, sd.at);
            snprintf(x->what, sizeof x->what, "peak live bytes%s", scope);
            snprintf(x->when, sizeof x->when, " (at %s)", tb);
            /* the curve's highest can read high: the peak's own test, which
             * fails only when the interval's lower bound is above the
             * budget at --alpha (docs/estimates.md) */
            x->est = mt_diff_estimate(&sd, MT_METRIC_LIVE_BYTES);
            x->est.value = x->peak.bytes;
            x->p = mt_test_peak_above(&x->peak, x->limit);
            break;
        case B_LIVE_END:
            snprintf(x->what, sizeof x->what, "live bytes at the end%s", scope);
            x->est = mt_diff_estimate(&sd, MT_METRIC_LIVE_BYTES);
            x->p = mt_test_above(&x->est, x->limit);
            break;
        case B_LOST:
            snprintf(x->what, sizeof x->what, "lost bytes at exit%s", scope);
            if (lost_sel)
                sd.sel = lost_sel;
            sd.at = MT_TIME_END;
            x->est = mt_diff_estimate(&sd, MT_METRIC_LIVE_BYTES);
            x->p = mt_test_above(&x->est, x->limit);
            if (!(x->est.value > 0))   /* a zero from no sample: its bound (docs/leaks.md) */
                x->unsampled_upper = mt_unsampled_upper(m, 0.95);
            break;
        case B_UNEXPLAINED:
            snprintf(x->what, sizeof x->what, "unexplained resident memory");
            if (unexplained(path, x) != 0) {
                report_close(m, f, s);
                if (bm)
                    report_close(bm, bf, bs);
                folds_free(&main_f);
                folds_free(&base_f);
                return 2;
            }
            break;
        case B_ALLOC:
            snprintf(x->what, sizeof x->what, "allocated bytes%s", scope);
            x->est = mt_diff_estimate(&sd, MT_METRIC_ALLOC_BYTES);
            x->p = mt_test_above(&x->est, x->limit);
            break;
        case B_INCREASE: {
            mt_diff_side bsd = mt_diff_side_all(bs, MT_TIME_END);
            bsd.site = site;
            bsd.fold = b_folded ? base_f.f[i] : NULL;
            mt_peak np, bp;
            if (inc_live && inc_at == MT_TIME_PEAK) {
                sd.at = mt_diff_side_peak_est(&sd, &np);
                bsd.at = mt_diff_side_peak_est(&bsd, &bp);
                snprintf(x->what, sizeof x->what, "peak %s%s", what[inc_metric], scope);
            } else if (inc_live) {
                sd.at = bsd.at = inc_at;
                if (inc_at == MT_TIME_END)
                    snprintf(x->what, sizeof x->what, "%s at the end%s", what[inc_metric], scope);
                else {
                    mt_format_time(tb, sizeof tb, inc_at);
                    snprintf(x->what, sizeof x->what, "%s at %s%s", what[inc_metric], tb, scope);
                }
            } else {
                snprintf(x->what, sizeof x->what, "%s%s", what[inc_metric], scope);
            }
            x->est = mt_diff_estimate(&sd, inc_metric);
            x->base = mt_diff_estimate(&bsd, inc_metric);
            if (inc_live && inc_at == MT_TIME_PEAK && inc_metric == MT_METRIC_LIVE_BYTES) {
                /* the peaks' estimates: each curve's highest point */
                x->est.value = np.bytes;
                x->base.value = bp.bytes;
            }
            x->p = mt_test_ratio_above(&x->base, &x->est, x->limit);
            break;
        }
        }
        p[i] = x->p;
    }
    double adj[8];
    mt_holm(p, nb, adj);
    size_t failed = 0;
    for (size_t i = 0; i < nb; i++) {
        b[i].p_adj = adj[i];
        verdict(&b[i], alpha);
        failed += b[i].fail;
    }
    int gha = getenv("GITHUB_ACTIONS") && !strcmp(getenv("GITHUB_ACTIONS"), "true");
    /* names, paths and filters as the one escaper writes them: no raw
     * control character, no line that is a workflow command but ours, whose
     * message encodes %, CR and LF as GitHub Actions decodes them */
    fputs("memtrace check: ", stdout);
    mt_text_put(stdout, name);
    if (base_path) {
        fputs(" against ", stdout);
        mt_text_put(stdout, base_path);
    }
    putchar('\n');
    for (size_t i = 0; i < nb; i++) {
        printf("  %s  ", b[i].fail ? "FAIL" : "ok  ");
        mt_text_put(stdout, b[i].line);
        putchar('\n');
        if (gha && b[i].fail) {
            fputs("::error title=memtrace check::", stdout);
            mt_ci_data_put(stdout, name);
            fputs(": ", stdout);
            mt_ci_data_put(stdout, b[i].line);
            putchar('\n');
        }
    }
    if (failed)
        printf("memtrace check: %zu of %zu budget%s exceeded beyond the sampling noise "
               "(one-sided exact tests, Holm over %zu budget%s at %g%%)\n", failed, nb,
               nb == 1 ? "" : "s", nb, nb == 1 ? "" : "s", 100 * alpha);
    else
        printf("memtrace check: %zu budget%s hold%s\n", nb, nb == 1 ? "" : "s", nb == 1 ? "s" : "");
    int rc = failed ? 1 : 0;
    if (fflush(stdout) != 0) {
        perror("memtrace check: writing the report");
        rc = 2;
    }
    const char *why = NULL;
    if (junit && write_junit(junit, name, b, nb, failed, &why) < 0) {
        fprintf(stderr, "memtrace check: --junit %s: cannot write it: %s\n", junit,
                why ? why : "write error");
        rc = 2;
    }
    mt_selection_free(lost_sel);
    mt_filter_free(lost_filter);
    report_close(m, f, s);
    if (bm)
        report_close(bm, bf, bs);
    folds_free(&main_f);
    folds_free(&base_f);
    return rc;
}
