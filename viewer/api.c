/*
 * api.c - the viewer's JSON API (see api.h and docs/viewer.md): dispatch of
 * /api/<endpoint> to the functions of endpoints.c, and the caches.
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

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "endpoints.h"
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
    char *body;              /* NULL while pending */
    size_t len;
    int pending;             /* a request is computing it: others wait */
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
    mt_rss *rss;                 /* resident memory beside the trace, or NULL */
};

vapi *vapi_new(const mt_model *m, const char *file, double load_seconds)
{
    vapi *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->model = m;
    a->file = strdup(file ? file : "");
    a->load_seconds = load_seconds;
    a->rss = file ? mt_rss_load(file, m, NULL, NULL) : NULL;   /* FILE.rss, if any */
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
    mt_rss_free(a->rss);
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

/* A kept answer for key: a malloc'd copy of its body. When there is none,
 * returns NULL and, if a slot is free for it, marks it pending for this
 * request (*claimed = 1): the request must then call answer_fill, and other
 * requests for the same key wait for it rather than compute it again. */
static char *answer_claim(vapi *a, const char *key, size_t *len, int *claimed)
{
    *claimed = 0;
    pthread_mutex_lock(&a->lock);
    for (;;) {
        struct resp_entry *hit = NULL;
        for (int i = 0; i < RESP_SLOTS; i++)
            if (a->answers[i].key && !strcmp(a->answers[i].key, key))
                hit = &a->answers[i];
        if (!hit)
            break;
        if (hit->pending) {
            pthread_cond_wait(&a->built, &a->lock);
            continue;
        }
        char *copy = malloc(hit->len + 1);
        if (copy) {
            memcpy(copy, hit->body, hit->len + 1);
            *len = hit->len;
            hit->last_use = ++a->clock;
        }
        pthread_mutex_unlock(&a->lock);
        return copy;
    }
    struct resp_entry *slot = NULL;
    for (int i = 0; i < RESP_SLOTS; i++) {
        struct resp_entry *r = &a->answers[i];
        if (!r->key) {
            slot = r;
            break;
        }
        if (!r->pending && (!slot || r->last_use < slot->last_use))
            slot = r;
    }
    char *k = slot ? strdup(key) : NULL;
    if (k) {
        free(slot->key);
        free(slot->body);
        memset(slot, 0, sizeof *slot);
        slot->key = k;
        slot->pending = 1;
        *claimed = 1;
    }
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

/* Store the answer of a claimed key (body NULL: none, e.g. an error). */
static void answer_fill(vapi *a, const char *key, const char *body, size_t len)
{
    char *b = NULL;
    if (body && len <= RESP_MAX_BYTES && (b = malloc(len + 1)) != NULL)
        memcpy(b, body, len + 1);
    pthread_mutex_lock(&a->lock);
    for (int i = 0; i < RESP_SLOTS; i++) {
        struct resp_entry *r = &a->answers[i];
        if (r->key && r->pending && !strcmp(r->key, key)) {
            if (b) {
                r->body = b;
                r->len = len;
                r->pending = 0;
                r->last_use = ++a->clock;
                b = NULL;
            } else {
                free(r->key);
                memset(r, 0, sizeof *r);
            }
            break;
        }
    }
    pthread_cond_broadcast(&a->built);
    pthread_mutex_unlock(&a->lock);
    free(b);
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
 * key under which its answer is kept. */
static const struct endpoint {
    vep_fn fn;
    const char *params[8];   /* name first */
} endpoints[] = {
    {vep_info, {"info", NULL}},
    {vep_filter, {"filter", NULL}},
    {vep_stats, {"stats", NULL}},
    {vep_curve, {"curve", "n", "t0", "t1", NULL}},
    {vep_tree, {"tree", "dir", "metric", "min", NULL}},
    {vep_graph, {"graph", "metric", "min", NULL}},
    {vep_function, {"function", "metric", "id", "name", NULL}},
    {vep_hist, {"hist", NULL}},
    {vep_hotspots, {"hotspots", "metric", "only", NULL}},
};
#define N_ENDPOINTS (sizeof endpoints / sizeof endpoints[0])

static char *answer_key(int k, const char *filter, const vreq *req)
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
    fclose(o);
    return key;
}

void vapi_handle(void *ctx, const char *endpoint, const vreq *req, vresp *resp)
{
    vapi *a = ctx;
    size_t k = 0;
    while (k < N_ENDPOINTS && strcmp(endpoints[k].params[0], endpoint))
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
    int claimed;
    resp->body = answer_claim(a, key, &resp->len, &claimed);
    if (resp->body) {
        resp->status = 200;
        mt_filter_free(f);
        free(canon);
        free(key);
        return;
    }
    struct sel_entry *e = sel_get(a, f, canon);
    if (!e) {
        if (claimed)
            answer_fill(a, key, NULL, 0);
        free(key);
        vresp_error(resp, 500, "out of memory");
        return;
    }
    vjson j;
    vj_init(&j);
    vctx cx = {a->model, e->sel, e->key, a->file, a->load_seconds, a->rss};
    int ok = endpoints[k].fn(&cx, req, &j, resp);
    sel_release(a, e);
    if (ok)
        finish(&j, resp);
    else
        vj_free(&j);
    if (claimed)
        answer_fill(a, key, ok && resp->status == 200 ? resp->body : NULL, resp->len);
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
        {"hotspots", "metric", "live", "only", "sites", "filter", "", NULL},
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
