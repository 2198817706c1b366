/*
 * stream_report.c - stats, lifetimes and plot read as folded models
 * (memory for the live blocks and the distinct stacks, not one record per
 * allocation), over one trace file, several aggregated (mt_read
 * merges them into one stream) or a pipe: each finished allocation goes
 * through the filter (mt_stream_filter) and into what the report needs
 * (totals and histograms, a lifetime line, the curve, the scatter's dots)
 * as it is read (one mt_sink of a streaming mt_read). The passes:
 *
 *   peak   the unfiltered peak, first, when --at peak or live:peak asks
 *          for it (mt_read_peak, lib/analyze/read.c, as for top);
 *   main   the report's figures; the live-memory curve of the selected
 *          allocations comes in the same pass when the filter decides on an
 *          allocation as it is allocated, otherwise the main pass notes the
 *          selected allocations (one bit each) and another pass draws it;
 *   plot   memory and lifetimes pictures need the trace's end (bucket
 *          width, axes) before the first point: for memory, when no
 *          allocation needs its end to be selected, the packets' headers
 *          give it (mt_trace_end_hint, checked after the pass); otherwise
 *          a first pass finds it.
 *
 * A single file is scanned by the codec alone where a pass needs no
 * stacks; several files take folded passes of the merged stream instead. A
 * pipe has no second pass: what needs one (the peak first, the plot's axes,
 * a filter that needs blocks' ends for the selection's peak) takes the
 * whole model, decided before anything is read.
 *
 * A trace whose times go back somewhere needs the whole model (its events
 * sorted): STREAM_WHOLE, found before anything is written (but lifetimes,
 * which needs no order, streams anyway); read from a pipe, stats then says
 * so and fails (the pipe cannot be read again). The commands' entry points
 * at the end take the whole model then, and under the forced route whole:
 * the commands themselves never see which way was taken.
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

/* A streaming command's answer when the trace needs the whole model after
 * all: nothing written, nothing read from a pipe. */
#define STREAM_WHOLE (-1)

/* 1 unless the route whole is forced (memtrace --route=whole: the tests
 * compare both ways). */
static int stream_usable(void)
{
    return !(mt_read_forced() & MT_ROUTE_WHOLE);
}

/* One report's passes: the filter, and what the callbacks fill. */
typedef struct run {
    const char *cmd, *path;     /* path: the first file (notes, RSS, messages) */
    const char *const *paths;   /* the files, aggregated (one merged stream) */
    size_t n_paths;
    int by_process;
    int one_file;               /* one file, not by process: the codec alone can scan it */
    int regular;                /* every file can be read again (none is a pipe) */
    mt_filter *f;
    mt_stream_filter *sf;
    mt_timedelta peak;          /* what live:peak stands for */
    char *err;                  /* a regex over its limits (usage error) */
    /* per selected allocation, in the main pass */
    uint64_t n_selected;
    mt_timedelta max_life;
    mt_stats_acc *stats;
    mt_plot_scatter *scatter;
    int lines, json, first;     /* lifetimes: print a line each */
    /* the selected ones by index in the file, when the filter needs the
     * collection (bits_write in the pass that evaluates it, bits_read
     * later) */
    uint64_t *bits;
    size_t n_bits;
    int bits_write, bits_read;
    mt_curve_acc *curve;        /* fed in file order: allocations and collections */
    progress pr;
    /* warnings held until the pass shows the trace can stream (else the
     * whole model says them) */
    int hold;
    char **held;
    size_t n_held;
} run;

static void quiet_warning(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
}

static void print_warning(void *ctx, const char *msg)
{
    run *r = ctx;
    if (r->hold) {
        char **v = realloc(r->held, (r->n_held + 1) * sizeof *v);
        if (v && (v[r->n_held] = strdup(msg))) {
            r->held = v;
            r->n_held++;
            return;
        }
        if (v)
            r->held = v;
    }
    progress_end(&r->pr);
    fprintf(stderr, "memtrace %s: warning: ", r->cmd);
    mt_text_put(stderr, msg);   /* (it may quote the trace) */
    fputc('\n', stderr);
}

