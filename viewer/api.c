/*
 * api.c - the viewer's JSON API (see api.h and docs/viewer.md).
 *
 * Every endpoint takes the same `filter` parameter (the engine's filter
 * language, as on the command line), builds or reuses the selection for it
 * and answers one query as JSON. Selections are kept in a small cache keyed
 * by the filter's canonical text, shared by all connections (the engine's
 * objects are immutable, so queries run concurrently; only the cache itself
 * is under a lock, and entries are reference-counted so that eviction never
 * frees a selection a request is still reading). Requests that need a
 * selection another request is building wait for it instead of building it
 * again. Finished answers are kept too (the page asks the same questions
 * on every reload and from every tab), and a warm-up thread asks the first
 * page's questions as soon as the server is up.
 */
#include "api.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"

#define CACHE_SLOTS 8
#define RESP_SLOTS 64
#define RESP_MAX_BYTES (16u << 20)   /* larger answers are not kept */

struct sel_entry {
    char *key;               /* canonical filter text; NULL: free slot */
    mt_selection *sel;       /* NULL while being built */
    mt_filter *filter;
    int refs;
    int building;
    unsigned long last_use;
};

struct resp_entry {
    char *key;               /* endpoint and parameters; NULL: free slot */
    char *body;
    size_t len;
    unsigned long last_use;
};

struct vapi {
    const mt_model *model;
    char *file;
    double load_seconds;
    pthread_mutex_t lock;
    pthread_cond_t built;
    unsigned long clock;
    struct sel_entry cache[CACHE_SLOTS];
    struct resp_entry answers[RESP_SLOTS];
    pthread_t warmer;
    int warming;
};

vapi *vapi_new(const mt_model *m, const char *file, double load_seconds)
{
    vapi *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->model = m;
    a->file = strdup(file ? file : "");
    a->load_seconds = load_seconds;
    pthread_mutex_init(&a->lock, NULL);
    pthread_cond_init(&a->built, NULL);
    return a;
}

static void entry_clear(struct sel_entry *e)
{
    free(e->key);
    mt_selection_free(e->sel);
    mt_filter_free(e->filter);
    memset(e, 0, sizeof *e);
}

void vapi_free(vapi *a)
{
    if (!a)
        return;
    if (a->warming)
        pthread_join(a->warmer, NULL);
    for (int i = 0; i < CACHE_SLOTS; i++)
        entry_clear(&a->cache[i]);
    for (int i = 0; i < RESP_SLOTS; i++) {
        free(a->answers[i].key);
        free(a->answers[i].body);
    }
    pthread_cond_destroy(&a->built);
    pthread_mutex_destroy(&a->lock);
    free(a->file);
    free(a);
}

/* ------------------------------------------------------------------ */
/* Selections                                                          */

/* Find or build the selection for a parsed filter whose canonical text is
 * key (both handed over). Returns NULL only when out of memory. Release
 * with sel_release. */
