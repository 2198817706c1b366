/*
 * api.c - the viewer's JSON API (see api.h and docs/viewer.md): dispatch of
 * /api/<endpoint> to the functions of endpoints.c, through the caches and
 * the memory budget of cache.c.
 *
 * Every endpoint takes the same `filter` parameter (the engine's filter
 * language, as on the command line), builds or reuses the selection for it
 * and answers one query as JSON. The engine's objects are immutable, so
 * queries run concurrently. Finished answers are kept (the page asks the
 * same questions on every reload and from every tab); a request that is not
 * answered from there first reserves an estimate of the memory it will use
 * (from the model's counts, per endpoint) and waits, or is refused with
 * 503, when that does not fit the budget. A warm-up thread asks the
 * first page's questions as soon as the server is up.
 */
#include "api.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "big.h"
#include "cache.h"
#include "endpoints.h"
#include "json.h"
#include "viewer.h"

enum { LOADING, READY, FAILED };

struct vapi {
    const mt_model *model;       /* NULL while loading */
    const vfold *base;           /* big traces: the unfiltered fold (model is its model) */
    size_t reread_bytes;         /* big traces: memory of reading the trace again */
    struct stat file_id;         /* big traces: the file as loaded (device, inode, size, mtime) */
    char *file;
    double load_seconds;
    size_t budget;
    vcache *cache;               /* once ready */
    pthread_mutex_t lock;        /* the loading state: */
    pthread_cond_t ready_cond;
    int state;
    uint64_t done, total;        /* bytes read so far, of the file's size */
    char *error;                 /* FAILED: why */
    struct reread {              /* big traces: filters being read (under lock) */
        const char *filter;      /* NULL: free slot */
        uint64_t done, total;
    } rereads[VAPI_REREADS_SHOWN];
    pthread_t warmer;
    int warming;
    const mt_plumbing *plumbing; /* NULL: stacks as recorded */
    mt_rss *rss;                 /* resident memory beside the trace, or NULL */
    const char *prog;            /* the warnings' prefix on stderr */
    char **warnings;             /* the loading's warnings, the first VAPI_WARNINGS_KEPT */
    size_t n_warnings, n_said;   /* kept, said (under lock; fixed once ready) */
};

void vapi_set_prog(vapi *a, const char *prog) { a->prog = prog; }

void vapi_warning(void *ctx, const char *msg)
{
    vapi *a = ctx;
    fprintf(stderr, "%s: warning: %s\n", a->prog ? a->prog : "memtrace view", msg);
    pthread_mutex_lock(&a->lock);
    a->n_said++;
    char *copy = a->n_warnings < VAPI_WARNINGS_KEPT ? strdup(msg) : NULL;
    char **v = copy ? realloc(a->warnings, (a->n_warnings + 1) * sizeof *v) : NULL;
    if (v) {
        v[a->n_warnings++] = copy;
        a->warnings = v;
    } else {
        free(copy);   /* (out of memory: said on stderr, counted among the rest) */
    }
    pthread_mutex_unlock(&a->lock);
}

void vapi_set_plumbing(vapi *a, const mt_plumbing *p) { a->plumbing = p; }

void vapi_set_rss(vapi *a, mt_rss *rss)
{
    pthread_mutex_lock(&a->lock);
    mt_rss *old = a->rss;
    a->rss = rss;
    pthread_mutex_unlock(&a->lock);
    mt_rss_free(old);
}

vapi *vapi_new_loading(const char *file)
{
    vapi *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->file = strdup(file ? file : "");
    a->budget = MT_VIEWER_DEFAULT_MEMORY;
    pthread_mutex_init(&a->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&a->ready_cond, &ca);
    pthread_condattr_destroy(&ca);
    if (!a->file) {
        vapi_free(a);
        return NULL;
    }
    return a;
}

static void aux_free(void *aux)
{
    vfold_free(aux);
}

