/*
 * endpoints.c - the viewer's API endpoints: each runs one analysis-engine
 * query on a selection and writes the answer as JSON (fields documented in
 * docs/viewer.md). Caching and dispatch live in api.c.
 */
#include "endpoints.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/present.h"

/* ------------------------------------------------------------------ */
/* Parameters and helpers                                              */

/* A number parameter within [lo, hi]; absent -> def. Returns 0 and fills
 * resp with 400 when malformed. */
static int arg_num(const vreq *req, const char *name, double def, double lo, double hi,
                   double *out, vresp *resp)
{
    const char *s = vreq_arg(req, name);
    if (!s || !*s) {
        *out = def;
        return 1;
    }
    char *end;
    double v = strtod(s, &end);
    if (*end || !isfinite(v) || v < lo || v > hi) {
        vresp_error(resp, 400, "parameter %s: expected a number between %g and %g", name, lo, hi);
        return 0;
    }
    *out = v;
    return 1;
}

static int arg_metric(const vreq *req, mt_metric *out, vresp *resp)
{
    const char *s = vreq_arg(req, "metric");
    if (!s || !*s) {
        *out = MT_METRIC_ALLOC_BYTES;
        return 1;
    }
    int m = mt_metric_parse(s);
    if (m < 0) {
        vresp_error(resp, 400, "parameter metric: unknown metric (use alloc, count, live, "
                               "live_objects or samples)");
        return 0;
    }
    *out = (mt_metric)m;
    return 1;
}

/* Samples behind a metric's value (for the sampling error, which the page
 * takes as 1.96 / sqrt(samples)). A block count weighs its samples
 * unequally (docs/estimates.md): its effective samples, count^2 / variance,
 * rounded (at least 1), give its own error; an exact count (rate 1) its
 * samples. */
static uint64_t cost_samples(const mt_cost *c, mt_metric m)
{
    if (m == MT_METRIC_ALLOC_OBJECTS || m == MT_METRIC_LIVE_OBJECTS ||
        m == MT_METRIC_TEMP_OBJECTS) {
        double rse = mt_cost_rse(c, m);
        if (rse > 0 && mt_cost_get(c, m) > 0) {
            double k = 1 / (rse * rse);
            return k < 1 ? 1 : k > 1e18 ? (uint64_t)1e18 : (uint64_t)(k + 0.5);
        }
    }
    return mt_cost_samples(c, m);
}

static double secs(mt_timedelta t)
{
    return (double)t / 1e6;
}

/* A peak's estimate (mt_peak) as "estimate", "lo", "hi", "sd" and
 * "curve_max" in the object being written. */
static void put_peak_est(vjson *j, const mt_peak *p)
{
    vj_knum(j, "estimate", p->bytes);
    vj_knum(j, "lo", p->lo);
    vj_knum(j, "hi", p->hi);
    vj_knum(j, "sd", p->sd);
    vj_knum(j, "curve_max", p->curve_max);
}

static void put_cost(vjson *j, const char *key, const mt_cost *c)
{
    vj_key(j, key);
    vj_cost(j, c);
}

void vep_put_func(vjson *j, const mt_model *m, mt_func_id f)
{
    const mt_func *fn = &mt_model_funcs(m)[f];
    vj_kuint(j, "id", f);
    vj_kstr(j, "name", fn->name);
    char shortname[1024];
    vj_kstr(j, "short", mt_display_name(shortname, sizeof shortname, fn->name, 0));
    vj_kstr(j, "file", fn->filename);
}

/* The engine's queries, or for a big trace their answers from the fold's
 * summaries (big.h). */
static void query_stats(const vctx *cx, mt_stats *st)
{
    if (cx->fold)
        vfold_stats(cx->fold, cx->base, cx->sel, st);
    else
        mt_query_stats(cx->sel, st);
}

static mt_curve *query_curve(const vctx *cx, mt_timedelta t0, mt_timedelta t1, size_t n)
{
    if (cx->fold)
        return vfold_curve(cx->fold, cx->base, t0, t1, n);
    return mt_query_curve(cx->sel, t0, t1, n);
}

