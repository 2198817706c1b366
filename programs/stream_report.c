/*
 * stream_report.c - stats, lifetimes and plot: each asks lib/analyze for
 * the figures of its selection (mt_read_figures, memtrace/stream.h: the
 * planner chooses the passes, folded or the whole model) and prints them,
 * or the whole model's selection when that is what came. Warnings and
 * errors in the CLI's words, a progress line while the traces are read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safefile.h"
#include "memtrace/compare.h"
#include "memtrace/stream.h"
#include "progress.h"
#include "report.h"
#include "stream_report.h"

/* One command's read: its name, progress line, and what its callbacks fill. */
typedef struct ask {
    const char *cmd;
    progress pr;
    int json, first;               /* lifetimes: a line each */
    const mt_plot_options *po;     /* plot lifetimes: the scatter's */
    mt_plot_scatter *scatter;
} ask;

static void say_warning(void *ctx, const char *msg)
{
    ask *k = ctx;
    progress_end(&k->pr);
    fprintf(stderr, "memtrace %s: warning: ", k->cmd);
    mt_text_put(stderr, msg);   /* (it may quote the trace) */
    fputc('\n', stderr);
}

/* Reads as rq asks (its callbacks' context is k); 0 with *fig set, or
 * the exit status after saying why (*fig freed). */
static int read_figures(ask *k, mt_figures_request *rq, const stream_input *in,
                        const char *filter, mt_filter **f, mt_figures *fig)
{
    memset(fig, 0, sizeof *fig);
    *f = NULL;
    const char *profile = mt_read_figures_refuses(in->paths, in->n);
    if (profile)
        return report_not_profile(k->cmd, profile);
    if (!(*f = report_filter(k->cmd, filter)))
        return 2;
    rq->paths = in->paths;
    rq->n = in->n;
    rq->by_process = in->by_process;
    rq->filter = *f;
    rq->ctx = k;
    rq->on_warning = say_warning;
    rq->warning_ctx = k;
    rq->on_progress = progress_update;
    rq->progress_ctx = &k->pr;
    progress_init(&k->pr, k->cmd);
    char *err = NULL;
    int rc = mt_read_figures(rq, fig, &err);
    progress_end(&k->pr);
    if (rc == 0)
        return 0;
    if (fig->profile) {
        rc = report_not_profile(k->cmd, fig->profile);
    } else {
        if (fig->m) /* the whole model, whose selection failed */
            report_notes(k->cmd, in->paths, in->n, fig->m);
        fprintf(stderr, "memtrace %s: %s\n", k->cmd, err ? err : "out of memory");
    }
    free(err);
    mt_figures_free(fig);
    mt_filter_free(*f);
    *f = NULL;
    return rc;
}

static int stats_write(const mt_figures *fig, const stream_input *in, int json)
{
    mt_rss *rss = mt_rss_load_many(in->paths, in->n, fig->m, NULL, NULL);
    int wrc = fig->sel ? mt_report_stats_rss(stdout, fig->sel, rss, json)
                       : mt_report_stats_figures(stdout, fig->m, &fig->stats, fig->sizes,
                                                 fig->lifetimes,
                                                 mt_model_resolve_time(fig->m, fig->live_at),
                                                 rss, json);
    mt_rss_free(rss);
    if (wrc < 0 || fflush(stdout) != 0) {
        perror("memtrace stats: writing the report");
        return 1;
    }
    return 0;
}

int stream_stats(const stream_input *in, const char *filter, mt_timedelta at, int json)
{
    ask k = {.cmd = "stats"};
    mt_figures_request rq = {.live_at = at, .need = MT_FIGURES_STATS | MT_FIGURES_PEAK};
    mt_filter *f;
    mt_figures fig;
    int rc = read_figures(&k, &rq, in, filter, &f, &fig);
    if (rc)
        return rc;
    report_notes("stats", in->paths, in->n, fig.m);
    rc = stats_write(&fig, in, json);
    mt_figures_free(&fig);
    mt_filter_free(f);
    return rc;
}

static int lifetime_line(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    ask *k = ctx;
    (void)seq;
    if (k->json && k->first)
        fputc('[', stdout); /* not before: a failed filter prints nothing */
    mt_lifetimes_line(stdout, a, mt_model_end(m), k->json, k->first);
    k->first = 0;
    return 0;
}

