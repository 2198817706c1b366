/*
 * compare.c - the viewer's compare mode (`memtrace view BASE NEW`, or
 * `memtrace view --windows A B TRACE`): three endpoints of its own on top
 * of the ordinary API of the NEW trace (which keeps answering everything
 * else), and the serving loop for two models.
 *
 *   /api/compare_info    the two sides' names, one trace or two, default windows
 *   /api/compare         memtrace diff as JSON (filter, by, at, key, a, b, alpha;
 *                        sort=size|significance, limit: entries sent, default 5000)
 *   /api/compare_curves  both live-memory curves (filter, n)
 */
#include "compare.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "memtrace/compare.h"
#include "memtrace/present.h"
#include "server.h"

typedef struct vcmp {
    vapi *inner;
    const mt_model *base, *new_;
    const char *base_file, *new_file;
    const char *wa, *wb;     /* one trace: the default windows */
} vcmp;

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
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    if (!o) {
        mt_filter_free(f);
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
    mt_selection *sb = mt_select(c->base, f, MT_TIME_END);
    mt_selection *sn = c->new_ == c->base ? sb : mt_select(c->new_, f, MT_TIME_END);
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
    vcmp c = {NULL, base, new_, co->base_file, opts->file, co->a, co->b};
    c.inner = vapi_new(new_, opts->file, opts->load_seconds);
    if (!c.inner) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return 1;
    }
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