static mt_histogram *query_histogram(const vctx *cx, mt_hist_kind kind)
{
    if (cx->fold)
        return vfold_histogram(cx->fold, kind);
    return mt_query_histogram(cx->sel, kind);
}

int vep_info(const vctx *cx, const vreq *req, vjson *j, vresp *resp)
{
    (void)req;
    (void)resp;
    const mt_model *m = cx->model;
    const mt_trace_info *ti = mt_model_info(m);
    uint64_t allocs, promotes, collects;
    mt_model_event_counts(m, &allocs, &promotes, &collects);
    mt_cost total = mt_selection_total(cx->sel);
    double duration = secs(mt_model_end(m));
    vj_obj(j);
    vj_kstr(j, "file", cx->file);
    vj_kstr(j, "executable", ti->executable_name);
    vj_kstr(j, "host", ti->host_name);
    vj_kuint(j, "pid", ti->pid);
    vj_kint(j, "start_time_us", ti->start_time);
    vj_kint(j, "format_version", ti->version);
    vj_knum(j, "sample_rate", ti->sample_rate);
    vj_kuint(j, "word_size", ti->word_size);
    vj_knum(j, "one_in_bytes", mt_model_scale(m)->bytes_per_sample);
    vj_kstr(j, "context", ti->context);
    vj_kstr(j, "profile", mt_model_profile_kind(m)); /* a pprof profile: what kind; null for a trace */
    vj_kbool(j, "verdicts", mt_model_scan(m, NULL));
    /* a zero from no sample (the lost bytes, docs/leaks.md): the most it hides at 95% */
    vj_knum(j, "unsampled_upper95_bytes", mt_unsampled_upper(m, 0.95));
    vj_kstr(j, "runtime_params", ti->ocaml_runtime_params);
    vj_knum(j, "duration", duration);
    vj_kuint(j, "events", allocs + promotes + collects);
    vj_kuint(j, "allocs", allocs);
    vj_kuint(j, "promotes", promotes);
    vj_kuint(j, "collects", collects);
    put_cost(j, "total", &total);
    mt_peak pk;
    mt_model_peak(m, &pk);
    vj_knum(j, "peak_bytes", pk.bytes);   /* the estimate (docs/estimates.md) */
    vj_knum(j, "peak_time", secs(mt_model_peak_time(m)));
    vj_key(j, "peak");
    vj_obj(j);
    put_peak_est(j, &pk);
    vj_end_obj(j);
    vj_knum(j, "live_at_end", total.live_bytes);  /* the selection's live time is the end */
    vj_knum(j, "alloc_rate", duration > 0 ? total.alloc_bytes / duration : 0);
    vj_knum(j, "load_seconds", cx->load_seconds);
    vj_kuint(j, "model_memory", mt_model_memory(m));
    vj_kbool(j, "folded", cx->base != NULL);  /* big trace: downsampled curve, filters re-read */
    vj_key(j, "warnings");   /* the loading's, as the viewer's stderr says them */
    vj_arr(j);
    for (size_t i = 0; i < cx->n_warnings; i++)
        vj_str(j, cx->warnings[i]);
    if (cx->n_said > cx->n_warnings) {
        char more[96];
        snprintf(more, sizeof more, "and %zu more warnings (the viewer's stderr has them all)",
                 cx->n_said - cx->n_warnings);
        vj_str(j, more);
    }
    vj_end_arr(j);
    vj_end_obj(j);
    return 1;
}

int vep_stats(const vctx *cx, const vreq *req, vjson *j, vresp *resp)
{
    (void)req;
    (void)resp;
    mt_stats st;
    query_stats(cx, &st);
    vj_obj(j);
    vj_kstr(j, "filter", cx->filter);
    put_cost(j, "total", &st.total);
    vj_knum(j, "peak_bytes", st.peak_bytes);
    vj_knum(j, "peak_time", secs(st.peak_time));
    vj_knum(j, "peak_filtered_bytes", st.peak_filtered_bytes);
    vj_knum(j, "peak_filtered_time", secs(st.peak_filtered_time));
    vj_key(j, "peak");
    vj_obj(j);
    put_peak_est(j, &st.peak);
    vj_end_obj(j);
    vj_key(j, "peak_filtered");
    vj_obj(j);
    put_peak_est(j, &st.peak_filtered);
    vj_end_obj(j);
    vj_knum(j, "never_collected_bytes", st.never_collected_bytes);
    vj_knum(j, "collected_bytes", st.collected_bytes);
    vj_knum(j, "alloc_rate", st.alloc_rate);
    vj_knum(j, "mean_lifetime", st.mean_lifetime_us / 1e6);
    vj_knum(j, "median_lifetime", st.median_lifetime_us / 1e6);
    vj_end_obj(j);
    return 1;
}