static struct sel_entry *sel_get(vapi *a, mt_filter *f, char *key)
{
    pthread_mutex_lock(&a->lock);
    for (;;) {
        struct sel_entry *hit = NULL;
        for (int i = 0; i < CACHE_SLOTS; i++)
            if (a->cache[i].key && !strcmp(a->cache[i].key, key))
                hit = &a->cache[i];
        if (!hit)
            break;
        if (hit->building) {  /* another request is on it: wait */
            pthread_cond_wait(&a->built, &a->lock);
            continue;
        }
        hit->refs++;
        hit->last_use = ++a->clock;
        pthread_mutex_unlock(&a->lock);
        free(key);
        mt_filter_free(f);
        return hit;
    }
    /* a free slot, else the least recently used idle one */
    struct sel_entry *slot = NULL;
    for (int i = 0; i < CACHE_SLOTS; i++) {
        struct sel_entry *e = &a->cache[i];
        if (!e->key) {
            slot = e;
            break;
        }
        if (e->refs == 0 && !e->building && (!slot || e->last_use < slot->last_use))
            slot = e;
    }
    struct sel_entry *e = slot;
    if (slot) {
        entry_clear(slot);
        slot->key = key;
        slot->filter = f;
        slot->building = 1;
        slot->refs = 1;
        slot->last_use = ++a->clock;
    }
    pthread_mutex_unlock(&a->lock);
    if (!slot) {  /* every slot busy: a private entry for this request */
        e = calloc(1, sizeof *e);
        if (!e) {
            free(key);
            mt_filter_free(f);
            return NULL;
        }
        e->key = key;
        e->filter = f;
        e->refs = -1;
    }
    /* build outside the lock: other requests go on meanwhile */
    mt_selection *sel = mt_select(a->model, f, MT_TIME_END);
    if (!slot) {
        if (!sel) {
            entry_clear(e);
            free(e);
            return NULL;
        }
        e->sel = sel;
        return e;
    }
    pthread_mutex_lock(&a->lock);
    slot->building = 0;
    if (sel) {
        slot->sel = sel;
    } else {
        entry_clear(slot);  /* waiters retry */
        e = NULL;
    }
    pthread_cond_broadcast(&a->built);
    pthread_mutex_unlock(&a->lock);
    return e;
}

/* A kept answer for key: a malloc'd copy of its body, or NULL. */
static char *answer_get(vapi *a, const char *key, size_t *len)
{
    char *copy = NULL;
    pthread_mutex_lock(&a->lock);
    for (int i = 0; i < RESP_SLOTS; i++) {
        struct resp_entry *r = &a->answers[i];
        if (r->key && !strcmp(r->key, key)) {
            copy = malloc(r->len + 1);
            if (copy) {
                memcpy(copy, r->body, r->len + 1);
                *len = r->len;
                r->last_use = ++a->clock;
            }
            break;
        }
    }
    pthread_mutex_unlock(&a->lock);
    return copy;
}

static void answer_put(vapi *a, const char *key, const char *body, size_t len)
{
    if (len > RESP_MAX_BYTES)
        return;
    char *k = strdup(key), *b = malloc(len + 1);
    if (!k || !b) {
        free(k);
        free(b);
        return;
    }
    memcpy(b, body, len + 1);
    pthread_mutex_lock(&a->lock);
    struct resp_entry *slot = NULL;
    for (int i = 0; i < RESP_SLOTS; i++) {
        struct resp_entry *r = &a->answers[i];
        if (r->key && !strcmp(r->key, key)) {  /* raced with another request */
            slot = NULL;
            free(k);
            free(b);
            pthread_mutex_unlock(&a->lock);
            return;
        }
        if (!r->key) {
            if (!slot || slot->key)
                slot = r;
        } else if (!slot || (slot->key && r->last_use < slot->last_use)) {
            slot = r;
        }
    }
    free(slot->key);
    free(slot->body);
    slot->key = k;
    slot->body = b;
    slot->len = len;
    slot->last_use = ++a->clock;
    pthread_mutex_unlock(&a->lock);
}

static void sel_release(vapi *a, struct sel_entry *e)
{
    if (!e)
        return;
    if (e->refs < 0) {
        entry_clear(e);
        free(e);
        return;
    }
    pthread_mutex_lock(&a->lock);
    e->refs--;
    pthread_mutex_unlock(&a->lock);
}

/* ------------------------------------------------------------------ */
/* Parameters                                                          */

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

/* Samples behind a metric's value (for the sampling error). */
static uint64_t cost_samples(const mt_cost *c, mt_metric m)
{
    return (m == MT_METRIC_LIVE_BYTES || m == MT_METRIC_LIVE_OBJECTS) ? c->live_samples
                                                                      : c->samples;
}

static double secs(mt_timedelta t)
{
    return (double)t / 1e6;
}

