/*
 * server.c - the viewer's HTTP server on libmicrohttpd (see server.h).
 *
 * Only GET and HEAD are served. A path is either one of the embedded page
 * files or /api/<endpoint>; anything else is 404, a path with ".." or odd
 * bytes is 400. Requests whose Host header names another site are refused
 * (403) when the server listens on a loopback address, so that a web page
 * elsewhere cannot read the trace through DNS rebinding. Each connection
 * gets a thread, so several tabs can be served at once.
 */
#include "server.h"
#include "assets.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "json.h"

struct vsrv {
    struct MHD_Daemon *daemon;
    vsrv_api_fn api;
    void *ctx;
    int port;
    int loopback;                 /* check Host headers */
    char host_text[80];           /* as it appears in a URL: "127.0.0.1", "[::1]" */
    char url[128];
};

struct vreq {
    struct MHD_Connection *conn;   /* NULL: a local request */
    const char *const *pairs;
};

const char *vreq_arg(const vreq *req, const char *name)
{
    if (!req->conn) {
        for (const char *const *p = req->pairs; p && p[0]; p += 2)
            if (!strcmp(p[0], name))
                return p[1];
        return NULL;
    }
    return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name);
}

vreq *vreq_local(const char *const *pairs)
{
    vreq *r = calloc(1, sizeof *r);
    if (r)
        r->pairs = pairs;
    return r;
}

void vreq_free_local(vreq *req)
{
    free(req);
}

void vresp_error(vresp *resp, int status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    vjson j;
    vj_init(&j);
    vj_obj(&j);
    vj_kstr(&j, "error", msg);
    vj_kint(&j, "status", status);
    vj_end_obj(&j);
    free(resp->body);
    resp->body = vj_finish(&j, &resp->len);
    resp->status = status;
    resp->content_type = "application/json";
}

static const char *content_type_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot)
        return "application/octet-stream";
    if (!strcmp(dot, ".html"))
        return "text/html; charset=utf-8";
    if (!strcmp(dot, ".js"))
        return "text/javascript; charset=utf-8";
    if (!strcmp(dot, ".css"))
        return "text/css; charset=utf-8";
    if (!strcmp(dot, ".svg"))
        return "image/svg+xml";
    if (!strcmp(dot, ".png"))
        return "image/png";
    if (!strcmp(dot, ".ico"))
        return "image/x-icon";
    return "application/octet-stream";
}

static const struct mt_viewer_asset *find_asset(const char *path)
{
    for (const struct mt_viewer_asset *a = mt_viewer_assets; a->path; a++)
        if (!strcmp(a->path, path))
            return a;
    return NULL;
}

static void common_headers(struct MHD_Response *r, const char *type)
{
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'self'; img-src 'self' data:; "
                            "style-src 'self'; script-src 'self'; frame-ancestors 'none'");
}

static enum MHD_Result send_body(struct MHD_Connection *c, int status, const char *type,
                                 const void *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, mode);
    if (!r) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free((void *)body);
        return MHD_NO;
    }
    common_headers(r, type);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, "Allow", "GET, HEAD");
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static enum MHD_Result send_error(struct MHD_Connection *c, int status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    vresp resp = {0};
    vresp_error(&resp, status, "%s", msg);
    if (!resp.body)
        return MHD_NO;
    return send_body(c, status, resp.content_type, resp.body, resp.len, MHD_RESPMEM_MUST_FREE);
}

