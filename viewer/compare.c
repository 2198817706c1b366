/*
 * compare.c - the viewer's compare mode (`memtrace view BASE NEW`, or
 * `memtrace view --windows A B TRACE`): three endpoints of its own on top
 * of the ordinary API of the NEW trace (which keeps answering everything
 * else), and the serving loop for two models.
 *
 *   /api/compare_info    the two sides' names, one trace or two, default windows
 *   /api/compare         memtrace diff as JSON (filter, by, at, key, a, b, alpha;
 *                        sort=size|significance, limit: entries sent, default 5000;
 *                        raw=1: plumbing kept in the sites, as with diff --raw)
 *   /api/compare_curves  both live-memory curves (filter, n)
 *
 * Both count against the memory budget of the NEW trace's API (--memory,
 * cache.h): each reserves, before it starts, an estimate from the models'
 * counts (its selections with their per-node tables; for a diff also its
 * tables and an upper bound of its JSON, computed once per model from the
 * names of every allocation stack), and waits or gets 503 as the other
 * endpoints do.
 */
#include "compare.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "memtrace/compare.h"
#include "memtrace/present.h"
#include "server.h"

/* What a diff of a model can cost at most, from its allocation stacks (a
 * filter only removes entries): entries, bytes of their JSON per key, the
 * largest entry's, and the memory of the path tables. */
typedef struct dbound {
    size_t nodes;
    size_t entries[3], json[3], max_entry[3];    /* by mt_diff_key */
} dbound;

typedef struct vcmp {
    vapi *inner;
    const mt_model *base, *new_;
    const char *base_file, *new_file;
    const char *wa, *wb;     /* one trace: the default windows */
    const mt_plumbing *plumbing; /* skipped in the sites, as in memtrace diff; NULL: none */
    dbound bb, bn;           /* base, new */
} vcmp;

#define ENTRY_JSON_BYTES 420     /* an entry's numbers and keys */
#define ENTRY_BYTES 320          /* an entry in the diff's tables, its sort */
#define PATH_NODE_BYTES 48       /* path tables per trie node and side */

