/*
 * cmd_check.c - 'memtrace check': memory budgets for CI. Budgets on one
 * trace (peak, live at the end, allocated, lost at exit, the resident
 * memory the ledger leaves unexplained) and against a base trace (an
 * increase in percent), each decided by a one-sided test so that a
 * check fails only when the excess is larger than the sampling noise.
 * Output for CI logs (and GitHub Actions annotations), JUnit XML.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "safefile.h"
#include "commands.h"
#include "memtrace/compare.h"
#include "memtrace/present.h"
#include "options.h"
#include "report.h"
#include "trace_cli.h"
#include "verdicts.h"

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

/* The command line: the budgets in the order given, and what they apply to. */
typedef struct check_args {
    budget b[8];
    size_t nb;
    const char *filter, *site, *junit, *name;
    opt_list bases;          /* --base, each */
    double alpha;
    mt_metric inc_metric;    /* --by, for --max-increase */
    mt_timedelta inc_at;     /* --at */
    int by_given, at_given;
    const char *const *paths;
    size_t n_paths;
} check_args;

/* A budget option (--max-*): one more budget, kept in the order given. */
static int add_budget(void *ctx, const char *arg, const char *opt)
{
    check_args *a = ctx;
    if (a->nb == sizeof a->b / sizeof a->b[0]) {
        fprintf(stderr, "memtrace check: too many budgets\n");
        return 2;
    }
    budget *x = &a->b[a->nb];
    x->limit_text = arg;
    if (!strcmp(opt, "--max-increase")) {
        opt_spec pct = {.name = "max-increase", .kind = OPT_PERCENT, .dest = &x->limit};
        if (opt_value("check", &pct, arg))
            return 2;
        x->kind = B_INCREASE;
        x->limit = 1 + x->limit / 100;
    } else if (!strcmp(opt, "--max-unexplained") && strchr(arg, '%')) {
        opt_spec pct = {.name = "max-unexplained", .kind = OPT_PERCENT, .dest = &x->pct};
        if (opt_value("check", &pct, arg))
            return 2;
        if (x->pct > 100) {
            fprintf(stderr, "memtrace check: --max-unexplained %s: a share of RSS is at most 100%%\n", arg);
            return 2;
        }
        x->kind = B_UNEXPLAINED;
    } else {
        uint64_t bytes;
        opt_spec size = {.name = opt + 2, .kind = OPT_SIZE, .dest = &bytes};
        if (opt_value("check", &size, arg))
            return 2;
        x->limit = (double)bytes;
        x->kind = !strcmp(opt, "--max-peak") ? B_PEAK : !strcmp(opt, "--max-live-end") ? B_LIVE_END
                  : !strcmp(opt, "--max-lost") ? B_LOST
                  : !strcmp(opt, "--max-unexplained") ? B_UNEXPLAINED : B_ALLOC;
    }
    a->nb++;
    return 0;
}

static const char check_head[] =
    "usage: memtrace check [OPTIONS] TRACE...\n"
    "       memtrace check [OPTIONS] --base BASE [--base BASE...] TRACE...\n"
    "\n"
    "Check memory budgets, for CI. A budget fails only when the estimate is\n"
    "above it by more than the sampling noise (one-sided exact test at --alpha,\n"
    "Holm-corrected over the budgets); the report says how sure.\n"
    "TRACE may be a pprof profile (--max-live-end, --max-alloc, --max-increase\n"
    "without --at; docs/profiles-input.md).\n"
    "\n";
static const char check_tail[] =
    "\n"
    "Several traces (app.ctf app.ctf.*, runs) are checked as one.\n"
    "Sizes: bytes, or with a unit k, M, G, T (1024-based; also KiB, kB, ...;\n"
    "either case; docs/units.md).\n"
    "Memory follows the blocks live at once and the distinct stacks (a peak\n"
    "budget with --filter or --site keeps every allocation).\n"
    "Exit status: 0 every budget holds, 1 one is exceeded, 2 trouble.\n"
    "Example: memtrace check --max-peak 200MiB --max-live-end 1MiB app.ctf\n";

/* The options and what they ask, checked together: -1 to go on, else the
 * exit status. */
