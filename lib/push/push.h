/*
 * push.h - sending profiles to a continuous-profiling engine (Pyroscope,
 * Parca, an OpenTelemetry collector) over HTTP, from the memtrace process
 * (never the profiled one). A bounded in-memory queue and one sender
 * thread (libcurl): mt_push_submit never blocks on the network; failed
 * sends are retried with exponential backoff (Retry-After honoured); every
 * profile that is not delivered is counted with its reason.
 */
#ifndef MEMTRACE_PUSH_H
#define MEMTRACE_PUSH_H

#include <stddef.h>
#include <stdint.h>

typedef enum mt_push_format {
    MT_PUSH_NONE = 0,
    MT_PUSH_PYROSCOPE,   /* Connect JSON: POST .../push.v1.PusherService/Push */
    MT_PUSH_PARCA,       /* grpc-gateway JSON: POST .../profiles/writeraw */
    MT_PUSH_OTLP,        /* OTLP/HTTP protobuf, gzip: POST .../v1development/profiles */
    MT_PUSH_PYROSCOPE_INGEST, /* older Pyroscope: POST .../ingest?name=..., gzipped pprof */
} mt_push_format;

/* The format a URL's path names (its last path component(s)), else NONE. */
mt_push_format mt_push_format_of_url(const char *url);
/* "pyroscope", "parca", "otlp", "pyroscope-ingest" -> format, else NONE */
mt_push_format mt_push_format_named(const char *name);
const char *mt_push_format_name(mt_push_format f);
/* The URL requests go to: url itself when it has a path (other than
 * "/"), else url with the format's endpoint path appended (before any
 * query). malloc'd (NULL: oom). */
char *mt_push_endpoint(const char *url, mt_push_format f);

/* A label name engines accept: [A-Za-z_][A-Za-z0-9_]* */
int mt_push_label_name_ok(const char *name);

typedef struct mt_push_label {
    const char *name, *value;
} mt_push_label;

/* The request bodies. pprof_gz: a gzipped pprof profile. labels: __name__
 * and service_name first, as the caller orders them. Return a malloc'd
 * NUL-terminated JSON text (NULL: oom). */
char *mt_push_pyroscope_body(const mt_push_label *labels, size_t n, const uint8_t *pprof_gz,
                             size_t len);
char *mt_push_parca_body(const mt_push_label *labels, size_t n, const uint8_t *pprof_gz,
                         size_t len);
/* Pyroscope's /ingest query for one profile of the interval [from_s,
 * until_s] (Unix seconds): name=SERVICE{K=V,...} (labels but
 * __name__ and service_name; service_name gives SERVICE; characters the
 * key syntax reserves, {}=, and spaces, become _), from, until,
 * format=pprof, spyName=memtrace; percent-encoded. malloc'd (NULL: oom). */
char *mt_push_ingest_query(const mt_push_label *labels, size_t n, long long from_s,
                           long long until_s);
/* base64 (RFC 4648, padded) of data: malloc'd, NUL-terminated */
char *mt_push_base64(const uint8_t *data, size_t len);

/* Reads an auth file: one line, "Bearer TOKEN" or "USER:PASSWORD". The
 * file (a symbolic link is followed) must be a regular file of this user
 * or root, readable by its owner only (no group or other permission
 * bits): refused otherwise. Returns a malloc'd line, or
 * NULL with a reason in why (a static string or written into buf). */
char *mt_push_read_auth(const char *path, char *buf, size_t cap, const char **why);

typedef struct mt_push_config {
    const char *url;             /* the endpoint (mt_push_endpoint) */
    mt_push_format format;
    const char *tenant;          /* X-Scope-OrgID, or NULL */
    const char *auth;            /* "Bearer TOKEN" or "USER:PASSWORD", or NULL */
    size_t queue;                /* profiles waiting at most (0: 16) */
    int max_attempts;            /* per profile (0: 5) */
    double connect_timeout_s;    /* 0: 5 */
    double timeout_s;            /* whole request; 0: 30 */
    double backoff_s;            /* first retry's wait, doubled each time; 0: 1 */
    double backoff_max_s;        /* 0: 60 (also caps Retry-After) */
} mt_push_config;

typedef struct mt_push mt_push;

/* Starts the sender thread (signals blocked in it). NULL on failure, with
 * a malloc'd message in *err. */
mt_push *mt_push_start(const mt_push_config *c, char **err);
/* Queues one request body (ownership passes; freed with free()). When the
 * queue is full the oldest waiting profile is dropped (counted) to make
 * room: the newest data matters most. Never blocks on the network. */
void mt_push_submit(mt_push *p, uint8_t *body, size_t len);
/* The same, sent to the endpoint with query appended (ownership passes;
 * NULL: none): /ingest's per-profile parameters. */
void mt_push_submit_query(mt_push *p, uint8_t *body, size_t len, char *query);

typedef struct mt_push_stats {
    unsigned long long sent, retried;
    unsigned long long dropped_full;      /* the queue was full */
    unsigned long long dropped_rejected;  /* the server refused it (4xx but 429) */
    unsigned long long dropped_gave_up;   /* max_attempts failures */
    unsigned long long dropped_exit;      /* not delivered by the end */
    char last_error[160];                 /* the latest failure, "" if none */
} mt_push_stats;

/* The counts so far (a copy, taken under the queue's lock). */
void mt_push_stats_now(mt_push *p, mt_push_stats *out);

/* Stops: what is queued gets one more try each within drain_s seconds in
 * all (no backoff waits), the rest is dropped (dropped_exit); then the
 * thread is joined and p freed. Stats out (may be NULL). */
void mt_push_finish(mt_push *p, double drain_s, mt_push_stats *out);

/* "push: N sent, N dropped (...)": the run's summary line (no newline). */
void mt_push_summary(const mt_push_stats *s, char *buf, size_t cap);

#endif