/* The resident-memory ledger's readings (docs/rss.md) within [t0, t1]
 * seconds and the one before: the rows that do not come from the samples,
 * as "ledger": {t, alloc (free but resident and metadata), stack, mod,
 * file (with shared memory), own}; an empty t without readings. */
static void put_ledger(vjson *j, const mt_rss *r, double t0, double t1)
{
    size_t lo = 0, hi;
    while (lo < r->nl && secs(r->l[lo].time) < t0)
        lo++;
    if (lo > 0)
        lo--;
    for (hi = lo; hi < r->nl && secs(r->l[hi].time) <= t1; hi++)
        ;
    static const char *const keys[] = {"t", "alloc", "stack", "mod", "file", "own"};
    vj_key(j, "ledger");
    vj_obj(j);
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        vj_key(j, keys[k]);
        vj_arr(j);
        for (size_t i = lo; i < hi; i++) {
            const mt_rss_reading *x = &r->l[i];
            double v = k == 0 ? secs(x->time)
                       : k == 1 ? (double)(x->a_free > 0 ? x->a_free : 0) + (double)(x->a_meta > 0 ? x->a_meta : 0)
                       : k == 2 ? (double)x->stack
                       : k == 3 ? (double)x->mod
                       : k == 4 ? (double)x->file + (double)x->shm
                                : (double)x->own;
            vj_num(j, v > 0 || k == 0 ? v : 0);
        }
        vj_end_arr(j);
    }
    vj_end_obj(j);
}

/* Resident-memory samples within [t0, t1] seconds, with the one just
 * before t0 so that the line starts at the chart's edge; at most about
 * 4 * n of them (evenly thinned). */
static void put_rss(vjson *j, const mt_rss *r, double t0, double t1, double n)
{
    vj_key(j, "rss");
    if (!r) {
        vj_null(j);
        return;
    }
    size_t lo = 0, hi = 0;
    while (lo < r->n && secs(r->p[lo].time) < t0)
        lo++;
    if (lo > 0)
        lo--;
    hi = lo;
    while (hi < r->n && secs(r->p[hi].time) <= t1)
        hi++;
    if (hi < r->n)
        hi++;
    size_t count = hi - lo, step = 1, max = (size_t)(4 * n) + 2;
    while (count / step > max)
        step++;
    vj_obj(j);
    vj_knum(j, "peak", (double)r->peak_rss);
    vj_knum(j, "peak_t", secs(r->peak_time));
    vj_key(j, "t");
    vj_arr(j);
    for (size_t i = lo; i < hi; i += step)
        vj_num(j, secs(r->p[i].time));
    vj_end_arr(j);
    vj_key(j, "bytes");
    vj_arr(j);
    for (size_t i = lo; i < hi; i += step)
        vj_num(j, (double)r->p[i].rss);
    vj_end_arr(j);
    put_ledger(j, r, t0, t1);
    vj_end_obj(j);
}