static int check_parse(check_args *a, int argc, char **argv)
{
    const opt_spec opts[] = {
        OPT("max-peak", 0, OPT_CALL, NULL, "SIZE", "peak live bytes at most SIZE (e.g. 200MiB)",
         .fn = add_budget, .ctx = a),
        OPT("max-live-end", 0, OPT_CALL, NULL, "SIZE", "bytes live at the end (leaks) at most SIZE",
         .fn = add_budget, .ctx = a),
        OPT("max-alloc", 0, OPT_CALL, NULL, "SIZE", "bytes allocated at most SIZE",
         .fn = add_budget, .ctx = a),
        OPT("max-lost", 0, OPT_CALL, NULL, "SIZE",
         "bytes the leak scan found lost at exit at most SIZE\n"
         "(a trace recorded with 'memtrace run --leaks')", .fn = add_budget, .ctx = a),
        OPT("max-unexplained", 0, OPT_CALL, NULL, "SIZE|PCT",
         "at the peak of RSS, the ledger's unexplained\n"
         "row (memtrace rss) at most SIZE or PCT of RSS (5%)", .fn = add_budget, .ctx = a),
        OPT("max-increase", 0, OPT_CALL, NULL, "PCT",
         "against --base: the measure (--by, --at; default the\n"
         "peak live bytes) grows by at most PCT (e.g. 10%)", .fn = add_budget, .ctx = a),
        OPT("base", 0, OPT_LIST, &a->bases, "BASE", "the trace to compare with (repeat for several)"),
        OPT("by", 'b', OPT_MEASURE, &a->inc_metric, "MEASURE",
         "for --max-increase: alloc, count, live, live_count", .given = &a->by_given),
        OPT("at", 'a', OPT_TIME, &a->inc_at, "TIME", "for --max-increase with live: 2s, peak, end",
         .given = &a->at_given),
        OPT("filter", 'f', OPT_FILTER, &a->filter, "F", "budgets apply to allocations matching the filter"),
        OPT("site", 's', OPT_STRING, &a->site, "NAME",
         "budgets apply to allocations whose site (innermost\nfunction) contains NAME"),
        OPT("alpha", 0, OPT_REAL, &a->alpha, "A", "false-failure rate of the whole check (default 0.05)",
         .lo = 0, .hi = 1),
        OPT("junit", 0, OPT_STRING, &a->junit, "FILE", "also write the results as JUnit XML"),
        OPT("name", 0, OPT_STRING, &a->name, "NAME", "name of the check in the output (default: the trace)"),
        REPORT_SITE_OPTS,
    };
    const opt_command cmd = {"check", check_head, check_tail, 27, opts, sizeof opts / sizeof opts[0]};
    int first, rc = opt_parse(&cmd, argc, argv, &first);
    if (rc >= 0)
        return rc;
    if (a->by_given && a->inc_metric == MT_METRIC_SAMPLES) {
        fprintf(stderr, "memtrace check: --by samples: use alloc, count, live or live_count\n");
        return 2;
    }
    report_sites.used = 1; /* --site names a site in the user's code, as top shows it */
    if (first >= argc) {
        fprintf(stderr, "memtrace check: expected a trace file\n");
        return opt_usage("check");
    }
    if (a->nb == 0) {
        fprintf(stderr, "memtrace check: no budget given (--max-peak, --max-live-end, --max-alloc, --max-lost, --max-increase, --max-unexplained)\n");
        return opt_usage("check");
    }
    int has_inc = 0;
    for (size_t i = 0; i < a->nb; i++)
        has_inc |= a->b[i].kind == B_INCREASE;
    if (has_inc && !a->bases.n) {
        fprintf(stderr, "memtrace check: --max-increase needs --base BASE\n");
        return 2;
    }
    if (a->bases.n && !has_inc) {
        fprintf(stderr, "memtrace check: --base without --max-increase: nothing to compare\n");
        return 2;
    }
    if (a->at_given && !a->by_given)
        a->inc_metric = MT_METRIC_LIVE_BYTES;
    a->paths = (const char *const *)argv + first;
    a->n_paths = (size_t)(argc - first);
    return -1;
}

static int inc_live(const check_args *a)
{
    return a->inc_metric == MT_METRIC_LIVE_BYTES || a->inc_metric == MT_METRIC_LIVE_OBJECTS;
}

