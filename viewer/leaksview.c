/*
 * leaksview.c - the Leaks tab's endpoint: the leak suspects of the
 * request's selection (mt_query_leaks, as `memtrace leaks`), each with its
 * live bytes over the whole trace for a sparkline; on a folded trace
 * (big.c) from two reads of it, one into leakfold's collector
 * (mt_query_leaks_fold, as `memtrace leaks` on a big trace), one for the
 * listed sites' sparklines.
 */
#include <stdlib.h>
#include <string.h>

#include "endpoints.h"
#include "memtrace/leaks.h"
#include "memtrace/present.h"

#define CURVE_POINTS 120
#define MAX_ROWS 50

/* The listed sites by function: head[func] is 1 + the first row of that
 * function, next[row] 1 + the following one (0 ends a chain). */
typedef struct site_rows {
    size_t *head, *next;
    const mt_frame *frames;
    const mt_leak_site *rows;
} site_rows;

static int site_rows_init(site_rows *sr, const mt_model *m, const mt_leak_site *rows, size_t n)
{
    sr->frames = mt_model_frames(m);
    sr->rows = rows;
    sr->head = calloc(mt_model_n_funcs(m) + 1, sizeof *sr->head);
    sr->next = calloc(n + 1, sizeof *sr->next);
    if (!sr->head || !sr->next) {
        free(sr->head);
        free(sr->next);
        return -1;
    }
    for (size_t k = n; k-- > 0;) {
        if (rows[k].frame == MT_NO_FRAME)
            continue;
        mt_func_id fn = sr->frames[rows[k].frame].func;
        sr->next[k] = sr->head[fn];
        sr->head[fn] = k + 1;
    }
    return 0;
}

static void site_rows_free(site_rows *sr)
{
    free(sr->head);
    free(sr->next);
}

/* The row of the selection's stack node (a site listed by function and
 * line), or -1. */
static long site_row(const site_rows *sr, const mt_selection *s, mt_node_id node)
{
    if (!node)
        return -1;
    const mt_frame *f = &sr->frames[mt_selection_nodes(s)[node].frame];
    size_t k = sr->head[f->func];   /* rows of this function: a short chain */
    while (k && sr->frames[sr->rows[k - 1].frame].line != f->line)
        k = sr->next[k - 1];
    return (long)k - 1;
}

/* The live bytes of each listed site at CURVE_POINTS evenly spaced times
 * over [0, end]: +bytes at the first point at or after an allocation,
 * -bytes at the first point at or after its free (curve_add), then running
 * sums (curve_sum). */
typedef struct site_curves {
    double *c;
    double step, bps;
    const long *row_of;      /* folded: the row of each model node, or -1 */
    size_t n_nodes;
} site_curves;

static void curve_add(const site_curves *sc, long k, const mt_alloc *a)
{
    double w = (double)a->n_samples * sc->bps;
    size_t ja = a->time <= 0 ? 0 : (size_t)((double)a->time / sc->step + 0.999999);
    size_t jf = a->collect == MT_TIME_NEVER ? CURVE_POINTS
                : (size_t)((double)a->collect / sc->step + 0.999999);
    if (ja > CURVE_POINTS)
        ja = CURVE_POINTS;
    if (jf > CURVE_POINTS)
        jf = CURVE_POINTS;
    if (jf <= ja)
        return;
    sc->c[(size_t)k * (CURVE_POINTS + 1) + ja] += w;
    sc->c[(size_t)k * (CURVE_POINTS + 1) + jf] -= w;
}

static void curve_sum(const site_curves *sc, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        double run = 0;
        for (size_t j = 0; j < CURVE_POINTS; j++) {
            run += sc->c[k * (CURVE_POINTS + 1) + j];
            sc->c[k * (CURVE_POINTS + 1) + j] = run > 0 ? run : 0;
        }
    }
}

static int curve_new(site_curves *sc, const mt_model *m, size_t n)
{
    mt_timedelta end = mt_model_end(m);
    sc->step = end > 0 ? (double)end / (CURVE_POINTS - 1) : 1;
    sc->bps = mt_model_bytes_per_sample(m);
    sc->c = calloc(n * (CURVE_POINTS + 1) + 1, sizeof *sc->c);
    return sc->c ? 0 : -1;
}

/* The whole model: one pass over the selected allocations. */
static double *curves_whole(const mt_selection *s, const mt_leak_site *rows, size_t n)
{
    const mt_model *m = mt_selection_model(s);
    site_curves sc = {0};
    site_rows sr;
    if (curve_new(&sc, m, n) < 0)
        return NULL;
    if (site_rows_init(&sr, m, rows, n) < 0) {
        free(sc.c);
        return NULL;
    }
    const mt_alloc *allocs = mt_model_allocs(m);
    size_t na = mt_model_n_allocs(m);
    for (size_t i = 0; i < na; i++) {
        if (!mt_selection_has(s, i))
            continue;
        long k = site_row(&sr, s, mt_selection_stack_of(s, i));
        if (k >= 0)
            curve_add(&sc, k, &allocs[i]);
    }
    site_rows_free(&sr);
    curve_sum(&sc, n);
    return sc.c;
}

/* A folded trace: the selected allocations as a read of the trace gives
 * them (vfold_read: the fold's stack nodes). */
static int curve_done(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    (void)m;
    (void)seq;
    const site_curves *sc = ctx;
    if (a->stack < sc->n_nodes && sc->row_of[a->stack] >= 0)
        curve_add(sc, sc->row_of[a->stack], a);
    return 0;
}