/* Says the warnings held (the trace streams after all), or drops them. */
static void release_warnings(run *r, int say)
{
    for (size_t i = 0; i < r->n_held; i++) {
        if (say) {
            fprintf(stderr, "memtrace %s: warning: ", r->cmd);
            mt_text_put(stderr, r->held[i]);
            fputc('\n', stderr);
        }
        free(r->held[i]);
    }
    free(r->held);
    r->held = NULL;
    r->n_held = 0;
    r->hold = 0;
}

/* 1, 0, or -1 (r->err set, or out of memory). */
static int selected(run *r, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    if (r->bits_read)
        return seq / 64 < r->n_bits && (r->bits[seq / 64] >> (seq % 64) & 1);
    return mt_stream_filter_passes(r->sf, m, a, &r->err);
}

static int on_alloc(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    run *r = ctx;
    int p = selected(r, m, a, seq);
    if (p < 0)
        return -1;
    int64_t s = (int64_t)a->n_samples;
    mt_curve_acc_event(r->curve, a->time, s, p ? s : 0, p ? a->n_samples : 0);
    return 0;
}

static int set_bit(run *r, uint64_t seq)
{
    if (seq / 64 >= r->n_bits) {
        size_t n = r->n_bits ? r->n_bits : 1024;
        while (n <= seq / 64)
            n *= 2;
        uint64_t *b = realloc(r->bits, n * sizeof *b);
        if (!b)
            return -1;
        memset(b + r->n_bits, 0, (n - r->n_bits) * sizeof *b);
        r->bits = b;
        r->n_bits = n;
    }
    r->bits[seq / 64] |= 1ULL << (seq % 64);
    return 0;
}

static int on_fold(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    run *r = ctx;
    int p = selected(r, m, a, seq);
    if (p < 0)
        return -1;
    if (r->curve && a->collect != MT_TIME_NEVER) {
        int64_t s = (int64_t)a->n_samples;
        mt_curve_acc_event(r->curve, a->collect, -s, p ? -s : 0, 0);
    }
    if (!p)
        return 0;
    r->n_selected++;
    mt_timedelta end = a->collect == MT_TIME_NEVER ? mt_model_end(m) : a->collect;
    if (end - a->time > r->max_life)
        r->max_life = end - a->time;
    if (r->bits_write && set_bit(r, seq) < 0)
        return -1;
    if (r->stats && mt_stats_acc_add(r->stats, m, a) < 0)
        return -1;
    if (r->scatter && mt_plot_scatter_add(r->scatter, a, seq) < 0)
        return -1;
    if (r->lines) {
        if (r->json && r->first)
            fputc('[', stdout); /* not before: a failed filter prints nothing */
        mt_lifetimes_line(stdout, a, mt_model_end(m), r->json, r->first);
        r->first = 0;
    }
    return 0;
}

/* A pass that only draws r->curve (of the allocations r->bits selects):
 * the collections, as on_fold gives them. */
static int curve_fold(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    run *r = ctx;
    if (a->collect == MT_TIME_NEVER)
        return 0;
    int p = selected(r, m, a, seq);
    if (p < 0)
        return -1;
    int64_t s = (int64_t)a->n_samples;
    mt_curve_acc_event(r->curve, a->collect, -s, p ? -s : 0, 0);
    return 0;
}

enum { HOOKS_NONE, HOOKS_ALL, HOOKS_CURVE };

/* Reads the trace once, with the callbacks when hooks (else a plain folded
 * model: the end and the peak). Warnings only when loud. NULL after
 * printing why, *status set (1: input, 2: the filter). */
/* What every pass of a report reads: its traces, folded with all
 * allocations (the stream filter selects), stacks as deep as the filter
 * needs. */
static mt_read_request request(run *r, int loud)
{
    mt_read_request rq = {
        .paths = r->paths,
        .n = r->n_paths,
        .by_process = r->by_process,
        .fold = 1,
        .stream = 1,
        .live_at = MT_TIME_END,
        /* by process: whole stacks, as the whole model (a filter may name
         * the process frame) */
        .max_depth = mt_filter_uses_stacks(r->f) || r->by_process ? 0 : 1,
        .on_warning = loud ? print_warning : quiet_warning,
        .warning_ctx = r,
        .on_progress = progress_update,
        .progress_ctx = &r->pr,
    };
    return rq;
}