/* Folding (memory for the live blocks and the stacks, not for every
 * allocation): a collector per budget. A peak under a filter or a site is
 * that of the filtered curve, which needs the whole model. Returns whether
 * the traces can be folded; *need_peak: whether a budget needs the peak. */
static int plan_folds(const check_args *a, folds *main_f, folds *base_f, int *need_peak)
{
    int can_fold = 1;
    *need_peak = 0;
    for (size_t i = 0; i < a->nb; i++) {
        int peak = a->b[i].kind == B_PEAK ||
                   (a->b[i].kind == B_INCREASE && inc_live(a) && a->inc_at == MT_TIME_PEAK);
        *need_peak |= peak;
        if (peak && (a->filter || a->site))
            can_fold = 0;
    }
    for (size_t i = 0; i < a->nb && can_fold; i++) {
        int bad = 0;
        switch (a->b[i].kind) {
        case B_PEAK: bad = add_fold(main_f, i, MT_METRIC_LIVE_BYTES, MT_TIME_PEAK); break;
        case B_LIVE_END: bad = add_fold(main_f, i, MT_METRIC_LIVE_BYTES, MT_TIME_END); break;
        case B_ALLOC: bad = add_fold(main_f, i, MT_METRIC_ALLOC_BYTES, MT_TIME_END); break;
        case B_LOST:
            bad = add_fold(main_f, i, MT_METRIC_LIVE_BYTES, MT_TIME_END);
            main_f->lost_only[i] = 1;
            break;
        case B_INCREASE: {
            mt_timedelta t = inc_live(a) ? a->inc_at : MT_TIME_END;
            bad = add_fold(main_f, i, a->inc_metric, t) || add_fold(base_f, i, a->inc_metric, t);
            break;
        }
        }
        if (bad)
            can_fold = 0; /* out of memory: the whole model */
    }
    return can_fold;
}

/* What the reads give: the models, their folds and, for --max-lost on a
 * whole model, the selection of the lost blocks. */
typedef struct check_read {
    report_side sides[2];
    folds main_f, base_f;
    mt_filter *lost_filter;
    mt_selection *lost_sel;
} check_read;

static void read_close(check_read *r)
{
    mt_selection_free(r->lost_sel);
    mt_filter_free(r->lost_filter);
    if (r->sides[0].m)
        report_close(r->sides[0].m, r->sides[0].f, r->sides[0].s);
    if (r->sides[1].m)
        report_close(r->sides[1].m, r->sides[1].f, r->sides[1].s);
    folds_free(&r->main_f);
    folds_free(&r->base_f);
}

/* --max-lost: the trace's verdicts, and on a whole model the selection of
 * the lost blocks under the filter. 0, or 2 after the message. */
static int select_lost(const check_args *a, check_read *r)
{
    const mt_model *m = r->sides[0].m;
    if (!mt_model_scan(m, NULL)) {
        verdicts_missing("check", "--max-lost", a->n_paths, a->paths[0]);
        return 2;
    }
    if (!r->sides[0].fed && !r->lost_sel) {
        char *t = verdict_filter_text(a->filter, "lost");
        r->lost_filter = t ? mt_filter_parse(t, NULL, NULL) : NULL;
        free(t);
        r->lost_sel = r->lost_filter ? mt_select(m, r->lost_filter, MT_TIME_END) : NULL;
        if (!r->lost_sel) {
            fprintf(stderr, "memtrace check: --max-lost: out of memory\n");
            return 2;
        }
    }
    return 0;
}

/* --max-unexplained: the resident-memory ledger of path at its peak RSS
 * (docs/rss.md), from a whole model of the trace and its .rss: the
 * residual, its interval, and the p-value of "above the budget" from the
 * interval read as a normal one. 0, or 2 after a message. */