int vep_curve(const vctx *cx, const vreq *req, vjson *j, vresp *resp)
{
    double n, t0, t1;
    double end = secs(mt_model_end(cx->model));
    if (!arg_num(req, "n", 600, 1, 8000, &n, resp) ||
        !arg_num(req, "t0", 0, 0, 1e12, &t0, resp) ||
        !arg_num(req, "t1", end, 0, 1e12, &t1, resp))
        return 0;
    if (!vreq_arg(req, "t1") && t1 <= t0)
        t1 = t0 + 1e-6;  /* a trace of one instant still gets a curve */
    if (t1 <= t0) {
        vresp_error(resp, 400, "parameter t1: must be after t0");
        return 0;
    }
    mt_curve *c = query_curve(cx, (mt_timedelta)llround(t0 * 1e6),
                                 (mt_timedelta)llround(t1 * 1e6), (size_t)n);
    if (!c) {
        vresp_error(resp, 500, "out of memory");
        return 0;
    }
    vj_obj(j);
    vj_kstr(j, "filter", cx->filter);
    vj_knum(j, "t0", secs(c->t0));
    vj_knum(j, "width", secs(c->width));
    vj_knum(j, "end", end);
    vj_kuint(j, "n", c->n);
    vj_knums(j, "total", c->total, c->n);
    vj_knums(j, "filtered", c->filtered, c->n);
    vj_knums(j, "filtered_alloc", c->filtered_alloc, c->n);
    vj_key(j, "peak");
    vj_obj(j);
    vj_knum(j, "t", secs(mt_model_peak_time(cx->model)));
    vj_knum(j, "bytes", mt_model_peak_bytes(cx->model));   /* the curve's highest */
    mt_peak pk;
    mt_model_peak(cx->model, &pk);
    put_peak_est(j, &pk);
    vj_end_obj(j);
    vj_key(j, "filtered_peak");
    vj_obj(j);
    vj_knum(j, "t", secs(c->peak_filtered_time));
    vj_knum(j, "bytes", c->peak_filtered);
    put_peak_est(j, &c->peak_filtered_est);
    vj_end_obj(j);
    mt_cost sel_total = mt_selection_total(cx->sel);
    put_cost(j, "selected", &sel_total);  /* live_* = still live at the end */
    put_rss(j, cx->rss, t0, t1, n);
    /* What made the selected allocations: bytes allocated per kind. */
    mt_stats st;
    query_stats(cx, &st);
    vj_key(j, "selected_by_kind");
    vj_obj(j);
    for (unsigned src = 0; src < 3; src++)
        if (st.by_source[src].allocs)
            vj_knum(j, mt_source_kind_name(cx->model, src), st.by_source[src].alloc_bytes);
    vj_end_obj(j);
    vj_end_obj(j);
    mt_curve_free(c);
    return 1;
}

/* Local numbering of the functions an answer mentions. */
struct funcmap {
    uint32_t *local;     /* per model function: local index + 1, 0: unseen */
    mt_func_id *ids;     /* local -> model id */
    size_t n;
};

static int funcmap_init(struct funcmap *fm, const mt_model *m)
{
    size_t nf = mt_model_n_funcs(m);
    fm->local = calloc(nf + 1, sizeof *fm->local);
    fm->ids = malloc((nf + 1) * sizeof *fm->ids);
    fm->n = 0;
    return fm->local && fm->ids;
}

static uint32_t funcmap_get(struct funcmap *fm, mt_func_id f)
{
    if (!fm->local[f]) {
        fm->ids[fm->n] = f;
        fm->local[f] = (uint32_t)++fm->n;
    }
    return fm->local[f] - 1;
}

static void funcmap_put(vjson *j, const struct funcmap *fm, const mt_model *m)
{
    const mt_func *funcs = mt_model_funcs(m);
    vj_key(j, "funcs");
    vj_obj(j);
    vj_key(j, "id");
    vj_arr(j);
    for (size_t i = 0; i < fm->n; i++)
        vj_uint(j, fm->ids[i]);
    vj_end_arr(j);
    vj_key(j, "name");
    vj_arr(j);
    for (size_t i = 0; i < fm->n; i++)
        vj_str(j, funcs[fm->ids[i]].name);
    vj_end_arr(j);
    vj_key(j, "short");   /* display names (mt_name_simplify) */
    vj_arr(j);
    for (size_t i = 0; i < fm->n; i++) {
        char shortname[1024];
        vj_str(j, mt_display_name(shortname, sizeof shortname, funcs[fm->ids[i]].name, 0));
    }
    vj_end_arr(j);
    vj_key(j, "file");
    vj_arr(j);
    for (size_t i = 0; i < fm->n; i++)
        vj_str(j, funcs[fm->ids[i]].filename);
    vj_end_arr(j);
    vj_end_obj(j);
}