static mt_model *pass(run *r, int hooks, int loud, int *status)
{
    char *err = NULL;
    mt_read_request rq = request(r, loud);
    mt_sink sink = {0};
    if (hooks) {
        sink.on_done = hooks == HOOKS_CURVE ? curve_fold : on_fold;
        sink.on_alloc = r->curve ? on_alloc : NULL;
        sink.ctx = r;
        rq.sinks = &sink;
        rq.n_sinks = 1;
    }
    progress_init(&r->pr, r->cmd);
    mt_model *m = mt_read(&rq, &err);
    progress_end(&r->pr);
    if (m && hooks && mt_stream_filter_sync(r->sf, m, &r->err) < 0) {
        mt_model_free(m);
        m = NULL;
    }
    if (!m) {
        release_warnings(r, 1); /* the whole model would fail the same way */
        *status = r->err ? 2 : 1;
        fprintf(stderr, "memtrace %s: %s\n", r->cmd,
                r->err ? r->err : err ? err : "out of memory");
    }
    free(err);
    return m;
}

/* The trace's end and whether its times never decrease, by the codec
 * alone (no backtraces, no model: about as fast as reading the file), as a
 * model would find them. Returns 0, or -1 when the trace cannot be read
 * (then a model pass says why). */
static int scan_end(run *r, mt_timedelta *end, int *monotone)
{
    if (!r->one_file)
        return -1; /* several files merge into one stream: a model pass */
    mt_reader_options o = {.on_warning = quiet_warning, .skip_backtraces = 1};
    mt_reader *rd = mt_reader_open(r->path, &o, NULL);
    if (!rd)
        return -1;
    progress_init(&r->pr, r->cmd);
    mt_event ev;
    mt_timedelta last = 0;
    uint64_t n = 0;
    int rc;
    *end = 0;
    *monotone = 1;
    while ((rc = mt_reader_next(rd, &ev)) == 1) {
        if (ev.time < last)
            *monotone = 0;
        last = ev.time;
        if (ev.time > *end)
            *end = ev.time;
        if (++n % (1u << 20) == 0)
            progress_update(&r->pr, mt_reader_offset(rd), mt_reader_size(rd));
    }
    progress_end(&r->pr);
    if (rc == 0 && mt_reader_end_time(rd) > *end)
        *end = mt_reader_end_time(rd);
    mt_reader_close(rd);
    return rc < 0 ? -1 : 0;
}

/* mt_scan_events: every block into r->curve, selected when r->bits has it
 * (with bits_read; else all are); without a curve, the longest lifetime of
 * a freed block into r->max_life. */
static int scan_event(void *ctx, mt_timedelta t, uint64_t seq, uint64_t samples, int collect,
                      mt_timedelta alloc_time)
{
    run *r = ctx;
    if (!r->curve) {
        /* the lifetime scatter's axes: the longest lifetime of a freed block */
        if (collect && t - alloc_time > r->max_life)
            r->max_life = t - alloc_time;
        return 0;
    }
    int p = !r->bits_read || (seq / 64 < r->n_bits && (r->bits[seq / 64] >> (seq % 64) & 1));
    int64_t d = collect ? -(int64_t)samples : (int64_t)samples;
    mt_curve_acc_event(r->curve, t, d, p ? d : 0, p && !collect ? samples : 0);
    return 0;
}

/* A pass of mt_scan_events into a fresh r->curve of one bucket: its peak
 * (of all blocks, or of those in r->bits). 0, STREAM_WHOLE (the times go
 * back), or -1 when the trace cannot be read or out of memory (a model
 * pass then says why). */
static int scan_peak(run *r, double rate, mt_timedelta *t, int64_t *samples, mt_peak *est)
{
    mt_scan_result res;
    mt_curve_acc_free(r->curve);
    if (!(r->curve = mt_curve_acc_new(1, 1)))
        return -1;
    progress_init(&r->pr, r->cmd);
    int rc = mt_scan_events(r->path, scan_event, r, progress_update, &r->pr, &res, NULL);
    progress_end(&r->pr);
    if (rc < 0)
        return -1;
    if (!res.monotone)
        return STREAM_WHOLE;
    mt_curve *c = mt_curve_acc_result(r->curve, 1.0, rate); /* in samples */
    if (!c)
        return -1;
    *t = c->peak_filtered_time;
    *samples = (int64_t)c->peak_filtered;
    *est = c->peak_filtered_est;
    mt_curve_free(c);
    return 0;
}