/* Paths are short, printable ASCII of a safe alphabet, and never climb. */
static int path_is_sane(const char *path)
{
    size_t n = strlen(path);
    if (n == 0 || n > VSRV_MAX_PATH || path[0] != '/')
        return 0;
    if (strstr(path, "..") || strstr(path, "//"))
        return 0;
    for (const char *p = path; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '/' || c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

struct arg_check {
    int count;
    int too_long;
    const char *bad;
};

static enum MHD_Result check_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    (void)kind;
    struct arg_check *ac = cls;
    ac->count++;
    if ((value && strlen(value) > VSRV_MAX_ARG) || strlen(key) > 64) {
        ac->too_long = 1;
        ac->bad = key;
    }
    return MHD_YES;
}

/* Host header: with a loopback listener, only loopback names are accepted. */
static int host_allowed(const struct vsrv *s, const char *host)
{
    if (!s->loopback || !host)
        return 1;  /* HTTP/1.0 clients send none */
    char want[128];
    const char *names[] = {"127.0.0.1", "localhost", "[::1]", s->host_text};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(want, sizeof want, "%s:%d", names[i], s->port);
        if (!strcasecmp(host, want) || !strcasecmp(host, names[i]))
            return 1;
    }
    return 0;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version,
                              const char *upload_data, size_t *upload_data_size,
                              void **con_cls)
{
    (void)version;
    (void)upload_data;
    struct vsrv *s = cls;
    static int marker;
    if (*con_cls == NULL) {  /* headers seen; wait for the body, if any */
        *con_cls = &marker;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {  /* a GET with a body: drop the body */
        *upload_data_size = 0;
        return MHD_YES;
    }
    int head = !strcmp(method, "HEAD");
    if (strcmp(method, "GET") && !head)
        return send_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method %.32s not allowed", method);
    if (!host_allowed(s, MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host")))
        return send_error(conn, MHD_HTTP_FORBIDDEN, "unexpected Host header");
    if (!path_is_sane(url))
        return send_error(conn, MHD_HTTP_BAD_REQUEST, "malformed path");

    struct arg_check ac = {0, 0, NULL};
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, check_arg, &ac);
    if (ac.count > VSRV_MAX_ARGS)
        return send_error(conn, MHD_HTTP_BAD_REQUEST, "too many query parameters (%d)", ac.count);
    if (ac.too_long)
        return send_error(conn, MHD_HTTP_URI_TOO_LONG, "query parameter too long");

    if (!strncmp(url, "/api/", 5)) {
        vreq req = {conn, NULL};
        vresp resp = {0, NULL, NULL, 0};
        s->api(s->ctx, url + 5, &req, &resp);
        if (!resp.body) {
            free(resp.body);
            return send_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
        }
        return send_body(conn, resp.status ? resp.status : 200,
                         resp.content_type ? resp.content_type : "application/json",
                         resp.body, resp.len, MHD_RESPMEM_MUST_FREE);
    }

    const struct mt_viewer_asset *a = find_asset(strcmp(url, "/") ? url : "/index.html");
    if (!a)
        return send_error(conn, MHD_HTTP_NOT_FOUND, "no such page");
    return send_body(conn, MHD_HTTP_OK, content_type_of(a->path), a->data, a->size,
                     MHD_RESPMEM_PERSISTENT);
}

/* libmicrohttpd's own complaints (e.g. a request too large for its buffer)
 * are answered by it with an error status; keep them off the terminal. */
static void quiet_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    (void)fmt;
    (void)ap;
}

static struct MHD_Daemon *start_on(struct vsrv *s, const struct sockaddr *sa, int v6)
{
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_ERROR_LOG;
    if (v6)
        flags |= MHD_USE_IPv6;
    return MHD_start_daemon(flags, 0, NULL, NULL, handle, s,
                            MHD_OPTION_SOCK_ADDR, sa,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(VSRV_MAX_URL * 2),
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
                            MHD_OPTION_EXTERNAL_LOGGER, quiet_log, NULL,
                            MHD_OPTION_END);
}

vsrv *vsrv_start(const char *host, int port, int tries, vsrv_api_fn api, void *ctx,
                 char **error)
{
    *error = NULL;
    if (!strcmp(host, "localhost"))
        host = "127.0.0.1";
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
    int v6 = 0, loopback = 0;
    if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        loopback = (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
    } else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        v6 = 1;
        loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
    } else {
        if (asprintf(error, "%s: not a numeric IPv4 or IPv6 address", host) < 0)
            *error = NULL;
        return NULL;
    }
    struct vsrv *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->api = api;
    s->ctx = ctx;
    s->loopback = loopback;
    snprintf(s->host_text, sizeof s->host_text, v6 ? "[%s]" : "%s", host);
    if (tries < 1)
        tries = 1;
    int last_errno = 0;
    for (int i = 0; i < tries && port + i <= 65535; i++) {
        int p = port == 0 ? 0 : port + i;
        if (v6)
            in6->sin6_port = htons((uint16_t)p);
        else
            in4->sin_port = htons((uint16_t)p);
        errno = 0;
        s->daemon = start_on(s, (const struct sockaddr *)&ss, v6);
        if (s->daemon)
            break;
        last_errno = errno;
        if (port == 0)
            break;
    }
    if (!s->daemon) {
        if (asprintf(error, "cannot listen on %s port %d%s: %s", host, port,
                     tries > 1 && port != 0 ? " or the next ones" : "",
                     last_errno ? strerror(last_errno) : "address in use or not available") < 0)
            *error = NULL;
        free(s);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : port;
    snprintf(s->url, sizeof s->url, "http://%s:%d/", s->host_text, s->port);
    return s;
}

int vsrv_port(const vsrv *s)
{
    return s->port;
}

const char *vsrv_url(const vsrv *s)
{
    return s->url;
}

void vsrv_stop(vsrv *s)
{
    if (!s)
        return;
    MHD_stop_daemon(s->daemon);
    free(s);
}
