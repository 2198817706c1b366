/*
 * server.h - the viewer's HTTP server (libmicrohttpd): binds an address,
 * serves the embedded page files and hands /api/... requests to a callback.
 * Owns everything about the protocol: methods, paths, limits, headers,
 * error statuses. Knows nothing of traces.
 */
#ifndef MT_VIEWER_SERVER_H
#define MT_VIEWER_SERVER_H

#include <stddef.h>

/* Limits on what a request may carry (larger -> error status). */
#define VSRV_MAX_PATH   256     /* bytes of the path */
#define VSRV_MAX_ARGS   32      /* query parameters */
#define VSRV_MAX_ARG    8192    /* bytes of one decoded parameter value */
#define VSRV_MAX_URL    16384   /* bytes of the whole request line + headers */

/* Connections (slow clients): how many at once, how many from one address
 * when listening beyond loopback, and how long one may stay silent. */
#define VSRV_MAX_CONNECTIONS 1000
#define VSRV_MAX_CONN_PER_IP 32
#define VSRV_IDLE_TIMEOUT    15     /* seconds */

typedef struct vreq vreq;  /* one API request, valid during the callback */

/* A query parameter's decoded value, or NULL when absent. */
const char *vreq_arg(const vreq *req, const char *name);

/* A request made inside the program (e.g. to warm caches): parameters as a
 * NULL-terminated list of name, value pairs. Free with vreq_free_local. */
vreq *vreq_local(const char *const *pairs);
void vreq_free_local(vreq *req);

/* What the API callback answers: status and a malloc'd body it hands over. */
typedef struct vresp {
    int status;
    const char *content_type;   /* default "application/json" */
    char *body;
    size_t len;
    int retry_after;            /* seconds; > 0: send Retry-After (with 503) */
} vresp;

/* endpoint is the path after "/api/" (e.g. "tree"). Fill *resp. */
typedef void (*vsrv_api_fn)(void *ctx, const char *endpoint, const vreq *req, vresp *resp);

typedef struct vsrv vsrv;

typedef struct vsrv_config {
    const char *host;              /* numeric IPv4/IPv6 address or "localhost";
                                      NULL: 127.0.0.1. "::" takes IPv4 too. */
    int port;                      /* 0 picks a free port */
    int tries;                     /* port taken: try the next ones, this many in all */
    const char *const *allow_hosts; /* NULL-terminated "NAME" or "NAME:PORT" also
                                      accepted in Host/Origin headers; may be NULL */
} vsrv_config;

/* Start serving. Returns NULL with a malloc'd *error. */
vsrv *vsrv_open(const vsrv_config *cfg, vsrv_api_fn api, void *ctx, char **error);
/* The same without extra names: host, port and tries as in vsrv_config. */
vsrv *vsrv_start(const char *host, int port, int tries, vsrv_api_fn api, void *ctx,
                 char **error);
int vsrv_port(const vsrv *s);
/* The URL to open, e.g. "http://127.0.0.1:8080/" (owned by the server). */
const char *vsrv_url(const vsrv *s);
/* Every URL the server answers at: the one above first, then (when listening
 * on every interface) the machine's addresses and name. */
const char *const *vsrv_urls(const vsrv *s, size_t *n);
/* 1 when other machines can connect (not bound to loopback). */
int vsrv_exposed(const vsrv *s);
/* 1 when bound to every interface (0.0.0.0 or ::). */
int vsrv_wildcard(const vsrv *s);
void vsrv_stop(vsrv *s);

/* Build an error answer {"error": message} with the given status. */
void vresp_error(vresp *resp, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