static void funcmap_free(struct funcmap *fm)
{
    free(fm->local);
    free(fm->ids);
}

static int arg_dir(const vreq *req, mt_tree_dir *dir, vresp *resp)
{
    const char *d = vreq_arg(req, "dir");
    if (!d || !*d || !strcmp(d, "sites"))
        *dir = MT_TREE_BOTTOM_UP;
    else if (!strcmp(d, "main"))
        *dir = MT_TREE_TOP_DOWN;
    else {
        vresp_error(resp, 400, "parameter dir: use sites or main");
        return 0;
    }
    return 1;
}

/* The call tree in depth-first order, as columns: f (local function index,
 * -1 for the root), p (parent's position), v (metric), s (samples). */
int vep_tree(const vctx *cx, const vreq *req, vjson *j, vresp *resp)
{
    mt_tree_dir dir;
    mt_metric metric;
    double min;
    if (!arg_dir(req, &dir, resp) || !arg_metric(req, &metric, resp) ||
        !arg_num(req, "min", 0.001, 0, 1, &min, resp))
        return 0;
    mt_tree *t = mt_query_tree(cx->sel, dir, metric, min);
    struct funcmap fm;
    uint32_t *order = t ? malloc(t->n * sizeof *order) : NULL;
    uint32_t *pos = t ? malloc(t->n * sizeof *pos) : NULL;
    if (!t || !order || !pos || !funcmap_init(&fm, cx->model)) {
        mt_tree_free(t);
        free(order);
        free(pos);
        vresp_error(resp, 500, "out of memory");
        return 0;
    }
    /* Pre-order walk with an explicit stack (trees can be deep). */
    size_t n = 0;
    uint32_t *stack = malloc((t->n + 1) * sizeof *stack);
    size_t sp = 0;
    if (!stack) {
        mt_tree_free(t);
        free(order);
        free(pos);
        funcmap_free(&fm);
        vresp_error(resp, 500, "out of memory");
        return 0;
    }
    stack[sp++] = 0;
    while (sp) {
        uint32_t v = stack[--sp];
        pos[v] = (uint32_t)n;
        order[n++] = v;
        /* push children in reverse so the first child comes out first */
        size_t base = sp;
        for (uint32_t c = t->nodes[v].first_child; c; c = t->nodes[c].next_sibling)
            stack[sp++] = c;
        for (size_t lo = base, hi = sp; hi > lo + 1; lo++, hi--) {
            uint32_t tmp = stack[lo];
            stack[lo] = stack[hi - 1];
            stack[hi - 1] = tmp;
        }
    }
    free(stack);

    vj_obj(j);
    vj_kstr(j, "filter", cx->filter);
    vj_kstr(j, "dir", dir == MT_TREE_BOTTOM_UP ? "sites" : "main");
    vj_kstr(j, "metric", mt_metric_name(metric));
    vj_knum(j, "min", min);
    vj_knum(j, "total", mt_cost_get(&t->nodes[0].total, metric));
    vj_kuint(j, "total_samples", cost_samples(&t->nodes[0].total, metric));
    vj_kuint(j, "n", n);
    vj_kbool(j, "truncated", t->truncated != 0);  /* cut at MT_TREE_MAX_NODES */
    vj_kuint(j, "max_nodes", MT_TREE_MAX_NODES);
    vj_key(j, "nodes");
    vj_obj(j);
    vj_key(j, "f");
    vj_arr(j);
    for (size_t i = 0; i < n; i++)
        vj_int(j, order[i] == 0 ? -1 : (int64_t)funcmap_get(&fm, t->nodes[order[i]].func));
    vj_end_arr(j);
    vj_key(j, "p");
    vj_arr(j);
    for (size_t i = 0; i < n; i++)
        vj_int(j, order[i] == 0 ? -1 : (int64_t)pos[t->nodes[order[i]].parent]);
    vj_end_arr(j);
    vj_key(j, "v");
    vj_arr(j);
    for (size_t i = 0; i < n; i++)
        vj_num(j, mt_cost_get(&t->nodes[order[i]].total, metric));
    vj_end_arr(j);
    vj_key(j, "s");
    vj_arr(j);
    for (size_t i = 0; i < n; i++)
        vj_uint(j, cost_samples(&t->nodes[order[i]].total, metric));
    vj_end_arr(j);
    vj_key(j, "tmp");  /* temporary blocks (freed within MT_TEMPORARY_US), estimated */
    vj_arr(j);
    for (size_t i = 0; i < n; i++)
        vj_num(j, t->nodes[order[i]].total.temp_objects);
    vj_end_arr(j);
    vj_end_obj(j);
    funcmap_put(j, &fm, cx->model);
    vj_end_obj(j);
    funcmap_free(&fm);
    free(order);
    free(pos);
    mt_tree_free(t);
    return 1;
}