int stream_lifetimes(const stream_input *in, const char *filter, int json)
{
    ask k = {.cmd = "lifetimes", .json = json, .first = 1};
    mt_figures_request rq = {.live_at = MT_TIME_END, .on_selected = lifetime_line};
    mt_filter *f;
    mt_figures fig;
    int rc = read_figures(&k, &rq, in, filter, &f, &fig);
    if (rc)
        return rc;
    if (fig.sel) {
        report_notes("lifetimes", in->paths, in->n, fig.m);
        if (mt_report_lifetimes(stdout, fig.sel, json) < 0 || fflush(stdout) != 0) {
            perror("memtrace lifetimes: writing");
            rc = 1;
        }
    } else {
        if (json)
            fputs(k.first ? "[\n]\n" : "\n]\n", stdout);
        report_notes("lifetimes", in->paths, in->n, fig.m);
        if (ferror(stdout) || fflush(stdout) != 0) {
            perror("memtrace lifetimes: writing");
            rc = 1;
        }
    }
    mt_figures_free(&fig);
    mt_filter_free(f);
    return rc;
}

static int scatter_axes(void *ctx, mt_timedelta end, mt_timedelta max_life)
{
    ask *k = ctx;
    return (k->scatter = mt_plot_scatter_new(k->po, end, max_life)) ? 0 : -1;
}

static int scatter_add(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    ask *k = ctx;
    (void)m;
    return k->scatter && mt_plot_scatter_add(k->scatter, a, seq) < 0 ? -1 : 0;
}

/* The picture of the figures (or of the whole model's selection). */
static int draw(FILE *out, const ask *k, const mt_figures *fig, const mt_plot_options *po)
{
    if (fig->sel)
        return mt_plot_svg(out, fig->sel, po);
    uint64_t n_allocs = 0;
    mt_model_event_counts(fig->m, &n_allocs, NULL, NULL);
    switch (po->kind) {
    case MT_PLOT_MEMORY:
        return mt_plot_memory_svg(out, fig->m, fig->curve, fig->n_selected != n_allocs, po);
    case MT_PLOT_SIZES:
        return mt_plot_sizes_svg(out, fig->m, fig->sizes, fig->stats.total.alloc_bytes, po);
    default: return mt_plot_lifetimes_svg(out, fig->m, k->scatter, fig->n_selected, po);
    }
}

int stream_plot(const stream_input *in, const char *filter, mt_plot_options *po,
                const char *output)
{
    ask k = {.cmd = "plot", .po = po};
    mt_figures_request rq = {.live_at = MT_TIME_END};
    switch (po->kind) {
    case MT_PLOT_MEMORY:
        rq.need = MT_FIGURES_CURVE;
        rq.curve_buckets = mt_plot_memory_buckets(po);
        break;
    case MT_PLOT_SIZES: rq.need = MT_FIGURES_STATS; break;
    default:
        rq.need = MT_FIGURES_AXES;
        rq.on_axes = scatter_axes;
        rq.on_selected = scatter_add;
        break;
    }
    mt_filter *f;
    mt_figures fig;
    int rc = read_figures(&k, &rq, in, filter, &f, &fig);
    if (rc)
        goto out;
    /* as the whole model's reports have it: the notes first, the RSS
     * once the picture's file is open; else the RSS beside the curve */
    mt_rss *rss = NULL;
    if (!fig.sel && po->kind == MT_PLOT_MEMORY)
        rss = mt_rss_load_many(in->paths, in->n, fig.m, NULL, NULL);
    report_notes("plot", in->paths, in->n, fig.m);
    mt_outfile of;
    const char *why = NULL;
    FILE *out = mt_outfile_fopen(&of, output, &why);
    if (!out) {
        fprintf(stderr, "memtrace plot: %s: %s\n", output, why);
        rc = 1;
    } else {
        if (fig.sel && po->kind == MT_PLOT_MEMORY)
            rss = mt_rss_load_many(in->paths, in->n, fig.m, NULL, NULL);
        po->rss = rss;
        int w = draw(out, &k, &fig, po);
        if (mt_outfile_fclose(&of, out, w < 0, &why) != 0 || w < 0) {
            fprintf(stderr, "memtrace plot: %s: cannot write the picture\n", output);
            rc = 1;
        }
    }
    po->rss = NULL;
    mt_rss_free(rss);
    mt_figures_free(&fig);
    mt_filter_free(f);
out:
    mt_plot_scatter_free(k.scatter);
    return rc;
}