static int unexplained(const char *path, budget *x)
{
    char *err = NULL;
    /* the whole model: the ledger counts the samples live at a reading's time */
    mt_read_request rq = { .paths = &path, .n = 1, .fold = 0, .live_at = MT_TIME_END,
                           .on_warning = trace_cli_warning, .warning_ctx = "check" };
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

/* Reads the traces and the bases: 0, or the exit status after the messages. */
static int check_read_all(check_args *a, check_read *r)
{
    int need_peak, can_fold = plan_folds(a, &r->main_f, &r->base_f, &need_peak);
    r->sides[0] = (report_side){a->paths, a->n_paths, 0,
        {can_fold ? folds_alloc : NULL, folds_reset, &r->main_f, need_peak}, NULL, NULL, NULL, 0};
    r->sides[1] = (report_side){a->bases.v, a->bases.n, 0,
        {can_fold ? folds_alloc : NULL, folds_reset, &r->base_f, need_peak}, NULL, NULL, NULL, 0};
    if (report_open_sides("check", r->sides, a->bases.n ? 2 : 1, a->filter, MT_TIME_END, 2)) {
        r->sides[0].m = r->sides[1].m = NULL;
        return 2;
    }
    for (size_t i = 0; i < a->nb; i++)
        if (a->b[i].kind == B_LOST && select_lost(a, r))
            return 2;
    for (size_t i = 0; i < a->nb; i++)
        if (a->b[i].kind == B_UNEXPLAINED && unexplained(a->paths[0], &a->b[i]))
            return 2;
    return 0;
}

static const char *const measure_what[] = {"allocated bytes", "allocated blocks", "live bytes",
                                           "live blocks", "samples"};

/* --max-increase: the measure on both sides, its name, its test. */
static void estimate_increase(const check_args *a, const check_read *r, size_t i,
                              mt_diff_side sd, const char *scope)
{
    budget *x = (budget *)&a->b[i];
    mt_diff_side bsd = mt_diff_side_all(r->sides[1].s, MT_TIME_END);
    bsd.site = a->site;
    bsd.fold = r->sides[1].m && r->sides[1].fed ? r->base_f.f[i] : NULL;
    mt_peak np, bp;
    const char *what = measure_what[a->inc_metric];
    if (inc_live(a) && a->inc_at == MT_TIME_PEAK) {
        sd.at = mt_diff_side_peak_est(&sd, &np);
        bsd.at = mt_diff_side_peak_est(&bsd, &bp);
        snprintf(x->what, sizeof x->what, "peak %s%s", what, scope);
    } else if (inc_live(a)) {
        sd.at = bsd.at = a->inc_at;
        if (a->inc_at == MT_TIME_END)
            snprintf(x->what, sizeof x->what, "%s at the end%s", what, scope);
        else {
            char tb[64];
            mt_format_time(tb, sizeof tb, a->inc_at);
            snprintf(x->what, sizeof x->what, "%s at %s%s", what, tb, scope);
        }
    } else {
        snprintf(x->what, sizeof x->what, "%s%s", what, scope);
    }
    x->est = mt_diff_estimate(&sd, a->inc_metric);
    x->base = mt_diff_estimate(&bsd, a->inc_metric);
    if (inc_live(a) && a->inc_at == MT_TIME_PEAK && a->inc_metric == MT_METRIC_LIVE_BYTES) {
        /* the peaks' estimates: each curve's highest point */
        x->est.value = np.bytes;
        x->base.value = bp.bytes;
    }
    x->p = mt_test_ratio_above(&x->base, &x->est, x->limit);
}

/* One budget on one trace: its estimate, its name, its test. */
static void estimate_one(check_args *a, const check_read *r, size_t i, const char *scope)
{
    budget *x = &a->b[i];
    mt_diff_side sd = mt_diff_side_all(r->sides[0].s, MT_TIME_END);
    sd.site = a->site;
    sd.fold = r->sides[0].fed ? r->main_f.f[i] : NULL;
    char tb[64];
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
        if (r->lost_sel)
            sd.sel = r->lost_sel;
        sd.at = MT_TIME_END;
        x->est = mt_diff_estimate(&sd, MT_METRIC_LIVE_BYTES);
        x->p = mt_test_above(&x->est, x->limit);
        if (!(x->est.value > 0))   /* a zero from no sample: its bound (docs/leaks.md) */
            x->unsampled_upper = mt_unsampled_upper(r->sides[0].m, 0.95);
        break;
    case B_ALLOC:
        snprintf(x->what, sizeof x->what, "allocated bytes%s", scope);
        x->est = mt_diff_estimate(&sd, MT_METRIC_ALLOC_BYTES);
        x->p = mt_test_above(&x->est, x->limit);
        break;
    case B_INCREASE: estimate_increase(a, r, i, sd, scope); break;
    case B_UNEXPLAINED: /* read with the trace's ledger (check_read_all) */
        snprintf(x->what, sizeof x->what, "unexplained resident memory");
        break;
    }
}