static void put_cost(vjson *j, const char *key, const mt_cost *c)
{
    vj_key(j, key);
    vj_obj(j);
    vj_knum(j, "alloc_bytes", c->alloc_bytes);
    vj_knum(j, "alloc_objects", c->alloc_objects);
    vj_knum(j, "live_bytes", c->live_bytes);
    vj_knum(j, "live_objects", c->live_objects);
    vj_kuint(j, "samples", c->samples);
    vj_kuint(j, "live_samples", c->live_samples);
    vj_kuint(j, "allocs", c->allocs);
    vj_end_obj(j);
}

static void put_func(vjson *j, const mt_model *m, mt_func_id f)
{
    const mt_func *fn = &mt_model_funcs(m)[f];
    vj_kuint(j, "id", f);
    vj_kstr(j, "name", fn->name);
    vj_kstr(j, "file", fn->filename);
}

static void finish(vjson *j, vresp *resp)
{
    resp->body = vj_finish(j, &resp->len);
    resp->status = resp->body ? 200 : 500;
    if (!resp->body)
        vresp_error(resp, 500, "out of memory");
}

/* ------------------------------------------------------------------ */
/* Endpoints                                                           */

/* Trace facts, from cheap model accessors only (mt_query_stats sorts every
 * lifetime: too slow for the first answer of a large trace). */
static void ep_info(vapi *a, struct sel_entry *e, vjson *j)
{
    const mt_model *m = a->model;
    const mt_trace_info *ti = mt_model_info(m);
    uint64_t allocs, promotes, collects;
    mt_model_event_counts(m, &allocs, &promotes, &collects);
    mt_cost total = mt_selection_total(e->sel);
    double duration = secs(mt_model_end(m));
    vj_obj(j);
    vj_kstr(j, "file", a->file);
    vj_kstr(j, "executable", ti->executable_name);
    vj_kstr(j, "host", ti->host_name);
    vj_kuint(j, "pid", ti->pid);
    vj_kint(j, "start_time_us", ti->start_time);
    vj_kint(j, "format_version", ti->version);
    vj_knum(j, "sample_rate", ti->sample_rate);
    vj_kuint(j, "word_size", ti->word_size);
    double per_byte = ti->sample_rate * 8.0 / (ti->word_size ? ti->word_size : 8);
    vj_knum(j, "one_in_bytes", per_byte > 0 ? 1.0 / per_byte : 0);
    vj_kstr(j, "context", ti->context);
    vj_kstr(j, "runtime_params", ti->ocaml_runtime_params);
    vj_knum(j, "duration", duration);
    vj_kuint(j, "events", allocs + promotes + collects);
    vj_kuint(j, "allocs", allocs);
    vj_kuint(j, "promotes", promotes);
    vj_kuint(j, "collects", collects);
    put_cost(j, "total", &total);
    vj_knum(j, "peak_bytes", mt_model_peak_bytes(m));
    vj_knum(j, "peak_time", secs(mt_model_peak_time(m)));
    vj_knum(j, "live_at_end", total.live_bytes);  /* the selection's live time is the end */
    vj_knum(j, "alloc_rate", duration > 0 ? total.alloc_bytes / duration : 0);
    vj_knum(j, "load_seconds", a->load_seconds);
    vj_kuint(j, "model_memory", mt_model_memory(m));
    vj_end_obj(j);
}

static void ep_stats(vapi *a, struct sel_entry *e, vjson *j)
{
    mt_stats st;
    mt_query_stats(e->sel, &st);
    (void)a;
    vj_obj(j);
    vj_kstr(j, "filter", e->key);
    put_cost(j, "total", &st.total);
    vj_knum(j, "peak_bytes", st.peak_bytes);
    vj_knum(j, "peak_time", secs(st.peak_time));
    vj_knum(j, "peak_filtered_bytes", st.peak_filtered_bytes);
    vj_knum(j, "peak_filtered_time", secs(st.peak_filtered_time));
    vj_knum(j, "never_collected_bytes", st.never_collected_bytes);
    vj_knum(j, "collected_bytes", st.collected_bytes);
    vj_knum(j, "alloc_rate", st.alloc_rate);
    vj_knum(j, "mean_lifetime", st.mean_lifetime_us / 1e6);
    vj_knum(j, "median_lifetime", st.median_lifetime_us / 1e6);
    vj_end_obj(j);
}