int vapi_ready(vapi *a, const mt_model *m, const vfold *base, double load_seconds)
{
    vcache *c = vcache_new(m, a->budget);
    if (!c)
        return -1;
    vcache_set_aux_free(c, aux_free);
    /* FILE.rss, if any */
    mt_rss *rss = a->file[0] ? mt_rss_load(a->file, m, vapi_warning, a) : NULL;
    if (base && stat(a->file, &a->file_id) < 0)
        memset(&a->file_id, 0, sizeof a->file_id);
    pthread_mutex_lock(&a->lock);
    a->cache = c;
    a->rss = rss;
    a->model = m;
    a->base = base;
    a->load_seconds = load_seconds;
    a->state = READY;
    pthread_cond_broadcast(&a->ready_cond);
    pthread_mutex_unlock(&a->lock);
    return 0;
}

void vapi_set_reread_bytes(vapi *a, size_t bytes)
{
    a->reread_bytes = bytes;
}

void vapi_progress(vapi *a, uint64_t done, uint64_t total)
{
    pthread_mutex_lock(&a->lock);
    a->done = done;
    a->total = total;
    pthread_mutex_unlock(&a->lock);
}

void vapi_failed(vapi *a, const char *error)
{
    pthread_mutex_lock(&a->lock);
    free(a->error);
    a->error = strdup(error ? error : "cannot load the trace");
    a->state = FAILED;
    pthread_cond_broadcast(&a->ready_cond);
    pthread_mutex_unlock(&a->lock);
}

vapi *vapi_new(const mt_model *m, const char *file, double load_seconds)
{
    vapi *a = vapi_new_loading(file);
    if (a && vapi_ready(a, m, NULL, load_seconds) < 0) {
        vapi_free(a);
        return NULL;
    }
    return a;
}

/* Wait until the trace is loaded, at most seconds (< 0: no limit). Returns
 * the state then. */
static int wait_ready(vapi *a, int seconds)
{
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += seconds;
    pthread_mutex_lock(&a->lock);
    while (a->state == LOADING) {
        if (seconds < 0)
            pthread_cond_wait(&a->ready_cond, &a->lock);
        else if (pthread_cond_timedwait(&a->ready_cond, &a->lock, &deadline) == ETIMEDOUT)
            break;
    }
    int st = a->state;
    pthread_mutex_unlock(&a->lock);
    return st;
}

/* /api/status: how far loading is (the page shows it while it waits). */
static void answer_status(vapi *a, vresp *resp)
{
    vjson j;
    vj_init(&j);
    pthread_mutex_lock(&a->lock);
    vj_obj(&j);
    vj_kstr(&j, "state", a->state == READY ? "ready" : a->state == FAILED ? "failed" : "loading");
    vj_kuint(&j, "done", a->done);
    vj_kuint(&j, "total", a->total);
    vj_kstr(&j, "file", a->file);
    if (a->state == FAILED)
        vj_kstr(&j, "error", a->error);
    vj_key(&j, "reading");   /* big traces: the trace read again for these filters */
    vj_arr(&j);
    for (int i = 0; i < VAPI_REREADS_SHOWN; i++) {
        const struct reread *r = &a->rereads[i];
        if (!r->filter)
            continue;
        vj_obj(&j);
        vj_kstr(&j, "filter", r->filter);
        vj_kuint(&j, "done", r->done);
        vj_kuint(&j, "total", r->total);
        vj_end_obj(&j);
    }
    vj_end_arr(&j);
    vj_end_obj(&j);
    pthread_mutex_unlock(&a->lock);
    resp->body = vj_finish(&j, &resp->len);
    resp->status = 200;
    if (!resp->body)
        vresp_error(resp, 500, "out of memory");
}

/* What a selection is built from besides its filter (vcache_build_fn's ctx). */
struct sel_build {
    vapi *a;
    int raw;                     /* 1: stacks as recorded, plumbing included */
    const char *canon;           /* the filter's canonical text */
};

/* A filter's read of a big trace, shown by /api/status while it lasts. */
struct reread_ctx {
    vapi *a;
    struct reread *slot;         /* NULL: more reads than shown */
};

static void reread_progress(void *ctx, uint64_t done, uint64_t total)
{
    struct reread_ctx *r = ctx;
    if (!r->slot)
        return;
    pthread_mutex_lock(&r->a->lock);
    r->slot->done = done;
    r->slot->total = total;
    pthread_mutex_unlock(&r->a->lock);
}