/* Compiles the filter and, when it or the live time needs the peak, finds
 * it with a first pass. Returns 0, STREAM_WHOLE, or an exit status. */
static int start(run *r, const char *cmd, const stream_input *in, const char *filter, int at_peak)
{
    memset(r, 0, sizeof *r);
    r->cmd = cmd;
    r->paths = in->paths;
    r->n_paths = in->n;
    r->path = in->paths[0];
    r->by_process = in->by_process;
    r->one_file = in->n == 1 && !in->by_process;
    r->regular = mt_read_regular(in->paths, in->n);
    r->first = 1;
    for (size_t i = 0; i < in->n; i++)
        if (mt_path_is_profile(in->paths[i]))
            return report_not_profile(cmd, in->paths[i]);
    if (!(r->f = report_filter(cmd, filter)))
        return 2;
    if (at_peak || mt_filter_uses_peak(r->f)) {
        if (!mt_read_may_fold(r->paths, r->n_paths, 1))
            return STREAM_WHOLE; /* a pipe: no first pass for the peak */
        mt_read_request rq = request(r, 0);
        char *err = NULL;
        progress_init(&r->pr, r->cmd);
        int sc = mt_read_peak(&rq, &r->peak, &err);
        progress_end(&r->pr);
        if (sc == 1)
            return STREAM_WHOLE; /* times go back: only the whole model has a peak */
        if (sc < 0) {
            fprintf(stderr, "memtrace %s: %s\n", cmd, err ? err : "out of memory");
            free(err);
            return 1;
        }
    }
    if (!(r->sf = mt_stream_filter_new(r->f, r->peak))) {
        fprintf(stderr, "memtrace %s: out of memory\n", cmd);
        return 1;
    }
    return 0;
}

static void finish(run *r)
{
    mt_stream_filter_free(r->sf);
    mt_filter_free(r->f);
    mt_stats_acc_free(r->stats);
    mt_plot_scatter_free(r->scatter);
    mt_curve_acc_free(r->curve);
    free(r->bits);
    free(r->err);
    release_warnings(r, 0);
}

/* The selected allocations' peak by another pass that reads which ones are
 * selected from r->bits (the codec alone; a model pass when that fails, to
 * say why). 0, or an exit status after printing why. */
static int peak_pass(run *r, double bps, double rate, mt_stats *st)
{
    mt_timedelta t;
    int64_t samples;
    r->bits_read = 1;
    if (r->one_file && scan_peak(r, rate, &t, &samples, &st->peak_filtered) == 0) {
        mt_peak_scale(&st->peak_filtered, bps);
        st->peak_filtered_bytes = st->peak_filtered.bytes;
        st->peak_filtered_time = t;
        return 0;
    }
    int status = 1;
    if (!r->one_file) {
        /* several files: the merged stream again, folded for the curve alone */
        mt_curve_acc_free(r->curve);
        if (!(r->curve = mt_curve_acc_new(1, 1))) {
            fprintf(stderr, "memtrace %s: out of memory\n", r->cmd);
            return 1;
        }
        mt_model *m = pass(r, HOOKS_CURVE, 0, &status);
        if (!m)
            return status;
        mt_model_free(m);
        mt_curve *c = mt_curve_acc_result(r->curve, 1.0, rate); /* in samples */
        if (!c) {
            fprintf(stderr, "memtrace %s: out of memory\n", r->cmd);
            return 1;
        }
        st->peak_filtered = c->peak_filtered_est;
        mt_peak_scale(&st->peak_filtered, bps);
        st->peak_filtered_bytes = st->peak_filtered.bytes;
        st->peak_filtered_time = c->peak_filtered_time;
        mt_curve_free(c);
        return 0;
    }
    mt_model *m = pass(r, 0, 0, &status);
    if (m) {
        fprintf(stderr, "memtrace %s: %s: cannot read it again\n", r->cmd, r->path);
        mt_model_free(m);
    }
    return status;
}