static size_t sat_add(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static size_t sat_mul(size_t a, size_t b)
{
    return b && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}

/* The bound of m's diffs: every distinct allocation stack is an entry at
 * most once; a path's name is the names of its frames, joined. */
static int diff_bound(const mt_model *m, dbound *b)
{
    memset(b, 0, sizeof *b);
    size_t nn = mt_model_n_nodes(m), na = mt_model_n_allocs(m), nf = mt_model_n_funcs(m);
    const mt_node *nodes = mt_model_nodes(m);
    const mt_frame *frames = mt_model_frames(m);
    const mt_func *funcs = mt_model_funcs(m);
    const mt_alloc *allocs = mt_model_allocs(m);
    size_t nfr = mt_model_n_frames(m);
    unsigned char *used = calloc(nn ? nn : 1, 1);
    unsigned char *fr_used = calloc(nfr ? nfr : 1, 1), *fn_used = calloc(nf ? nf : 1, 1);
    size_t *plen = malloc((nn ? nn : 1) * sizeof *plen);
    size_t *fname = malloc((nf ? nf : 1) * sizeof *fname), *ffile = malloc((nf ? nf : 1) * sizeof *ffile);
    if (!used || !plen || !fname || !ffile || !fr_used || !fn_used) {
        free(used), free(plen), free(fname), free(ffile), free(fr_used), free(fn_used);
        return -1;
    }
    for (size_t f = 0; f < nf; f++) {
        const char *n = funcs[f].name ? funcs[f].name : "", *fl = funcs[f].filename ? funcs[f].filename : "";
        fname[f] = mt_json_escaped_len(n, strlen(n));
        ffile[f] = mt_json_escaped_len(fl, strlen(fl));
    }
    for (size_t i = 0; i < na; i++)
        if (allocs[i].stack < nn)
            used[allocs[i].stack] = 1;
    b->nodes = nn;
    for (size_t n = 0; n < nn; n++) {
        size_t fn = 16, fl = 0;   /* node 0: "(no stack)" */
        if (n > 0) {
            mt_func_id f = frames[nodes[n].frame].func;
            fn = f < nf ? fname[f] : 16;
            fl = f < nf ? ffile[f] : 0;
            mt_node_id p = nodes[n].parent;
            plen[n] = sat_add(p < n ? sat_add(plen[p], p ? 1 : 0) : 0, fn);
        } else {
            plen[n] = fn;
        }
        if (!used[n])
            continue;
        /* an entry per distinct path; per distinct innermost frame (site:
         * "name (file:line)") or function ("name"); each also gives its
         * function and file */
        int first[3] = {1, 1, 1};
        if (n > 0) {
            mt_frame_id fr = nodes[n].frame;
            mt_func_id f = fr < nfr ? frames[fr].func : 0;
            first[0] = fr < nfr && !fr_used[fr];
            first[1] = f < nf && !fn_used[f];
            if (fr < nfr)
                fr_used[fr] = 1;
            if (f < nf)
                fn_used[f] = 1;
        }
        size_t site = sat_add(sat_mul(sat_add(fn, fl), 2), ENTRY_JSON_BYTES + 32);
        size_t path = sat_add(sat_add(plen[n], sat_add(fn, fl)), ENTRY_JSON_BYTES);
        size_t e[3] = {site, site, path};
        for (int k = 0; k < 3; k++) {
            if (!first[k])
                continue;
            b->entries[k]++;
            b->json[k] = sat_add(b->json[k], e[k]);
            if (e[k] > b->max_entry[k])
                b->max_entry[k] = e[k];
        }
    }
    free(used), free(plen), free(fname), free(ffile), free(fr_used), free(fn_used);
    return 0;
}

/* The reservation of a diff by key with at most limit entries sent. */
static size_t diff_estimate(const vcmp *c, mt_diff_key key, size_t limit)
{
    int two = c->base != c->new_;
    size_t sel = vapi_selection_bytes(c->base);
    if (two)
        sel = sat_add(sel, vapi_selection_bytes(c->new_));
    size_t entries = sat_add(c->bb.entries[key], two ? c->bn.entries[key] : 0);
    size_t nodes = sat_add(c->bb.nodes, two ? c->bn.nodes : 0);
    size_t json = sat_add(c->bb.json[key], two ? c->bn.json[key] : 0);
    size_t maxe = c->bb.max_entry[key] > c->bn.max_entry[key] ? c->bb.max_entry[key]
                                                               : c->bn.max_entry[key];
    if (sat_mul(maxe, limit) < json)
        json = sat_mul(maxe, limit);
    /* the JSON in a memory stream (up to twice its size while it grows) */
    size_t tables = sat_add(sat_mul(entries, ENTRY_BYTES),
                            key == MT_DIFF_PATH ? sat_mul(nodes, PATH_NODE_BYTES) : 0);
    return sat_add(sat_add(sel, tables), sat_add(sat_mul(json, 2), 65536));
}

static void json_str(FILE *o, const char *s)
{
    mt_json_string(o, s ? s : "");
}

/* Close the memory stream and hand its buffer to the answer. */
static void take(FILE *o, char **buf, size_t *len, vresp *resp)
{
    if (fclose(o) != 0 || !*buf) {
        free(*buf);
        vresp_error(resp, 500, "out of memory");
        return;
    }
    resp->status = 200;
    resp->body = *buf;
    resp->len = *len;
}

static void info(const vcmp *c, vresp *resp)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    if (!o) {
        vresp_error(resp, 500, "out of memory");
        return;
    }
    fputs("{\"base\":", o);
    json_str(o, c->base_file);
    fputs(",\"new\":", o);
    json_str(o, c->new_file);
    fprintf(o, ",\"same_trace\":%s,\"a\":", c->base == c->new_ ? "true" : "false");
    json_str(o, c->wa ? c->wa : "");
    fputs(",\"b\":", o);
    json_str(o, c->wb ? c->wb : "");
    fprintf(o, ",\"base_end_us\":%lld,\"new_end_us\":%lld}", (long long)mt_model_end(c->base),
            (long long)mt_model_end(c->new_));
    take(o, &buf, &len, resp);
}

/* What one side of /api/compare_curves holds at once: a selection of the
 * whole model made for its own (vapi_selection_bytes: its bits and the
 * allocations' costs) and its per-node tables: the map, order and slot of
 * each trie node and a cost per distinct stack, which the shared estimate
 * leaves to the cached selections of the other endpoints (measured: a
 * trace of 114,000 allocations and 100,000 call paths took twice that
 * estimate, so four requests passed a 64 MB budget by 5x). */
static size_t curve_side_bytes(const mt_model *m)
{
    return sat_add(vapi_selection_bytes(m),
                   sat_mul(mt_model_n_nodes(m), 24 + sizeof(mt_cost) + sizeof(uint32_t)));
}