static struct reread *reread_begin(vapi *a, const char *filter)
{
    struct reread *slot = NULL;
    pthread_mutex_lock(&a->lock);
    for (int i = 0; i < VAPI_REREADS_SHOWN && !slot; i++)
        if (!a->rereads[i].filter) {
            slot = &a->rereads[i];
            slot->filter = filter;
            slot->done = slot->total = 0;
        }
    pthread_mutex_unlock(&a->lock);
    return slot;
}

static void reread_end(vapi *a, struct reread *slot)
{
    if (!slot)
        return;
    pthread_mutex_lock(&a->lock);
    slot->filter = NULL;
    pthread_mutex_unlock(&a->lock);
}

/* Big traces: is the file still the one loaded? (Reading another trace
 * for a filter would answer about another program run.) */
static int same_file(void *ctx)
{
    const vapi *a = ctx;
    struct stat st;
    const struct stat *o = &a->file_id;
    return stat(a->file, &st) == 0 && st.st_dev == o->st_dev && st.st_ino == o->st_ino &&
           st.st_size == o->st_size && st.st_mtim.tv_sec == o->st_mtim.tv_sec &&
           st.st_mtim.tv_nsec == o->st_mtim.tv_nsec;
}

static mt_selection *build_selection(void *ctx, const mt_filter *f, void **aux,
                                     size_t *aux_bytes, char **err)
{
    const struct sel_build *b = ctx;
    const mt_plumbing *p = b->raw ? NULL : b->a->plumbing;
    if (!b->a->base)
        return mt_select_sites(b->a->model, f, MT_TIME_END, p, err);
    /* a big trace: the unfiltered fold, or the trace read again with the
     * filter folded in */
    if (!*b->canon)
        return mt_select_sites(b->a->model, NULL, MT_TIME_END, p, err);
    static const char changed[] =
        "the trace file changed since it was loaded: filters read it again, so restart "
        "the viewer to see the new trace";
    struct reread_ctx rc = {b->a, reread_begin(b->a, b->canon)};
    int moved;
    vfold *v = vfold_refold(b->a->base, f, same_file, (void *)b->a, reread_progress, &rc, err,
                            &moved);
    reread_end(b->a, rc.slot);
    if (moved) {
        free(*err);
        *err = strdup(changed);
        return NULL;
    }
    if (!v)
        return NULL;
    mt_selection *s = mt_select_sites(vfold_model(v), f, MT_TIME_END, p, err);
    if (!s) {
        vfold_free(v);
        return NULL;
    }
    *aux = v;
    *aux_bytes = vfold_bytes(v);
    return s;
}

void vapi_set_budget(vapi *a, size_t budget)
{
    a->budget = budget;
    if (a->cache)
        vcache_set_budget(a->cache, budget);
}

void vapi_free(vapi *a)
{
    if (!a)
        return;
    if (a->warming) {
        if (a->state == LOADING)
            vapi_failed(a, "stopped");
        pthread_join(a->warmer, NULL);
    }
    vcache_free(a->cache);
    mt_rss_free(a->rss);
    free(a->file);
    for (size_t i = 0; i < a->n_warnings; i++)
        free(a->warnings[i]);
    free(a->warnings);
    free(a->error);
    pthread_cond_destroy(&a->ready_cond);
    pthread_mutex_destroy(&a->lock);
    free(a);
}

/* ------------------------------------------------------------------ */
/* Dispatch                                                            */

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
/* The parameters each endpoint reads besides the filter: they make up the
 * key under which its answer is kept. tree: the share of a full call tree
 * the request may build, in percent (see estimate). */
static const struct endpoint {
    vep_fn fn;
    unsigned tree;
    const char *params[8];   /* name first */
} endpoints[] = {
    {vep_info, 0, {"info", NULL}},
    {vep_filter, 0, {"filter", NULL}},
    {vep_stats, 0, {"stats", NULL}},
    {vep_curve, 0, {"curve", "n", "t0", "t1", NULL}},
    {vep_tree, 100, {"tree", "dir", "metric", "min", NULL}},
    {vep_graph, 50, {"graph", "metric", "min", NULL}},
    {vep_function, 5, {"function", "metric", "id", "name", NULL}},
    {vep_hist, 0, {"hist", NULL}},
    {vep_hotspots, 35, {"hotspots", "metric", "only", NULL}},
    {vep_leaks, 0, {"leaks", "all", NULL}},
};