static int stats_streamed(const stream_input *in, const char *filter, mt_timedelta at, int json)
{
    run r;
    int rc = start(&r, "stats", in, filter, at == MT_TIME_PEAK);
    mt_model *m = NULL;
    mt_histogram *hs = NULL, *hl = NULL;
    mt_stats st;
    if (rc)
        goto out;
    mt_timedelta live_at = at == MT_TIME_PEAK ? r.peak : at;
    int filtered = !mt_stream_filter_keeps_all(r.sf), in_pass = mt_stream_filter_at_alloc(r.sf);
    rc = 1;
    if (!(r.stats = mt_stats_acc_new(live_at)) ||
        (filtered && in_pass && !(r.curve = mt_curve_acc_new(1, 1)))) {
        fprintf(stderr, "memtrace stats: out of memory\n");
        goto out;
    }
    r.bits_write = filtered && !in_pass;
    if (r.bits_write && !r.regular) {
        rc = STREAM_WHOLE; /* a pipe: no second pass for the selection's peak */
        goto out;
    }
    r.hold = 1;
    m = pass(&r, 1, 1, &rc);
    if (m && !mt_model_peak_known(m)) {
        rc = STREAM_WHOLE;
        if (!r.regular) {
            /* the whole model would sort the events, but a pipe cannot be
             * read again */
            release_warnings(&r, 1);
            fprintf(stderr, "memtrace stats: %s: the trace's times go back somewhere: its peak "
                            "needs the whole model, and a pipe cannot be read again (give the "
                            "file, or use 'memtrace --route=whole stats')\n", r.path);
            rc = 1;
        }
        goto out;
    }
    release_warnings(&r, 1);
    if (!m)
        goto out;
    rc = 1;
    if (mt_stats_acc_finish(r.stats, m, &st, &hs, &hl) < 0) {
        fprintf(stderr, "memtrace stats: out of memory\n");
        goto out;
    }
    if (st.total.allocs != st.allocs) {
        /* the selected allocations' own peak: from the curve */
        double bps = mt_model_bytes_per_sample(m), rate = mt_model_info(m)->sample_rate;
        if (!r.curve) {
            if ((rc = peak_pass(&r, bps, rate, &st)) != 0)
                goto out;
        } else {
            mt_curve *c = mt_curve_acc_result(r.curve, bps, rate);
            if (!c) {
                fprintf(stderr, "memtrace stats: out of memory\n");
                goto out;
            }
            st.peak_filtered = c->peak_filtered_est;
            st.peak_filtered_bytes = c->peak_filtered_est.bytes;
            st.peak_filtered_time = c->peak_filtered_time;
            mt_curve_free(c);
        }
    }
    report_notes("stats", in->paths, in->n, m);
    mt_rss *rss = mt_rss_load_many(in->paths, in->n, m, NULL, NULL);
    rc = 0;
    int wrc = mt_report_stats_figures(stdout, m, &st, hs, hl, mt_model_resolve_time(m, live_at),
                                      rss, json);
    mt_rss_free(rss);
    if (wrc < 0 || fflush(stdout) != 0) {
        perror("memtrace stats: writing the report");
        rc = 1;
    }
out:
    mt_histogram_free(hs);
    mt_histogram_free(hl);
    mt_model_free(m);
    finish(&r);
    return rc;
}

static int lifetimes_streamed(const stream_input *in, const char *filter, int json)
{
    run r;
    int rc = start(&r, "lifetimes", in, filter, 0);
    if (rc)
        goto out;
    r.lines = 1;
    r.json = json;
    mt_model *m = pass(&r, 1, 1, &rc);
    if (!m)
        goto out;
    if (json)
        fputs(r.first ? "[\n]\n" : "\n]\n", stdout);
    report_notes("lifetimes", in->paths, in->n, m);
    mt_model_free(m);
    if (ferror(stdout) || fflush(stdout) != 0) {
        perror("memtrace lifetimes: writing");
        rc = 1;
    }
out:
    finish(&r);
    return rc;
}