int vep_graph(const vctx *cx, const vreq *req, vjson *j, vresp *resp)
{
    mt_metric metric;
    double min;
    if (!arg_metric(req, &metric, resp) || !arg_num(req, "min", 0.005, 0, 1, &min, resp))
        return 0;
    mt_graph *g = mt_query_graph(cx->sel, metric, min);
    if (!g) {
        vresp_error(resp, 500, "out of memory");
        return 0;
    }
    vj_obj(j);
    vj_kstr(j, "filter", cx->filter);
    vj_kstr(j, "metric", mt_metric_name(metric));
    vj_knum(j, "min", min);
    vj_knum(j, "total", mt_cost_get(&g->total, metric));
    vj_key(j, "nodes");
    vj_arr(j);
    for (size_t i = 0; i < g->n_nodes; i++) {
        vj_obj(j);
        vep_put_func(j, cx->model, g->nodes[i].func);
        vj_knum(j, "flat", mt_cost_get(&g->nodes[i].flat, metric));
        vj_knum(j, "cum", mt_cost_get(&g->nodes[i].cum, metric));
        vj_kuint(j, "samples", cost_samples(&g->nodes[i].cum, metric));
        vj_end_obj(j);
    }
    vj_end_arr(j);
    vj_key(j, "edges");
    vj_arr(j);
    for (size_t i = 0; i < g->n_edges; i++) {
        vj_obj(j);
        vj_kuint(j, "from", g->edges[i].caller);
        vj_kuint(j, "to", g->edges[i].callee);
        vj_knum(j, "v", mt_cost_get(&g->edges[i].cost, metric));
        vj_end_obj(j);
    }
    vj_end_arr(j);
    vj_end_obj(j);
    mt_graph_free(g);
    return 1;
}

static void put_links(vjson *j, const mt_model *m, const char *key, const mt_func_link *l,
                      size_t n, mt_metric metric)
{
    vj_key(j, key);
    vj_arr(j);
    for (size_t i = 0; i < n && i < 200; i++) {
        vj_obj(j);
        vep_put_func(j, m, l[i].func);
        vj_knum(j, "v", mt_cost_get(&l[i].cost, metric));
        vj_kuint(j, "samples", cost_samples(&l[i].cost, metric));
        vj_end_obj(j);
    }
    vj_end_arr(j);
}

int vep_function(const vctx *cx, const vreq *req, vjson *j, vresp *resp)
{
    mt_metric metric;
    if (!arg_metric(req, &metric, resp))
        return 0;
    const char *ids = vreq_arg(req, "id");
    const char *name = vreq_arg(req, "name");
    mt_func_id f;
    if (ids && *ids) {
        char *end;
        unsigned long long v = strtoull(ids, &end, 10);
        if (*end || v >= mt_model_n_funcs(cx->model)) {
            vresp_error(resp, 400, "parameter id: no such function");
            return 0;
        }
        f = (mt_func_id)v;
    } else if (name && *name) {
        if (mt_model_find_funcs(cx->model, name, 1, &f, 1) == 0) {
            vresp_error(resp, 404, "no function named '%.200s'", name);
            return 0;
        }
    } else {
        vresp_error(resp, 400, "give the function as id=N or name=NAME");
        return 0;
    }
    mt_func_report *r = mt_query_func(cx->sel, f, metric);
    if (!r) {
        vresp_error(resp, 500, "out of memory");
        return 0;
    }
    mt_cost total = mt_selection_total(cx->sel);
    vj_obj(j);
    vj_kstr(j, "filter", cx->filter);
    vj_kstr(j, "metric", mt_metric_name(metric));
    vj_knum(j, "total", mt_cost_get(&total, metric));
    vep_put_func(j, cx->model, f);
    vj_knum(j, "flat", mt_cost_get(&r->flat, metric));
    vj_knum(j, "cum", mt_cost_get(&r->cum, metric));
    vj_kuint(j, "flat_samples", cost_samples(&r->flat, metric));
    vj_kuint(j, "cum_samples", cost_samples(&r->cum, metric));
    put_links(j, cx->model, "callers", r->callers, r->n_callers, metric);
    put_links(j, cx->model, "callees", r->callees, r->n_callees, metric);
    size_t nv = 0;
    mt_func_link *via = mt_query_func_vias(cx->sel, f, metric, &nv);
    if (via)  /* the allocation plumbing its own allocations went through */
        put_links(j, cx->model, "via", via, nv, metric);
    free(via);
    vj_end_obj(j);
    mt_func_report_free(r);
    return 1;
}