/* Every budget's estimate and test, then the verdicts (Holm over them):
 * the number that failed. */
static size_t decide(check_args *a, const check_read *r)
{
    char scope[300] = "";
    if (a->filter && a->site)
        snprintf(scope, sizeof scope, " (filter '%s', site %s)", a->filter, a->site);
    else if (a->filter)
        snprintf(scope, sizeof scope, " (filter '%s')", a->filter);
    else if (a->site)
        snprintf(scope, sizeof scope, " (site %s)", a->site);
    double p[8], adj[8];
    for (size_t i = 0; i < a->nb; i++) {
        estimate_one(a, r, i, scope);
        p[i] = a->b[i].p;
    }
    mt_holm(p, a->nb, adj);
    size_t failed = 0;
    for (size_t i = 0; i < a->nb; i++) {
        a->b[i].p_adj = adj[i];
        verdict(&a->b[i], a->alpha);
        failed += a->b[i].fail;
    }
    return failed;
}

/* The report on stdout, GitHub Actions annotations when run there. */
static void print_report(const check_args *a, const char *name, size_t failed)
{
    int gha = getenv("GITHUB_ACTIONS") && !strcmp(getenv("GITHUB_ACTIONS"), "true");
    size_t nb = a->nb;
    /* names, paths and filters as the one escaper writes them: no raw
     * control character, no line that is a workflow command but ours, whose
     * message encodes %, CR and LF as GitHub Actions decodes them */
    fputs("memtrace check: ", stdout);
    mt_text_put(stdout, name);
    if (a->bases.n) {
        fputs(" against ", stdout);
        mt_text_put(stdout, a->bases.v[a->bases.n - 1]);
    }
    putchar('\n');
    for (size_t i = 0; i < nb; i++) {
        printf("  %s  ", a->b[i].fail ? "FAIL" : "ok  ");
        mt_text_put(stdout, a->b[i].line);
        putchar('\n');
        if (gha && a->b[i].fail) {
            fputs("::error title=memtrace check::", stdout);
            mt_ci_data_put(stdout, name);
            fputs(": ", stdout);
            mt_ci_data_put(stdout, a->b[i].line);
            putchar('\n');
        }
    }
    if (failed)
        printf("memtrace check: %zu of %zu budget%s exceeded beyond the sampling noise "
               "(one-sided exact tests, Holm over %zu budget%s at %g%%)\n", failed, nb,
               nb == 1 ? "" : "s", nb, nb == 1 ? "" : "s", 100 * a->alpha);
    else
        printf("memtrace check: %zu budget%s hold%s\n", nb, nb == 1 ? "" : "s", nb == 1 ? "s" : "");
}

int cmd_check(int argc, char **argv)
{
    const char *bases[argc > 0 ? argc : 1];
    check_args a = {.bases = {bases, 0, (size_t)(argc > 0 ? argc : 1)}, .alpha = 0.05, .inc_metric = MT_METRIC_LIVE_BYTES,
                    .inc_at = MT_TIME_PEAK};
    int rc = check_parse(&a, argc, argv);
    if (rc >= 0)
        return rc;
    char many[600];
    const char *name = a.name;
    if (!name && a.n_paths > 1) {
        snprintf(many, sizeof many, "%s (+%zu more)", a.paths[0], a.n_paths - 1);
        name = many;
    }
    if (!name)
        name = a.paths[0];
    check_read r;
    memset(&r, 0, sizeof r);
    if (check_read_all(&a, &r)) {
        read_close(&r);
        return 2;
    }
    size_t failed = decide(&a, &r);
    print_report(&a, name, failed);
    rc = failed ? 1 : 0;
    if (fflush(stdout) != 0) {
        perror("memtrace check: writing the report");
        rc = 2;
    }
    const char *why = NULL;
    if (a.junit && write_junit(a.junit, name, a.b, a.nb, failed, &why) < 0) {
        fprintf(stderr, "memtrace check: --junit %s: cannot write it: %s\n", a.junit,
                why ? why : "write error");
        rc = 2;
    }
    read_close(&r);
    return rc;
}