/* Writes the picture to output ("-": stdout) with draw; exit status. */
static int write_picture(const char *output, int (*draw)(FILE *, void *), void *ctx)
{
    mt_outfile of;
    const char *why = NULL;
    FILE *out = mt_outfile_fopen(&of, output, &why);
    if (!out) {
        fprintf(stderr, "memtrace plot: %s: %s\n", output, why);
        return 1;
    }
    int w = draw(out, ctx);
    if (mt_outfile_fclose(&of, out, w < 0, &why) != 0 || w < 0) {
        fprintf(stderr, "memtrace plot: %s: cannot write the picture\n", output);
        return 1;
    }
    return 0;
}

typedef struct picture {
    run *r;
    const mt_model *m;
    const mt_plot_options *po;
    const mt_curve *curve;
    const mt_histogram *hist;
    double alloc_bytes;
    uint64_t n_allocs;
} picture;

static int draw(FILE *out, void *ctx)
{
    picture *p = ctx;
    switch (p->po->kind) {
    case MT_PLOT_MEMORY:
        return mt_plot_memory_svg(out, p->m, p->curve, p->r->n_selected != p->n_allocs, p->po);
    case MT_PLOT_SIZES: return mt_plot_sizes_svg(out, p->m, p->hist, p->alloc_bytes, p->po);
    default: return mt_plot_lifetimes_svg(out, p->m, p->r->scatter, p->r->n_selected, p->po);
    }
}

/* The steps of plot_streamed, one per kind: each works on the run r and
 * the model *m (its caller frees it), with *rc as plot_streamed has it;
 * 0 to go on to the picture, -1 to stop there with *rc. */

/* sizes: one model pass with the statistics' accumulator */
static int plot_sizes(run *r, picture *pic, mt_model **m, mt_histogram **hist, int *rc)
{
    mt_stats st;
    if (!(r->stats = mt_stats_acc_new(MT_TIME_END))) {
        fprintf(stderr, "memtrace plot: out of memory\n");
        return -1;
    }
    if (!(*m = pass(r, 1, 1, rc)))
        return -1;
    if (mt_stats_acc_finish(r->stats, *m, &st, hist, NULL) < 0) {
        fprintf(stderr, "memtrace plot: out of memory\n");
        return -1;
    }
    pic->hist = *hist;
    pic->alloc_bytes = st.total.alloc_bytes;
    return 0;
}

/* lifetimes: the axes first (the trace's end and the longest lifetime,
 * of every block: the codec alone will do), then the scatter */
static int plot_lifetimes(run *r, const mt_plot_options *po, mt_model **m, int *rc)
{
    mt_timedelta end = 0;
    mt_scan_result res;
    int scanned = 0;
    if (mt_stream_filter_keeps_all(r->sf) && r->one_file) {
        progress_init(&r->pr, r->cmd);
        scanned = mt_scan_events(r->path, scan_event, r, progress_update, &r->pr, &res,
                                 NULL) == 0;
        progress_end(&r->pr);
        end = res.end;
        if (scanned && res.n_live && end - res.first_live > r->max_life)
            r->max_life = end - res.first_live;
    }
    if (!scanned) {
        r->max_life = 0;
        if (!(*m = pass(r, 1, 0, rc)))
            return -1;
        end = mt_model_end(*m);
        mt_model_free(*m);
        *m = NULL;
    }
    if (!(r->scatter = mt_plot_scatter_new(po, end, r->max_life))) {
        fprintf(stderr, "memtrace plot: out of memory\n");
        return -1;
    }
    r->n_selected = 0;
    if (!(*m = pass(r, 1, 1, rc)))
        return -1;
    return 0;
}

/* memory, when the selection needs the blocks' ends: a model pass notes
 * it (and gives the end), then the codec alone draws the curve into n
 * buckets */
