/*
 * sender.c - the push queue and its sender thread (push.h): a bounded FIFO
 * of request bodies under one mutex, one thread that posts them with
 * libcurl, retries 429, 5xx and transport failures with exponential
 * backoff (or the server's Retry-After), drops other refusals at once, and
 * counts every profile it does not deliver. The snapshot loop only takes
 * the mutex to queue a body: it never waits on the network. libcurl is
 * loaded when the first pusher starts (lib/common/dynlib.h), not with the CLI.
 */
#include "push.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dynlib.h"
#include "thread_start.h"

/* libcurl's functions, loaded by mt_push_start (curl.h gives their types). */
static struct {
    __typeof__(curl_global_init) *global_init;
    __typeof__(curl_easy_init) *easy_init;
    __typeof__(curl_easy_setopt) *easy_setopt;
    __typeof__(curl_easy_perform) *easy_perform;
    __typeof__(curl_easy_cleanup) *easy_cleanup;
    __typeof__(curl_easy_reset) *easy_reset;
    __typeof__(curl_easy_getinfo) *easy_getinfo;
    __typeof__(curl_easy_strerror) *easy_strerror;
    __typeof__(curl_slist_append) *slist_append;
    __typeof__(curl_slist_free_all) *slist_free_all;
} cu;

static const struct mt_dynsym curl_syms[] = {
    {"curl_global_init", (void **)&cu.global_init},
    {"curl_easy_init", (void **)&cu.easy_init},
    {"curl_easy_setopt", (void **)&cu.easy_setopt},
    {"curl_easy_perform", (void **)&cu.easy_perform},
    {"curl_easy_cleanup", (void **)&cu.easy_cleanup},
    {"curl_easy_reset", (void **)&cu.easy_reset},
    {"curl_easy_getinfo", (void **)&cu.easy_getinfo},
    {"curl_easy_strerror", (void **)&cu.easy_strerror},
    {"curl_slist_append", (void **)&cu.slist_append},
    {"curl_slist_free_all", (void **)&cu.slist_free_all},
};
static struct mt_dynlib libcurl =
    MT_DYNLIB_INIT("libcurl.so.4", "libcurl4 or libcurl4t64", "sending profiles", curl_syms);

typedef struct item {
    struct item *next;
    uint8_t *body;
    size_t len;
    char *query;       /* appended to the endpoint, or NULL */
    int attempts;
} item;

struct mt_push {
    mt_push_config c;
    char *url, *tenant_hdr, *auth;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
    item *head, *tail;
    size_t queued;
    int closing;                /* under mu; also read by on_progress */
    double drain_deadline;
    mt_push_stats st;
    int said_rejected, said_gave_up;
};

static void item_free(item *it)
{
    free(it->body);
    free(it->query);
    free(it);
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* what one request brought back */
typedef struct reply {
    long status;
    double retry_after;   /* seconds, < 0: none */
    char body[200];
    size_t body_len;
} reply;

static size_t on_header(char *b, size_t size, size_t n, void *ctx)
{
    reply *r = ctx;
    size_t len = size * n;
    if (len > 12 && !strncasecmp(b, "Retry-After:", 12)) {
        char tmp[32];
        size_t k = len - 12 < sizeof tmp - 1 ? len - 12 : sizeof tmp - 1;
        memcpy(tmp, b + 12, k);
        tmp[k] = '\0';
        char *end;
        double v = strtod(tmp, &end);
        if (end != tmp && v >= 0)
            r->retry_after = v;   /* (an HTTP date: ignored, backoff applies) */
    }
    return len;
}

static size_t on_body(char *b, size_t size, size_t n, void *ctx)
{
    reply *r = ctx;
    size_t len = size * n, room = sizeof r->body - 1 - r->body_len;
    size_t k = len < room ? len : room;
    memcpy(r->body + r->body_len, b, k);
    r->body_len += k;
    r->body[r->body_len] = '\0';
    return len;
}

/* libcurl's progress callback: a request still under way when the
 * drain's time is up is abandoned, so that the end never waits for a
 * slow server longer than the drain allows */
static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt;
    (void)dn;
    (void)ut;
    (void)un;
    mt_push *p = ctx;
    /* (drain_deadline is written once, before closing is released) */
    return __atomic_load_n(&p->closing, __ATOMIC_ACQUIRE) && mono() > p->drain_deadline;
}