static int ep_curve(vapi *a, struct sel_entry *e, const vreq *req, vjson *j, vresp *resp)
{
    double n, t0, t1;
    double end = secs(mt_model_end(a->model));
    if (!arg_num(req, "n", 600, 1, 8000, &n, resp) ||
        !arg_num(req, "t0", 0, 0, 1e12, &t0, resp) ||
        !arg_num(req, "t1", end, 0, 1e12, &t1, resp))
        return 0;
    if (t1 <= t0) {
        vresp_error(resp, 400, "parameter t1: must be after t0");
        return 0;
    }
    mt_curve *c = mt_query_curve(e->sel, (mt_timedelta)llround(t0 * 1e6),
                                 (mt_timedelta)llround(t1 * 1e6), (size_t)n);
    if (!c) {
        vresp_error(resp, 500, "out of memory");
        return 0;
    }
    vj_obj(j);
    vj_kstr(j, "filter", e->key);
    vj_knum(j, "t0", secs(c->t0));
    vj_knum(j, "width", secs(c->width));
    vj_knum(j, "end", end);
    vj_kuint(j, "n", c->n);
    vj_key(j, "total");
    vj_arr(j);
    for (size_t i = 0; i < c->n; i++)
        vj_num(j, c->total[i]);
    vj_end_arr(j);
    vj_key(j, "filtered");
    vj_arr(j);
    for (size_t i = 0; i < c->n; i++)
        vj_num(j, c->filtered[i]);
    vj_end_arr(j);
    vj_key(j, "filtered_alloc");
    vj_arr(j);
    for (size_t i = 0; i < c->n; i++)
        vj_num(j, c->filtered_alloc[i]);
    vj_end_arr(j);
    vj_key(j, "peak");
    vj_obj(j);
    vj_knum(j, "t", secs(mt_model_peak_time(a->model)));
    vj_knum(j, "bytes", mt_model_peak_bytes(a->model));
    vj_end_obj(j);
    vj_key(j, "filtered_peak");
    vj_obj(j);
    vj_knum(j, "t", secs(c->peak_filtered_time));
    vj_knum(j, "bytes", c->peak_filtered);
    vj_end_obj(j);
    mt_cost sel_total = mt_selection_total(e->sel);
    put_cost(j, "selected", &sel_total);  /* live_* = still live at the end */
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
static int ep_tree(vapi *a, struct sel_entry *e, const vreq *req, vjson *j, vresp *resp)
{
    mt_tree_dir dir;
    mt_metric metric;
    double min;
    if (!arg_dir(req, &dir, resp) || !arg_metric(req, &metric, resp) ||
        !arg_num(req, "min", 0.001, 0, 1, &min, resp))
        return 0;
    mt_tree *t = mt_query_tree(e->sel, dir, metric, min);
    struct funcmap fm;
    uint32_t *order = t ? malloc(t->n * sizeof *order) : NULL;
    uint32_t *pos = t ? malloc(t->n * sizeof *pos) : NULL;
    if (!t || !order || !pos || !funcmap_init(&fm, a->model)) {
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
    vj_kstr(j, "filter", e->key);
    vj_kstr(j, "dir", dir == MT_TREE_BOTTOM_UP ? "sites" : "main");
    vj_kstr(j, "metric", mt_metric_name(metric));
    vj_knum(j, "min", min);
    vj_knum(j, "total", mt_cost_get(&t->nodes[0].total, metric));
    vj_kuint(j, "total_samples", cost_samples(&t->nodes[0].total, metric));
    vj_kuint(j, "n", n);
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
    vj_end_obj(j);
    funcmap_put(j, &fm, a->model);
    vj_end_obj(j);
    funcmap_free(&fm);
    free(order);
    free(pos);
    mt_tree_free(t);
    return 1;
}

static int ep_graph(vapi *a, struct sel_entry *e, const vreq *req, vjson *j, vresp *resp)
{
    mt_metric metric;
    double min;
    if (!arg_metric(req, &metric, resp) || !arg_num(req, "min", 0.005, 0, 1, &min, resp))
        return 0;
    mt_graph *g = mt_query_graph(e->sel, metric, min);
    if (!g) {
        vresp_error(resp, 500, "out of memory");
        return 0;
    }
    vj_obj(j);
    vj_kstr(j, "filter", e->key);
    vj_kstr(j, "metric", mt_metric_name(metric));
    vj_knum(j, "min", min);
    vj_knum(j, "total", mt_cost_get(&g->total, metric));
    vj_key(j, "nodes");
    vj_arr(j);
    for (size_t i = 0; i < g->n_nodes; i++) {
        vj_obj(j);
        put_func(j, a->model, g->nodes[i].func);
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
        put_func(j, m, l[i].func);
        vj_knum(j, "v", mt_cost_get(&l[i].cost, metric));
        vj_kuint(j, "samples", cost_samples(&l[i].cost, metric));
        vj_end_obj(j);
    }
    vj_end_arr(j);
}

static int ep_function(vapi *a, struct sel_entry *e, const vreq *req, vjson *j, vresp *resp)
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
        if (*end || v >= mt_model_n_funcs(a->model)) {
            vresp_error(resp, 400, "parameter id: no such function");
            return 0;
        }
        f = (mt_func_id)v;
    } else if (name && *name) {
        if (mt_model_find_funcs(a->model, name, 1, &f, 1) == 0) {
            vresp_error(resp, 404, "no function named '%.200s'", name);
            return 0;
        }
    } else {
        vresp_error(resp, 400, "give the function as id=N or name=NAME");
        return 0;
    }
    mt_func_report *r = mt_query_func(e->sel, f, metric);
    if (!r) {
        vresp_error(resp, 500, "out of memory");
        return 0;
    }
    mt_cost total = mt_selection_total(e->sel);
    vj_obj(j);
    vj_kstr(j, "filter", e->key);
    vj_kstr(j, "metric", mt_metric_name(metric));
    vj_knum(j, "total", mt_cost_get(&total, metric));
    put_func(j, a->model, f);
    vj_knum(j, "flat", mt_cost_get(&r->flat, metric));
    vj_knum(j, "cum", mt_cost_get(&r->cum, metric));
    vj_kuint(j, "flat_samples", cost_samples(&r->flat, metric));
    vj_kuint(j, "cum_samples", cost_samples(&r->cum, metric));
    put_links(j, a->model, "callers", r->callers, r->n_callers, metric);
    put_links(j, a->model, "callees", r->callees, r->n_callees, metric);
    vj_end_obj(j);
    mt_func_report_free(r);
    return 1;
}