static int plot_memory_noted(run *r, size_t n, mt_model **m, int *rc)
{
    r->bits_write = 1;
    r->hold = 1;
    *m = pass(r, 1, 1, rc);
    if (*m && !mt_model_peak_known(*m)) {
        *rc = STREAM_WHOLE;
        return -1;
    }
    release_warnings(r, 1);
    if (!*m)
        return -1;
    mt_timedelta end = mt_model_end(*m);
    if (!(r->curve = mt_curve_acc_new(n, end / (mt_timedelta)n + 1))) {
        fprintf(stderr, "memtrace plot: out of memory\n");
        return -1;
    }
    r->bits_write = 0;
    r->bits_read = 1;
    mt_scan_result res;
    int sc = -1;
    if (r->one_file) {
        progress_init(&r->pr, r->cmd);
        sc = mt_scan_events(r->path, scan_event, r, progress_update, &r->pr, &res, NULL);
        progress_end(&r->pr);
    } else {
        /* several files: the merged stream again, for the curve */
        mt_model *m2 = pass(r, HOOKS_CURVE, 0, rc);
        if (!m2)
            return -1;
        *rc = 1;
        res.end = mt_model_end(m2);
        sc = 0;
        mt_model_free(m2);
    }
    if (sc < 0 || res.end != end) {
        fprintf(stderr, "memtrace plot: %s: cannot read it again\n", r->path);
        return -1;
    }
    return 0;
}

/* memory, when the selected allocations are known as they come: the end
 * first, from the packets' headers (a hint, checked after the pass) or by
 * the codec alone; then the model pass draws the curve into n buckets */
static int plot_memory_direct(run *r, size_t n, mt_model **m, int *rc)
{
    mt_timedelta end;
    int monotone;
    int hinted = r->one_file && r->regular && mt_trace_end_hint(r->path, &end) == 0;
    if (hinted) {
        monotone = 1;   /* the pass finds out */
        r->hold = 1;    /* its warnings wait for the check */
    } else if (scan_end(r, &end, &monotone) < 0) {
        if (!(*m = pass(r, 0, 0, rc)))
            return -1;
        monotone = mt_model_peak_known(*m);
        end = mt_model_end(*m);
        mt_model_free(*m);
        *m = NULL;
    }
    if (!monotone) {
        *rc = STREAM_WHOLE;
        return -1;
    }
    if (!(r->curve = mt_curve_acc_new(n, end / (mt_timedelta)n + 1))) {
        fprintf(stderr, "memtrace plot: out of memory\n");
        return -1;
    }
    if (!(*m = pass(r, 1, 1, rc)))
        return -1;
    if (hinted && (!mt_model_peak_known(*m) || mt_model_end(*m) != end)) {
        /* times that go back, or packets the reader skipped: the
         * buckets were not the whole model's */
        release_warnings(r, 0);
        *rc = STREAM_WHOLE;
        return -1;
    }
    release_warnings(r, 1);
    return 0;
}

/* memory: the end first (and which allocations are selected, when that
 * needs their collection), the curve, the RSS beside it */
static int plot_memory(run *r, const stream_input *in, mt_plot_options *po, picture *pic,
                       mt_model **m, mt_curve **curve, int *rc)
{
    size_t n = mt_plot_memory_buckets(po);
    int known = mt_stream_filter_at_alloc(r->sf);   /* the selection, as they come */
    if ((known ? plot_memory_direct(r, n, m, rc) : plot_memory_noted(r, n, m, rc)) < 0)
        return -1;
    if (!(*curve = mt_curve_acc_result(r->curve, mt_model_bytes_per_sample(*m),
                                        mt_model_info(*m)->sample_rate))) {
        fprintf(stderr, "memtrace plot: out of memory\n");
        return -1;
    }
    pic->curve = *curve;
    po->rss = mt_rss_load_many(in->paths, in->n, *m, NULL, NULL);
    return 0;
}