static double *curves_folded(const vctx *cx, const mt_filter *f, const mt_leak_site *rows,
                             size_t n, char **err)
{
    const mt_selection *s = cx->sel;
    site_curves sc = {0};
    site_rows sr;
    long *row_of = NULL;
    sc.n_nodes = mt_model_n_nodes(cx->model);
    if (curve_new(&sc, cx->model, n) < 0)
        return NULL;
    if (site_rows_init(&sr, cx->model, rows, n) < 0) {
        free(sc.c);
        return NULL;
    }
    if (!(row_of = malloc((sc.n_nodes ? sc.n_nodes : 1) * sizeof *row_of))) {
        site_rows_free(&sr);
        free(sc.c);
        return NULL;
    }
    for (size_t i = 0; i < sc.n_nodes; i++)
        row_of[i] = site_row(&sr, s, mt_selection_node_of(s, (mt_node_id)i));
    site_rows_free(&sr);
    sc.row_of = row_of;
    mt_sink sink = {.on_done = curve_done, .ctx = &sc};
    mt_model *m = vfold_read(cx->base, f, &sink, 1, 1, err);   /* the selected ones alone */
    free(row_of);
    if (!m) {
        free(sc.c);
        return NULL;
    }
    mt_model_free(m);
    curve_sum(&sc, n);
    return sc.c;
}

/* A folded trace's suspects: a read of the trace into leakfold's
 * collector, then its test on the fold's selection (what `memtrace
 * leaks` does). NULL with *err, or with *err NULL: the window is empty or
 * out of memory. */
static mt_leak_report *leaks_folded(const vctx *cx, const mt_filter *f,
                                    const mt_leak_options *o, char **err)
{
    mt_leak_fold *lf = mt_leak_fold_new(mt_model_end(cx->model), o);
    if (!lf)
        return NULL;
    mt_sink sink = {.on_done = mt_leak_fold_alloc, .on_reset = mt_leak_fold_reset, .ctx = lf};
    mt_model *m = vfold_read(cx->base, f, &sink, 1, 0, err);
    mt_leak_report *r = m ? mt_query_leaks_fold(cx->sel, lf, o) : NULL;
    mt_model_free(m);
    mt_leak_fold_free(lf);
    return r;
}

int vep_leaks(const vctx *cx, const vreq *req, vjson *j, vresp *resp)
{
    const char *all = vreq_arg(req, "all");
    mt_leak_options o = {0.05, MT_TIME_NEVER};
    mt_filter *f = NULL;
    char *err = NULL;
    if (cx->fold && !(f = mt_filter_parse(cx->filter, &err, NULL))) {
        vresp_error(resp, 500, "%s", err ? err : "out of memory");
        free(err);
        return 0;
    }
    mt_leak_report *r = cx->fold ? leaks_folded(cx, f, &o, &err) : mt_query_leaks(cx->sel, &o);
    const mt_model *m = cx->model;
    if (!r && err) {
        vresp_error(resp, 500, "%s", err);
        free(err);
        mt_filter_free(f);
        return 0;
    }
    vj_obj(j);
    vj_kstr(j, "filter", cx->filter);
    if (!r) {
        vj_kbool(j, "available", 0);
        vj_kstr(j, "reason", mt_model_end(m) > 0 ? "out of memory"
                                                 : "the trace spans no time: nothing can grow");
        vj_end_obj(j);
        mt_filter_free(f);
        return 1;
    }
    size_t n = all && *all ? r->n : r->n_suspects;
    if (n > MAX_ROWS)
        n = MAX_ROWS;
    double *curves = cx->fold ? curves_folded(cx, f, r->sites, n, &err)
                              : curves_whole(cx->sel, r->sites, n);
    mt_filter_free(f);
    if (!curves) {
        mt_leak_report_free(r);
        vresp_error(resp, 500, "%s", err ? err : "out of memory");
        free(err);
        return 0;
    }
    vj_kbool(j, "available", 1);
    vj_knum(j, "from", (double)r->from / 1e6);
    vj_knum(j, "to", (double)r->to / 1e6);
    vj_knum(j, "alpha", r->alpha);
    vj_kuint(j, "n_sites", r->n_sites);
    vj_kuint(j, "n_tested", r->n_tested);
    vj_kuint(j, "n_suspects", r->n_suspects);
    vj_knum(j, "min_growth", r->min_growth);
    vj_knum(j, "bytes_per_sample", mt_model_bytes_per_sample(m));
    vj_key(j, "sites");
    vj_arr(j);
    for (size_t k = 0; k < n; k++) {
        const mt_leak_site *e = &r->sites[k];
        vj_obj(j);
        if (e->frame == MT_NO_FRAME) {
            vj_kstr(j, "name", "(no stack)");
            vj_kstr(j, "short", "(no stack)");
            vj_kstr(j, "file", "");
            vj_kuint(j, "line", 0);
        } else {
            const mt_frame *f = &mt_model_frames(m)[e->frame];
            vep_put_func(j, m, f->func);
            vj_kuint(j, "line", f->line);
        }
        vj_kbool(j, "suspect", e->suspect);
        vj_kbool(j, "tested", e->tested);
        vj_knum(j, "growth", e->growth);
        vj_knum(j, "growth_se", e->growth_se);
        vj_knum(j, "p_adj", e->p_adj);
        vj_knum(j, "live_end", e->live_end);
        vj_knum(j, "kept", e->kept);
        vj_kuint(j, "samples", e->samples);
        vj_knums(j, "curve", curves + k * (CURVE_POINTS + 1), CURVE_POINTS);
        vj_end_obj(j);
    }
    vj_end_arr(j);
    vj_end_obj(j);
    free(curves);
    mt_leak_report_free(r);
    return 1;
}