/* Bytes a request on endpoint k may use, from the model's counts: the
 * selection (a bit per allocation, a slot per trie node, an entry per
 * distinct stack; stats also sorts per allocation), and the share of a call
 * tree the endpoint builds: a tree has at most one node per trie node and
 * MT_TREE_MAX_NODES, and costs about four costs (the node's self and
 * total, and their copies while it is sorted and written out as JSON) and
 * 30 bytes of links per node: 350 bytes when a cost was 80 bytes. Measured
 * on traces of 200,000 and 1,000,000 call paths (bench/viewer-gen): within
 * 25% of the peak of a full tree. */
#define TREE_NODE_BYTES (30 + 4 * sizeof(mt_cost))
size_t vapi_selection_bytes(const mt_model *m)
{
    size_t allocs = mt_model_n_allocs(m), nodes = mt_model_n_nodes(m);
    return allocs / 8 + nodes * 4 + allocs * (16 + 4 + sizeof(mt_cost));
}

static size_t estimate(const vapi *a, size_t k, int empty_filter)
{
    if (k == 0)
        return 4096;  /* info: model accessors only */
    size_t nodes = mt_model_n_nodes(a->model);
    size_t sel = vapi_selection_bytes(a->model);
    size_t tree_nodes = nodes < MT_TREE_MAX_NODES ? nodes : MT_TREE_MAX_NODES;
    size_t tree = tree_nodes * TREE_NODE_BYTES / 100 * endpoints[k].tree;
    /* a big trace read again with a filter (the Leaks tab: with any
     * filter): another folded model */
    size_t reread = 0;
    if (a->base && (!empty_filter || endpoints[k].fn == vep_leaks)) {
        reread = mt_model_memory(a->model);
        if (a->reread_bytes > reread)
            reread = a->reread_bytes;
        /* at most half the budget: the answers from the loaded model must
         * go on while the trace is read (a read bigger than that goes over) */
        if (a->budget && reread > a->budget / 2)
            reread = a->budget / 2;
    }
    return sel + tree + reread + 65536;
}
#define N_ENDPOINTS (sizeof endpoints / sizeof endpoints[0])

static char *answer_key(int k, const char *filter, const vreq *req, int raw)
{
    char *key = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&key, &len);
    if (!o)
        return NULL;
    fprintf(o, "%s\n%s", endpoints[k].params[0], filter);
    for (int i = 1; endpoints[k].params[i]; i++) {
        const char *v = vreq_arg(req, endpoints[k].params[i]);
        fprintf(o, "\n%s", v ? v : "");
    }
    fprintf(o, "\nraw=%d", raw);
    fclose(o);
    return key;
}