static int plot_streamed(const stream_input *in, const char *filter, mt_plot_options *po,
                         const char *output)
{
    run r;
    int rc = start(&r, "plot", in, filter, 0);
    mt_model *m = NULL;
    mt_curve *curve = NULL;
    mt_histogram *hist = NULL;
    picture pic = {.r = &r, .po = po};
    if (rc)
        goto out;
    if (po->kind != MT_PLOT_SIZES && !r.regular) {
        rc = STREAM_WHOLE; /* a pipe: the axes need a first pass */
        goto out;
    }
    rc = 1;
    if (po->kind == MT_PLOT_SIZES ? plot_sizes(&r, &pic, &m, &hist, &rc)
        : po->kind == MT_PLOT_LIFETIMES ? plot_lifetimes(&r, po, &m, &rc)
        : plot_memory(&r, in, po, &pic, &m, &curve, &rc))
        goto out;
    mt_model_event_counts(m, &pic.n_allocs, NULL, NULL);
    pic.m = m;
    report_notes("plot", in->paths, in->n, m);
    rc = write_picture(output, draw, &pic);
out:
    if (po->rss) {
        mt_rss_free((mt_rss *)po->rss);
        po->rss = NULL;
    }
    mt_curve_free(curve);
    mt_histogram_free(hist);
    mt_model_free(m);
    finish(&r);
    return rc;
}

/* The whole model's reports, where the trace cannot stream. */
static int stats_whole(const stream_input *in, const char *filter, mt_timedelta at, int json)
{
    mt_model *m;
    mt_filter *f;
    mt_selection *s;
    int rc = report_open_many("stats", in->paths, in->n, in->by_process, filter, at, 1, &m, &f, &s);
    if (rc)
        return rc;
    mt_rss *rss = mt_rss_load_many(in->paths, in->n, m, NULL, NULL);
    int wrc = mt_report_stats_rss(stdout, s, rss, json);
    mt_rss_free(rss);
    if (wrc < 0 || fflush(stdout) != 0) {
        perror("memtrace stats: writing the report");
        rc = 1;
    }
    report_close(m, f, s);
    return rc;
}

static int lifetimes_whole(const stream_input *in, const char *filter, int json)
{
    mt_model *m;
    mt_filter *f;
    mt_selection *s;
    int rc = report_open_many("lifetimes", in->paths, in->n, in->by_process, filter, MT_TIME_END, 1, &m, &f, &s);
    if (rc)
        return rc;
    if (mt_report_lifetimes(stdout, s, json) < 0 || fflush(stdout) != 0) {
        perror("memtrace lifetimes: writing");
        rc = 1;
    }
    report_close(m, f, s);
    return rc;
}

static int plot_whole(const stream_input *in, const char *filter, mt_plot_options *po,
                      const char *output)
{
    mt_model *m;
    mt_filter *f;
    mt_selection *s;
    int rc = report_open_many("plot", in->paths, in->n, in->by_process, filter, MT_TIME_END, 1, &m, &f, &s);
    if (rc)
        return rc;
    mt_outfile of;
    const char *why = NULL;
    FILE *out = mt_outfile_fopen(&of, output, &why);
    if (!out) {
        fprintf(stderr, "memtrace plot: %s: %s\n", output, why);
        rc = 1;
    } else {
        mt_rss *rss = po->kind == MT_PLOT_MEMORY ? mt_rss_load_many(in->paths, in->n, m, NULL, NULL) : NULL;
        po->rss = rss;
        int w = mt_plot_svg(out, s, po);
        mt_rss_free(rss);
        po->rss = NULL;
        if (mt_outfile_fclose(&of, out, w < 0, &why) != 0 || w < 0) {
            fprintf(stderr, "memtrace plot: %s: cannot write the picture\n", output);
            rc = 1;
        }
    }
    report_close(m, f, s);
    return rc;
}

int stream_stats(const stream_input *in, const char *filter, mt_timedelta at, int json)
{
    int rc = stream_usable() ? stats_streamed(in, filter, at, json) : STREAM_WHOLE;
    return rc != STREAM_WHOLE ? rc : stats_whole(in, filter, at, json);
}

int stream_lifetimes(const stream_input *in, const char *filter, int json)
{
    int rc = stream_usable() ? lifetimes_streamed(in, filter, json) : STREAM_WHOLE;
    return rc != STREAM_WHOLE ? rc : lifetimes_whole(in, filter, json);
}

int stream_plot(const stream_input *in, const char *filter, mt_plot_options *po,
                const char *output)
{
    int rc = stream_usable() ? plot_streamed(in, filter, po, output) : STREAM_WHOLE;
    return rc != STREAM_WHOLE ? rc : plot_whole(in, filter, po, output);
}