static void put_hist(vjson *j, const char *key, const mt_histogram *h)
{
    vj_key(j, key);
    vj_obj(j);
    const char *arrays[] = {"lo", "hi", "bytes", "count", "samples"};
    for (int k = 0; k < 5; k++) {
        vj_key(j, arrays[k]);
        vj_arr(j);
        for (size_t i = 0; i < h->n; i++) {
            switch (k) {
            case 0: vj_uint(j, h->lo[i]); break;
            case 1: vj_uint(j, h->hi[i]); break;
            case 2: vj_num(j, h->cost[i].alloc_bytes); break;
            case 3: vj_num(j, h->cost[i].alloc_objects); break;
            default: vj_uint(j, h->cost[i].samples); break;
            }
        }
        vj_end_arr(j);
    }
    if (h->kind == MT_HIST_LIFETIME)
        put_cost(j, "never_collected", &h->never_collected);
    vj_end_obj(j);
}

static int ep_hist(vapi *a, struct sel_entry *e, vjson *j, vresp *resp)
{
    (void)a;
    mt_histogram *hs = mt_query_histogram(e->sel, MT_HIST_SIZE);
    mt_histogram *hl = mt_query_histogram(e->sel, MT_HIST_LIFETIME);
    if (!hs || !hl) {
        mt_histogram_free(hs);
        mt_histogram_free(hl);
        vresp_error(resp, 500, "out of memory");
        return 0;
    }
    vj_obj(j);
    vj_kstr(j, "filter", e->key);
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
static int ep_hotspots(vapi *a, struct sel_entry *e, const vreq *req, vjson *j, vresp *resp)
{
    mt_metric metric;
    if (!arg_metric(req, &metric, resp))
        return 0;
    const mt_model *m = a->model;
    mt_graph *g = mt_query_graph(e->sel, metric, 0.001);
    if (!g) {
        vresp_error(resp, 500, "out of memory");
        return 0;
    }
    mt_cost total = mt_selection_total(e->sel);
    vj_obj(j);
    vj_kstr(j, "filter", e->key);
    vj_kstr(j, "metric", mt_metric_name(metric));
    vj_knum(j, "total", mt_cost_get(&total, metric));
    /* by flat cost: a small selection sort over the graph's nodes */
    size_t nn = g->n_nodes, want = nn < 8 ? nn : 8;
    char *used = calloc(nn + 1, 1);
    vj_key(j, "sites");
    vj_arr(j);
    for (size_t k = 0; used && k < want; k++) {
        size_t best = nn;
        for (size_t i = 0; i < nn; i++)
            if (!used[i] && (best == nn || mt_cost_get(&g->nodes[i].flat, metric) >
                                               mt_cost_get(&g->nodes[best].flat, metric)))
                best = i;
        if (best == nn || mt_cost_get(&g->nodes[best].flat, metric) <= 0)
            break;
        used[best] = 1;
        vj_obj(j);
        put_func(j, m, g->nodes[best].func);
        vj_knum(j, "v", mt_cost_get(&g->nodes[best].flat, metric));
        vj_kuint(j, "samples", cost_samples(&g->nodes[best].flat, metric));
        vj_end_obj(j);
    }
    vj_end_arr(j);
    free(used);
    /* by cumulative cost (nodes come sorted by cum) */
    vj_key(j, "functions");
    vj_arr(j);
    for (size_t i = 0; i < nn && i < 8; i++) {
        vj_obj(j);
        put_func(j, m, g->nodes[i].func);
        vj_knum(j, "v", mt_cost_get(&g->nodes[i].cum, metric));
        vj_kuint(j, "samples", cost_samples(&g->nodes[i].cum, metric));
        vj_end_obj(j);
    }
    vj_end_arr(j);
    mt_graph_free(g);

    struct top_paths tp;
    memset(&tp, 0, sizeof tp);
    tp.metric = metric;
    mt_selection_each_stack(e->sel, top_path_add, &tp);
    const mt_frame *frames = mt_model_frames(m);
    mt_frame_id buf[256];
    vj_key(j, "paths");
    vj_arr(j);
    for (size_t i = 0; i < tp.n; i++) {
        size_t depth = mt_selection_stack(e->sel, tp.node[i], buf, 256);
        if (depth > 256)
            depth = 256;
        vj_obj(j);
        vj_knum(j, "v", tp.v[i]);
        vj_kuint(j, "samples", tp.s[i]);
        vj_kbool(j, "truncated", mt_selection_stack(e->sel, tp.node[i], buf, 256) > 256);
        vj_key(j, "frames");
        vj_arr(j);
        for (size_t k = 0; k < depth; k++) {
            const mt_frame *fr = &frames[buf[k]];
            vj_obj(j);
            put_func(j, m, fr->func);
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

/* The parameters each endpoint reads besides the filter: they make up the
 * key under which its answer is kept. */
static const char *const endpoint_params[][8] = {
    {"info", NULL},
    {"filter", NULL},
    {"stats", NULL},
    {"curve", "n", "t0", "t1", NULL},
    {"tree", "dir", "metric", "min", NULL},
    {"graph", "metric", "min", NULL},
    {"function", "metric", "id", "name", NULL},
    {"hist", NULL},
    {"hotspots", "metric", NULL},
};
#define N_ENDPOINTS (sizeof endpoint_params / sizeof endpoint_params[0])

static char *answer_key(int k, const char *filter, const vreq *req)
{
    char *key = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&key, &len);
    if (!o)
        return NULL;
    fprintf(o, "%s\n%s", endpoint_params[k][0], filter);
    for (int i = 1; endpoint_params[k][i]; i++) {
        const char *v = vreq_arg(req, endpoint_params[k][i]);
        fprintf(o, "\n%s", v ? v : "");
    }
    fclose(o);
    return key;
}

void vapi_handle(void *ctx, const char *endpoint, const vreq *req, vresp *resp)
{
    vapi *a = ctx;
    size_t k = 0;
    while (k < N_ENDPOINTS && strcmp(endpoint_params[k][0], endpoint))
        k++;
    if (k == N_ENDPOINTS) {
        vresp_error(resp, 404, "no such API endpoint: /api/%.100s", endpoint);
        return;
    }
    const char *ftext = k == 0 ? "" : vreq_arg(req, "filter");
    char *err = NULL;
    mt_filter *f = mt_filter_parse(ftext ? ftext : "", &err, NULL);
    if (!f) {
        vresp_error(resp, 400, "%s", err ? err : "bad filter");
        free(err);
        return;
    }
    char *canon = mt_filter_to_string(f);
    char *key = canon ? answer_key((int)k, canon, req) : NULL;
    if (!canon || !key) {
        mt_filter_free(f);
        free(canon);
        vresp_error(resp, 500, "out of memory");
        return;
    }
    resp->body = answer_get(a, key, &resp->len);
    if (resp->body) {
        resp->status = 200;
        mt_filter_free(f);
        free(canon);
        free(key);
        return;
    }
    struct sel_entry *e = sel_get(a, f, canon);
    if (!e) {
        free(key);
        vresp_error(resp, 500, "out of memory");
        return;
    }
    vjson j;
    vj_init(&j);
    int ok = 1;
    switch (k) {
    case 0: ep_info(a, e, &j); break;
    case 1:
        vj_obj(&j);
        vj_kstr(&j, "filter", e->key);
        vj_end_obj(&j);
        break;
    case 2: ep_stats(a, e, &j); break;
    case 3: ok = ep_curve(a, e, req, &j, resp); break;
    case 4: ok = ep_tree(a, e, req, &j, resp); break;
    case 5: ok = ep_graph(a, e, req, &j, resp); break;
    case 6: ok = ep_function(a, e, req, &j, resp); break;
    case 7: ok = ep_hist(a, e, &j, resp); break;
    default: ok = ep_hotspots(a, e, req, &j, resp); break;
    }
    sel_release(a, e);
    if (ok) {
        finish(&j, resp);
        if (resp->status == 200)
            answer_put(a, key, resp->body, resp->len);
    } else {
        vj_free(&j);
    }
    free(key);
}

/* The first page's questions, asked once the server is up, so that the
 * browser finds them answered. Mirrors what app.js asks first. */
static void *warm_up(void *arg)
{
    vapi *a = arg;
    static const char *const reqs[][9] = {
        {"info", NULL},
        {"curve", "n", "1200", "filter", "", NULL},
        {"tree", "dir", "sites", "min", "0.001", "filter", "", NULL},
        {"hotspots", "filter", "", NULL},
        {"hotspots", "metric", "live", "filter", "", NULL},
    };
    for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
        vreq *r = vreq_local(reqs[i] + 1);
        if (!r)
            break;
        vresp resp = {0, NULL, NULL, 0};
        vapi_handle(a, reqs[i][0], r, &resp);
        free(resp.body);
        vreq_free_local(r);
    }
    return NULL;
}

void vapi_warm_up(vapi *a)
{
    if (pthread_create(&a->warmer, NULL, warm_up, a) == 0)
        a->warming = 1;
}