static void put_hist(vjson *j, const char *key, const mt_histogram *h)
{
    vj_key(j, key);
    vj_obj(j);
    /* count_se: each count's own standard error (docs/estimates.md) */
    const char *arrays[] = {"lo", "hi", "bytes", "count", "samples", "count_se"};
    for (int k = 0; k < 6; k++) {
        vj_key(j, arrays[k]);
        vj_arr(j);
        for (size_t i = 0; i < h->n; i++) {
            switch (k) {
            case 0: vj_uint(j, h->lo[i]); break;
            case 1: vj_uint(j, h->hi[i]); break;
            case 2: vj_num(j, h->cost[i].alloc_bytes); break;
            case 3: vj_num(j, h->cost[i].alloc_objects); break;
            case 4: vj_uint(j, h->cost[i].samples); break;
            default: vj_num(j, sqrt(h->cost[i].alloc_objects_var)); break;
            }
        }
        vj_end_arr(j);
    }
    if (h->kind == MT_HIST_LIFETIME)
        put_cost(j, "never_collected", &h->never_collected);
    vj_end_obj(j);
}

int vep_hist(const vctx *cx, const vreq *req, vjson *j, vresp *resp)
{
    (void)req;
    mt_histogram *hs = query_histogram(cx, MT_HIST_SIZE);
    mt_histogram *hl = query_histogram(cx, MT_HIST_LIFETIME);
    if (!hs || !hl) {
        mt_histogram_free(hs);
        mt_histogram_free(hl);
        vresp_error(resp, 500, "out of memory");
        return 0;
    }
    vj_obj(j);
    vj_kstr(j, "filter", cx->filter);
    put_hist(j, "size", hs);
    put_hist(j, "lifetime", hl);
    vj_end_obj(j);
    mt_histogram_free(hs);
    mt_histogram_free(hl);
    return 1;
}

/* Heaviest distinct stacks, kept sorted (descending) in a small array. */
#define TOP_PATHS 8
struct top_paths {
    mt_metric metric;
    size_t n;
    mt_node_id node[TOP_PATHS];
    double v[TOP_PATHS];
    uint64_t s[TOP_PATHS];
};

static int top_path_add(void *ctx, mt_node_id node, const mt_cost *cost)
{
    struct top_paths *tp = ctx;
    double v = mt_cost_get(cost, tp->metric);
    if (tp->n == TOP_PATHS && v <= tp->v[TOP_PATHS - 1])
        return 0;
    size_t i = tp->n < TOP_PATHS ? tp->n++ : TOP_PATHS - 1;
    while (i > 0 && tp->v[i - 1] < v) {
        tp->v[i] = tp->v[i - 1];
        tp->node[i] = tp->node[i - 1];
        tp->s[i] = tp->s[i - 1];
        i--;
    }
    tp->v[i] = v;
    tp->node[i] = node;
    tp->s[i] = cost_samples(cost, tp->metric);
    return 0;
}

/* Points of interest: heaviest allocating functions, heaviest functions
 * including callees, heaviest complete call paths. */
