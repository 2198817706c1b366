/*
 * leaksview.c - the Leaks tab's endpoint: the leak suspects of the
 * request's selection (mt_query_leaks, as `memtrace leaks`), each with its
 * live bytes over the whole trace for a sparkline.
 */
#include <stdlib.h>
#include <string.h>

#include "endpoints.h"
#include "memtrace/leaks.h"
#include "memtrace/present.h"

#define CURVE_POINTS 120
#define MAX_ROWS 50

/* The live bytes of each listed site at CURVE_POINTS evenly spaced times
 * over [0, end], in one pass over the selected allocations: +bytes at the
 * first point at or after the allocation, -bytes at the first point at or
 * after its free, then running sums. rows[k].frame are the sites. */
static double *site_curves(const mt_selection *s, const mt_leak_site *rows, size_t n)
{
    const mt_model *m = mt_selection_model(s);
    double *c = calloc(n * (CURVE_POINTS + 1) + 1, sizeof *c);
    if (!c)
        return NULL;
    mt_timedelta end = mt_model_end(m);
    double step = end > 0 ? (double)end / (CURVE_POINTS - 1) : 1;
    /* the listed sites by function: head[func] is 1 + the first row of
     * that function, next[row] 1 + the following one (0 ends a chain) */
    size_t nf = mt_model_n_funcs(m);
    size_t *head = calloc(nf + 1, sizeof *head), *next = calloc(n + 1, sizeof *next);
    if (!head || !next) {
        free(head);
        free(next);
        free(c);
        return NULL;
    }
    for (size_t k = n; k-- > 0;) {
        if (rows[k].frame == MT_NO_FRAME)
            continue;
        mt_func_id fn = mt_model_frames(m)[rows[k].frame].func;
        next[k] = head[fn];
        head[fn] = k + 1;
    }
    const mt_alloc *allocs = mt_model_allocs(m);
    const mt_node *nodes = mt_selection_nodes(s);
    const mt_frame *frames = mt_model_frames(m);
    double bps = mt_model_bytes_per_sample(m);
    size_t na = mt_model_n_allocs(m);
    for (size_t i = 0; i < na; i++) {
        if (!mt_selection_has(s, i))
            continue;
        mt_node_id node = mt_selection_stack_of(s, i);
        if (!node)
            continue;
        const mt_frame *f = &frames[nodes[node].frame];
        size_t k = head[f->func];   /* rows of this function: a short chain */
        while (k && frames[rows[k - 1].frame].line != f->line)
            k = next[k - 1];
        if (!k)
            continue;
        k--;
        const mt_alloc *a = &allocs[i];
        double w = (double)a->n_samples * bps;
        size_t ja = a->time <= 0 ? 0 : (size_t)((double)a->time / step + 0.999999);
        size_t jf = a->collect == MT_TIME_NEVER ? CURVE_POINTS
                    : (size_t)((double)a->collect / step + 0.999999);
        if (ja > CURVE_POINTS)
            ja = CURVE_POINTS;
        if (jf > CURVE_POINTS)
            jf = CURVE_POINTS;
        if (jf <= ja)
            continue;
        c[k * (CURVE_POINTS + 1) + ja] += w;
        c[k * (CURVE_POINTS + 1) + jf] -= w;
    }
    free(head);
    free(next);
    for (size_t k = 0; k < n; k++) {
        double run = 0;
        for (size_t j = 0; j < CURVE_POINTS; j++) {
            run += c[k * (CURVE_POINTS + 1) + j];
            c[k * (CURVE_POINTS + 1) + j] = run > 0 ? run : 0;
        }
    }
    return c;
}

int vep_leaks(const vctx *cx, const vreq *req, vjson *j, vresp *resp)
{
    const char *all = vreq_arg(req, "all");
    if (cx->fold) {
        /* a big trace read in bounded memory keeps no allocation records */
        vj_obj(j);
        vj_kstr(j, "filter", cx->filter);
        vj_kbool(j, "available", 0);
        vj_kstr(j, "reason", "leak suspects need every allocation's times, and this trace is too big "
                             "to keep them in the viewer: run `memtrace leaks` on it");
        vj_end_obj(j);
        return 1;
    }
    mt_leak_options o = {0.05, MT_TIME_NEVER};
    mt_leak_report *r = mt_query_leaks(cx->sel, &o);
    const mt_model *m = cx->model;
    vj_obj(j);
    vj_kstr(j, "filter", cx->filter);
    if (!r) {
        vj_kbool(j, "available", 0);
        vj_kstr(j, "reason", mt_model_end(m) > 0 ? "out of memory"
                                                 : "the trace spans no time: nothing can grow");
        vj_end_obj(j);
        return 1;
    }
    size_t n = all && *all ? r->n : r->n_suspects;
    if (n > MAX_ROWS)
        n = MAX_ROWS;
    double *curves = site_curves(cx->sel, r->sites, n);
    if (!curves) {
        mt_leak_report_free(r);
        vresp_error(resp, 500, "out of memory");
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