/* 0 sent, 1 retry, 2 refused; *msg says why */
static int post(mt_push *p, CURL *h, const item *it, double timeout_s, char *msg, size_t cap,
                double *retry_after)
{
    reply r = { .retry_after = -1 };
    struct curl_slist *hd = NULL;
    hd = cu.slist_append(hd, p->c.format == MT_PUSH_OTLP ? "Content-Type: application/x-protobuf"
                               : p->c.format == MT_PUSH_PYROSCOPE_INGEST
                                   ? "Content-Type: application/octet-stream"
                                   : "Content-Type: application/json");
    if (p->c.format == MT_PUSH_OTLP)
        hd = cu.slist_append(hd, "Content-Encoding: gzip");
    if (p->tenant_hdr)
        hd = cu.slist_append(hd, p->tenant_hdr);
    if (p->auth && !strncmp(p->auth, "Bearer ", 7)) {
        char a[4200];
        snprintf(a, sizeof a, "Authorization: %s", p->auth);
        hd = cu.slist_append(hd, a);
    }
    hd = cu.slist_append(hd, "Expect:");
    cu.easy_reset(h);
    char *url = NULL;
    if (it->query) {
        size_t k = strlen(p->url) + strlen(it->query) + 2;
        if ((url = malloc(k)))
            snprintf(url, k, "%s%c%s", p->url, strchr(p->url, '?') ? '&' : '?', it->query);
    }
    cu.easy_setopt(h, CURLOPT_URL, url ? url : p->url);
    cu.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    cu.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    cu.easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    cu.easy_setopt(h, CURLOPT_POST, 1L);
    cu.easy_setopt(h, CURLOPT_POSTFIELDS, (const char *)it->body);
    cu.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)it->len);
    cu.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(p->c.connect_timeout_s * 1000));
    long tmo = (long)(timeout_s * 1000);
    cu.easy_setopt(h, CURLOPT_TIMEOUT_MS, tmo > 1 ? tmo : 1L);
    cu.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    cu.easy_setopt(h, CURLOPT_HEADERDATA, &r);
    cu.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    cu.easy_setopt(h, CURLOPT_WRITEDATA, &r);
    cu.easy_setopt(h, CURLOPT_USERAGENT, "memtrace");
    cu.easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    cu.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    cu.easy_setopt(h, CURLOPT_XFERINFODATA, p);
    if (p->auth && strncmp(p->auth, "Bearer ", 7) != 0) {
        cu.easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        cu.easy_setopt(h, CURLOPT_USERPWD, p->auth);
    }
    CURLcode rc = cu.easy_perform(h);
    cu.slist_free_all(hd);
    free(url);
    *retry_after = r.retry_after;
    if (rc != CURLE_OK) {
        snprintf(msg, cap, "%s", cu.easy_strerror(rc));
        return 1;
    }
    cu.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
    if (r.status >= 200 && r.status < 300)
        return 0;
    for (char *c = r.body; *c; c++)
        if (*c < ' ' || *c == 0x7f)
            *c = ' ';
    snprintf(msg, cap, "HTTP %ld%s%.100s", r.status, r.body[0] ? ": " : "", r.body);
    return r.status == 429 || r.status >= 500 ? 1 : 2;
}

static void wait_until(mt_push *p, double t)
{
    while (!p->closing) {
        double left = t - mono();
        if (left <= 0)
            return;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double s = (double)ts.tv_sec + ts.tv_nsec / 1e9 + left;
        ts.tv_sec = (time_t)s;
        ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
        pthread_cond_timedwait(&p->cv, &p->mu, &ts);
    }
}

static void *run(void *arg)
{
    mt_push *p = arg;
    CURL *h = cu.easy_init();
    double backoff = p->c.backoff_s;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->closing)
            pthread_cond_wait(&p->cv, &p->mu);
        item *it = p->head;
        if (!it)
            break;
        p->head = it->next;
        if (!p->head)
            p->tail = NULL;
        p->queued--;
        int closing = p->closing;
        double timeout = p->c.timeout_s;
        if (closing) {
            double left = p->drain_deadline - mono();
            if (left <= 0.05 || !h) {
                p->st.dropped_exit++;
                item_free(it);
                continue;
            }
            if (left < timeout)
                timeout = left;
        }
        pthread_mutex_unlock(&p->mu);
        char msg[160];
        double ra = -1;
        int r = h ? post(p, h, it, timeout, msg, sizeof msg, &ra) : 1;
        if (!h)
            snprintf(msg, sizeof msg, "cannot start libcurl");
        it->attempts++;
        pthread_mutex_lock(&p->mu);
        if (r == 0) {
            p->st.sent++;
            backoff = p->c.backoff_s;
        } else {
            snprintf(p->st.last_error, sizeof p->st.last_error, "%s", msg);
        }
        if (r == 2) {
            p->st.dropped_rejected++;
            if (!p->said_rejected++)
                fprintf(stderr, "memtrace: push to %s: refused (%s): profile dropped\n", p->url,
                        msg);
        } else if (r == 1 && (closing || p->closing)) {
            p->st.dropped_exit++;
        } else if (r == 1 && it->attempts >= p->c.max_attempts) {
            p->st.dropped_gave_up++;
            if (!p->said_gave_up++)
                fprintf(stderr, "memtrace: push to %s: %s after %d attempts: profile dropped\n",
                        p->url, msg, it->attempts);
        } else if (r == 1) {
            /* back to the front, then wait: Retry-After, else the backoff */
            p->st.retried++;
            it->next = p->head;
            p->head = it;
            if (!p->tail)
                p->tail = it;
            p->queued++;
            double wait = ra >= 0 ? ra : backoff;
            if (wait > p->c.backoff_max_s)
                wait = p->c.backoff_max_s;
            backoff = backoff * 2 < p->c.backoff_max_s ? backoff * 2 : p->c.backoff_max_s;
            wait_until(p, mono() + wait);
            continue;
        }
        item_free(it);
    }
    pthread_mutex_unlock(&p->mu);
    if (h)
        cu.easy_cleanup(h);
    return NULL;
}