void vapi_handle(void *ctx, const char *endpoint, const vreq *req, vresp *resp)
{
    vapi *a = ctx;
    if (!strcmp(endpoint, "status")) {
        answer_status(a, resp);
        return;
    }
    /* while the trace loads, requests wait for it (the page polls status) */
    int st = wait_ready(a, VAPI_LOAD_WAIT_SECONDS);
    if (st != READY) {
        if (st == FAILED) {
            vresp_error(resp, 500, "%s", a->error);
            return;
        }
        vresp_error(resp, 503, "still loading the trace; see /api/status");
        resp->retry_after = 2;
        return;
    }
    size_t k = 0;
    while (k < N_ENDPOINTS && strcmp(endpoints[k].params[0], endpoint))
        k++;
    if (k == N_ENDPOINTS) {
        vresp_error(resp, 404, "no such API endpoint: /api/%.100s", endpoint);
        return;
    }
    if (a->model && mt_model_profile(a->model) &&
        (!strcmp(endpoint, "stats") || !strcmp(endpoint, "curve") || !strcmp(endpoint, "hist") ||
         !strcmp(endpoint, "leaks"))) {
        /* a pprof profile: per-stack totals only (docs/profiles-input.md) */
        vresp_error(resp, 409, "%.300s is a pprof profile: it holds no times nor allocations: "
                    "this view (%s) needs a trace", a->file ? a->file : "the file", endpoint);
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
    /* raw=1: the stacks as recorded, allocation plumbing included */
    const char *rawarg = k == 0 ? NULL : vreq_arg(req, "raw");
    if (rawarg && *rawarg && strcmp(rawarg, "0") && strcmp(rawarg, "1")) {
        mt_filter_free(f);
        vresp_error(resp, 400, "parameter raw: use 1 (stacks as recorded) or 0");
        return;
    }
    int raw = rawarg && !strcmp(rawarg, "1") && a->plumbing;
    char *canon = mt_filter_to_string(f);
    char *key = canon ? answer_key((int)k, canon, req, raw) : NULL;
    char *skey = NULL; /* the selection's cache key */
    if (!canon || !key || asprintf(&skey, "%s%s", canon, raw ? "\n(raw)" : "") < 0) {
        mt_filter_free(f);
        free(canon);
        free(key);
        vresp_error(resp, 500, "out of memory");
        return;
    }
    int claimed;
    resp->body = vcache_answer_claim(a->cache, key, &resp->len, &claimed);
    if (resp->body) {
        resp->status = 200;
        mt_filter_free(f);
        free(canon);
        free(skey);
        free(key);
        return;
    }
    size_t need = estimate(a, k, !*canon);
    if (vapi_reserve(a, need, resp) < 0) {
        if (claimed)
            vcache_answer_fill(a->cache, key, NULL, 0);
        mt_filter_free(f);
        free(canon);
        free(skey);
        free(key);
        return;
    }
    char *serr = NULL;
    struct sel_build sb = {a, raw, canon};
    vcache_sel *e = vcache_sel_get(a->cache, f, skey, build_selection, &sb, &serr);
    if (!e) {
        vcache_done(a->cache, need);
        if (claimed)
            vcache_answer_fill(a->cache, key, NULL, 0);
        free(key);
        free(canon);
        if (serr)
            vresp_error(resp, 400, "%s", serr);
        else
            vresp_error(resp, 500, "out of memory");
        free(serr);
        return;
    }
    vjson j;
    vj_init(&j);
    const mt_selection *sel = vcache_sel_selection(e);
    const vfold *fold = a->base ? vcache_sel_aux(e) : NULL;
    if (a->base && !fold)
        fold = a->base;
    vctx cx = {mt_selection_model(sel), sel, canon, a->file, a->load_seconds, a->rss, fold, a->base,
               (const char *const *)a->warnings, a->n_warnings, a->n_said};
    int ok = endpoints[k].fn(&cx, req, &j, resp);
    vcache_sel_release(a->cache, e);
    if (ok)
        finish(&j, resp);
    else
        vj_free(&j);
    if (claimed)
        vcache_answer_fill(a->cache, key, ok && resp->status == 200 ? resp->body : NULL,
                           resp->len);
    free(key);
    free(canon);
    vcache_done(a->cache, need);
}

int vapi_reserve(vapi *a, size_t bytes, vresp *resp)
{
    const char *why = NULL;
    if (wait_ready(a, VAPI_LOAD_WAIT_SECONDS) != READY) {
        vresp_error(resp, 503, "still loading the trace; see /api/status");
        resp->retry_after = 2;
        return -1;
    }
    if (vcache_admit(a->cache, bytes, &why) == 0)
        return 0;
    vresp_error(resp, 503, "server busy: %s (a budget of %zu MB, see --memory); "
                           "try again in %d s",
                why, vcache_budget(a->cache) >> 20, VCACHE_RETRY_AFTER);
    resp->retry_after = VCACHE_RETRY_AFTER;
    return -1;
}

void vapi_release(vapi *a, size_t bytes)
{
    vcache_done(a->cache, bytes);
}

/* The first page's questions, asked once the server is up, so that the
 * browser finds them answered. Mirrors what app.js asks first. */
static void *warm_up(void *arg)
{
    vapi *a = arg;
    if (wait_ready(a, -1) != READY)
        return NULL;
    static const char *const reqs[][9] = {
        {"info", NULL},
        {"curve", "n", "1200", "filter", "", NULL},
        {"tree", "dir", "sites", "min", "0.001", "filter", "", NULL},
        {"hotspots", "filter", "", NULL},
        {"hotspots", "metric", "live", "only", "sites", "filter", "", NULL},
    };
    for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
        vreq *r = vreq_local(reqs[i] + 1);
        if (!r)
            break;
        vresp resp = {0};
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