static void curves(const vcmp *c, const vreq *req, vresp *resp)
{
    const char *ftext = vreq_arg(req, "filter");
    const char *nt = vreq_arg(req, "n");
    long n = nt ? strtol(nt, NULL, 10) : 300;
    if (n < 2 || n > 4000)
        n = 300;
    char *err = NULL;
    mt_filter *f = mt_filter_parse(ftext ? ftext : "", &err, NULL);
    if (!f) {
        vresp_error(resp, 400, "%s", err ? err : "bad filter");
        free(err);
        return;
    }
    /* one side at a time: a selection and its curve */
    size_t sa = curve_side_bytes(c->base), sn = curve_side_bytes(c->new_);
    size_t need = sat_add(sa > sn ? sa : sn, sat_mul((size_t)n, 3 * 24 * 2) + 65536);
    if (vapi_reserve(c->inner, need, resp) < 0) {
        mt_filter_free(f);
        return;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    if (!o) {
        mt_filter_free(f);
        vapi_release(c->inner, need);
        vresp_error(resp, 500, "out of memory");
        return;
    }
    fputc('{', o);
    for (int side = 0; side < 2; side++) {
        const mt_model *m = side ? c->new_ : c->base;
        mt_selection *s = mt_select(m, f, MT_TIME_END);
        mt_curve *cv = s ? mt_query_curve(s, 0, MT_TIME_END, (size_t)n) : NULL;
        if (!cv) {
            mt_selection_free(s);
            fclose(o);
            free(buf);
            mt_filter_free(f);
            vapi_release(c->inner, need);
            vresp_error(resp, 500, "out of memory");
            return;
        }
        fprintf(o, "%s\"%s\":{\"t0\":%lld,\"width\":%lld,\"end_us\":%lld,\"peak\":%.0f,"
                   "\"peak_us\":%lld,\"total\":[",
                side ? "," : "", side ? "new" : "base", (long long)cv->t0, (long long)cv->width,
                (long long)mt_model_end(m), cv->peak_filtered, (long long)cv->peak_filtered_time);
        for (size_t i = 0; i < cv->n; i++)
            fprintf(o, "%s%.0f", i ? "," : "", cv->total[i]);
        fputs("],\"filtered\":[", o);
        for (size_t i = 0; i < cv->n; i++)
            fprintf(o, "%s%.0f", i ? "," : "", cv->filtered[i]);
        fputs("]}", o);
        mt_curve_free(cv);
        mt_selection_free(s);
    }
    fputc('}', o);
    mt_filter_free(f);
    take(o, &buf, &len, resp);
    vapi_release(c->inner, need);
}

static void compare(const vcmp *c, const vreq *req, vresp *resp)
{
    const char *ftext = vreq_arg(req, "filter"), *by = vreq_arg(req, "by");
    const char *key = vreq_arg(req, "key"), *at = vreq_arg(req, "at");
    const char *wa = vreq_arg(req, "a"), *wb = vreq_arg(req, "b");
    const char *al = vreq_arg(req, "alpha"), *lim = vreq_arg(req, "limit");
    const char *sort = vreq_arg(req, "sort");
    long limit = lim ? strtol(lim, NULL, 10) : 5000;
    if (limit < 1 || limit > 200000)
        limit = 5000;
    mt_diff_options o = {MT_METRIC_ALLOC_BYTES, MT_DIFF_PATH, 0.05};
    if (by && *by) {
        int m = mt_metric_parse(by);
        if (m < 0 || m == MT_METRIC_SAMPLES) {
            vresp_error(resp, 400, "by=%.40s: use alloc, count, live or live_count", by);
            return;
        }
        o.metric = (mt_metric)m;
    }
    if (key && *key) {
        if (!strcmp(key, "site"))
            o.key = MT_DIFF_SITE;
        else if (!strcmp(key, "function"))
            o.key = MT_DIFF_FUNCTION;
        else if (!strcmp(key, "path"))
            o.key = MT_DIFF_PATH;
        else {
            vresp_error(resp, 400, "key=%.40s: use site, function or path", key);
            return;
        }
    }
    if (al && *al) {
        o.alpha = strtod(al, NULL);
        if (!(o.alpha > 0 && o.alpha < 1)) {
            vresp_error(resp, 400, "alpha=%.40s: a number between 0 and 1", al);
            return;
        }
    }
    mt_timedelta t = MT_TIME_END;
    char *err = NULL;
    if (at && *at && mt_parse_time(at, &t, &err) < 0) {
        vresp_error(resp, 400, "at=%.40s: %s", at, err ? err : "bad time");
        free(err);
        return;
    }
    mt_filter *f = mt_filter_parse(ftext ? ftext : "", &err, NULL);
    if (!f) {
        vresp_error(resp, 400, "%s", err ? err : "bad filter");
        free(err);
        return;
    }
    size_t need = diff_estimate(c, o.key, (size_t)limit);
    if (vapi_reserve(c->inner, need, resp) < 0) {
        mt_filter_free(f);
        return;
    }
    /* The sites of memtrace diff and of every other report: allocation
     * plumbing skipped (raw=1: the stacks as recorded). */
    const char *rawarg = vreq_arg(req, "raw");
    const mt_plumbing *pl = rawarg && !strcmp(rawarg, "1") ? NULL : c->plumbing;
    mt_selection *sb = mt_select_sites(c->base, f, MT_TIME_END, pl, NULL);
    mt_selection *sn = c->new_ == c->base ? sb : mt_select_sites(c->new_, f, MT_TIME_END, pl, NULL);
    mt_diff_side db = mt_diff_side_all(sb, t), dn = mt_diff_side_all(sn, t);
    int live = o.metric == MT_METRIC_LIVE_BYTES || o.metric == MT_METRIC_LIVE_OBJECTS;
    if (c->base == c->new_) {
        /* one trace: two windows (ranges for allocations, times for live) */
        int ra = 0, rb = 0;
        if (!wa || !*wa)
            wa = c->wa ? c->wa : live ? "peak" : "0-";
        if (!wb || !*wb)
            wb = c->wb ? c->wb : live ? "end" : "0-";
        if (mt_diff_parse_window(wa, &db, &ra, &err) < 0 ||
            mt_diff_parse_window(wb, &dn, &rb, &err) < 0 || ra != rb || ra == live) {
            vresp_error(resp, 400, "%s", err ? err : live ? "live: the windows are two times (a=2s&b=10s)"
                                                          : "allocations: the windows are two ranges (a=0-2s&b=8s-10s)");
            free(err);
            goto out;
        }
    }
    mt_diff *d = sb && sn ? mt_diff_compute(&db, &dn, &o) : NULL;
    if (!d) {
        vresp_error(resp, 500, "out of memory");
        goto out;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (sort && !strcmp(sort, "size"))
        mt_diff_sort(d, 1);
    mt_diff_report_options ro = {0, 1, 1, c->base_file, c->new_file, "", (size_t)limit};
    if (!out || mt_report_diff(out, d, &ro) < 0) {
        if (out)
            fclose(out);
        free(buf);
        vresp_error(resp, 500, "out of memory");
    } else {
        take(out, &buf, &len, resp);
    }
    mt_diff_free(d);
out:
    if (sn != sb)
        mt_selection_free(sn);
    mt_selection_free(sb);
    mt_filter_free(f);
    vapi_release(c->inner, need);
}

static void vcmp_handle(void *ctx, const char *endpoint, const vreq *req, vresp *resp)
{
    vcmp *c = ctx;
    if (!strcmp(endpoint, "compare_info"))
        info(c, resp);
    else if (!strcmp(endpoint, "compare"))
        compare(c, req, resp);
    else if (!strcmp(endpoint, "compare_curves"))
        curves(c, req, resp);
    else
        vapi_handle(c->inner, endpoint, req, resp);
}

int mt_viewer_serve_compare(const mt_model *base, const mt_model *new_,
                            const mt_viewer_compare_options *co,
                            const mt_viewer_options *opts, const char *prog)
{
    vcmp c = {NULL, base, new_, co->base_file, opts->file, co->a, co->b, opts->plumbing, {0}, {0}};
    c.inner = vapi_new(new_, opts->file, opts->load_seconds);
    if (c.inner)
        vapi_set_budget(c.inner, opts->memory ? opts->memory : MT_VIEWER_DEFAULT_MEMORY);
    if (!c.inner || diff_bound(base, &c.bb) < 0 || (new_ != base && diff_bound(new_, &c.bn) < 0)) {
        vapi_free(c.inner);
        fprintf(stderr, "%s: out of memory\n", prog);
        return 1;
    }
    vapi_set_plumbing(c.inner, opts->plumbing);
    if (opts->trace_files && opts->n_trace_files > 0)
        vapi_set_rss(c.inner, mt_rss_load_many(opts->trace_files, opts->n_trace_files, new_,
                                               vapi_warning, c.inner));
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    signal(SIGPIPE, SIG_IGN);
    char *err = NULL;
    vsrv *srv = vsrv_start(opts->host ? opts->host : "127.0.0.1", opts->port, opts->port_tries,
                           vcmp_handle, &c, &err);
    if (!srv) {
        fprintf(stderr, "%s: %s\n", prog, err ? err : "cannot start the HTTP server");
        free(err);
        vapi_free(c.inner);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return 1;
    }
    printf("Serving %scompare.html  (press Ctrl-C to stop)\n", vsrv_url(srv));
    fflush(stdout);
    int sig = 0;
    sigwait(&set, &sig);
    fprintf(stderr, "%s: stopping\n", prog);
    vsrv_stop(srv);
    vapi_free(c.inner);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return 0;
}