mt_push *mt_push_start(const mt_push_config *c, char **err)
{
    mt_push *p = calloc(1, sizeof *p);
    if (!p)
        goto oom;
    p->c = *c;
    if (!p->c.queue)
        p->c.queue = 16;
    if (!p->c.max_attempts)
        p->c.max_attempts = 5;
    if (!(p->c.connect_timeout_s > 0))
        p->c.connect_timeout_s = 5;
    if (!(p->c.timeout_s > 0))
        p->c.timeout_s = 30;
    if (!(p->c.backoff_s > 0))
        p->c.backoff_s = 1;
    if (!(p->c.backoff_max_s > 0))
        p->c.backoff_max_s = 60;
    p->url = strdup(c->url);
    if (!p->url)
        goto oom;
    if (c->tenant) {
        size_t k = strlen(c->tenant) + 16;
        if (!(p->tenant_hdr = malloc(k)))
            goto oom;
        snprintf(p->tenant_hdr, k, "X-Scope-OrgID: %s", c->tenant);
    }
    if (c->auth && !(p->auth = strdup(c->auth)))
        goto oom;
    const char *lerr = mt_dynlib_load(&libcurl);
    if (lerr) {
        if (err)
            *err = strdup(lerr);
        goto fail;
    }
    /* (the CLI's main thread, before any other thread uses libcurl) */
    if (cu.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        if (err)
            *err = strdup("cannot initialise libcurl");
        goto fail;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (mt_thread_start(&p->th, run, p) != 0) {
        if (err)
            *err = strdup("cannot start the sender thread");
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->cv);
        goto fail;
    }
    return p;
oom:
    if (err)
        *err = strdup("out of memory");
fail:
    if (p) {
        free(p->url);
        free(p->tenant_hdr);
        free(p->auth);
        free(p);
    }
    return NULL;
}

void mt_push_submit(mt_push *p, uint8_t *body, size_t len)
{
    mt_push_submit_query(p, body, len, NULL);
}


void mt_push_submit_query(mt_push *p, uint8_t *body, size_t len, char *query)
{
    item *it = malloc(sizeof *it);
    pthread_mutex_lock(&p->mu);
    if (!it) {
        p->st.dropped_full++;
        pthread_mutex_unlock(&p->mu);
        free(body);
        free(query);
        return;
    }
    *it = (item){ .body = body, .len = len, .query = query };
    if (p->queued >= p->c.queue && p->head) {
        /* the oldest waiting one goes (the one being sent is not queued) */
        item *old = p->head;
        p->head = old->next;
        if (!p->head)
            p->tail = NULL;
        p->queued--;
        p->st.dropped_full++;
        item_free(old);
    }
    if (p->tail)
        p->tail->next = it;
    else
        p->head = it;
    p->tail = it;
    p->queued++;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void mt_push_stats_now(mt_push *p, mt_push_stats *out)
{
    pthread_mutex_lock(&p->mu);
    *out = p->st;
    pthread_mutex_unlock(&p->mu);
}

void mt_push_finish(mt_push *p, double drain_s, mt_push_stats *out)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->drain_deadline = mono() + drain_s;
    __atomic_store_n(&p->closing, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->th, NULL);
    if (out)
        *out = p->st;
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->url);
    free(p->tenant_hdr);
    if (p->auth)
        memset(p->auth, 0, strlen(p->auth));
    free(p->auth);
    free(p);
}