int vep_hotspots(const vctx *cx, const vreq *req, vjson *j, vresp *resp)
{
    mt_metric metric;
    if (!arg_metric(req, &metric, resp))
        return 0;
    const char *only = vreq_arg(req, "only");
    int sites_only = only && !strcmp(only, "sites");
    if (only && *only && !sites_only) {
        vresp_error(resp, 400, "parameter only: use sites");
        return 0;
    }
    const mt_model *m = cx->model;
    /* allocation sites: the bottom-up tree's first level (cheap) */
    mt_tree *t = mt_query_tree(cx->sel, MT_TREE_BOTTOM_UP, metric, 0.001);
    /* functions with their callees: the call graph (costs more on traces
     * with millions of distinct stacks, hence only=sites) */
    mt_graph *g = sites_only ? NULL : mt_query_graph(cx->sel, metric, 0.001);
    if (!t || (!sites_only && !g)) {
        mt_tree_free(t);
        mt_graph_free(g);
        vresp_error(resp, 500, "out of memory");
        return 0;
    }
    mt_cost total = mt_selection_total(cx->sel);
    vj_obj(j);
    vj_kstr(j, "filter", cx->filter);
    vj_kstr(j, "metric", mt_metric_name(metric));
    vj_knum(j, "total", mt_cost_get(&total, metric));
    vj_key(j, "sites");
    vj_arr(j);
    int shown = 0;
    for (uint32_t c = t->nodes[0].first_child; c && shown < 8; c = t->nodes[c].next_sibling) {
        double v = mt_cost_get(&t->nodes[c].total, metric);
        if (v <= 0)
            break;
        vj_obj(j);
        vep_put_func(j, m, t->nodes[c].func);
        vj_knum(j, "v", v);
        vj_kuint(j, "samples", cost_samples(&t->nodes[c].total, metric));
        vj_end_obj(j);
        shown++;
    }
    vj_end_arr(j);
    mt_tree_free(t);
    if (sites_only) {
        vj_end_obj(j);
        return 1;
    }
    size_t nn = g->n_nodes;
    /* by cumulative cost (nodes come sorted by cum) */
    vj_key(j, "functions");
    vj_arr(j);
    for (size_t i = 0; i < nn && i < 8; i++) {
        vj_obj(j);
        vep_put_func(j, m, g->nodes[i].func);
        vj_knum(j, "v", mt_cost_get(&g->nodes[i].cum, metric));
        vj_kuint(j, "samples", cost_samples(&g->nodes[i].cum, metric));
        vj_end_obj(j);
    }
    vj_end_arr(j);
    mt_graph_free(g);

    struct top_paths tp;
    memset(&tp, 0, sizeof tp);
    tp.metric = metric;
    mt_selection_each_stack(cx->sel, top_path_add, &tp);
    const mt_frame *frames = mt_model_frames(m);
    mt_frame_id buf[256];
    vj_key(j, "paths");
    vj_arr(j);
    for (size_t i = 0; i < tp.n; i++) {
        size_t depth = mt_selection_stack(cx->sel, tp.node[i], buf, 256);
        if (depth > 256)
            depth = 256;
        vj_obj(j);
        vj_knum(j, "v", tp.v[i]);
        vj_kuint(j, "samples", tp.s[i]);
        vj_kbool(j, "truncated", mt_selection_stack(cx->sel, tp.node[i], buf, 256) > 256);
        vj_key(j, "frames");
        vj_arr(j);
        for (size_t k = 0; k < depth; k++) {
            const mt_frame *fr = &frames[buf[k]];
            vj_obj(j);
            vep_put_func(j, m, fr->func);
            vj_kuint(j, "line", fr->line);
            vj_end_obj(j);
        }
        vj_end_arr(j);
        vj_end_obj(j);
    }
    vj_end_arr(j);
    vj_end_obj(j);
    return 1;
}


/* The filter in canonical form: how the page checks what the user typed. */
int vep_filter(const vctx *cx, const vreq *req, vjson *j, vresp *resp)
{
    (void)req;
    (void)resp;
    vj_obj(j);
    vj_kstr(j, "filter", cx->filter);
    vj_end_obj(j);
    return 1;
}
