/*
 * server.c - the viewer's HTTP server on libmicrohttpd (see server.h).
 *
 * Only GET and HEAD are served. A path is either one of the embedded page
 * files or /api/<endpoint>; anything else is 404, a path with ".." or odd
 * bytes is 400. Who may ask (all 403 otherwise, see docs/viewer.md):
 *   - the Host header must name this server: a loopback name, the bound
 *     address, and when listening beyond loopback the machine's own name and
 *     addresses, plus names given with --allow-host (DNS rebinding);
 *   - API requests must come from the viewer's own page or from a client
 *     that is no browser page: Sec-Fetch-Site other than same-origin/none, or
 *     an Origin that is not this server, is refused (cross-site requests).
 * Each connection gets a thread, so several tabs can be served at once; many
 * connections are allowed, idle ones are dropped quickly and, beyond
 * loopback, one address cannot hold more than a few (slow clients).
 * libmicrohttpd is loaded when the first server opens (lib/common/dynlib.h),
 * not with the CLI.
 */
#include "server.h"
#include "assets.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dynlib.h"
#include "json.h"

/* libmicrohttpd's functions, loaded by vsrv_open (microhttpd.h gives their
 * types). */
static struct {
    __typeof__(MHD_lookup_connection_value) *lookup_connection_value;
    __typeof__(MHD_add_response_header) *add_response_header;
    __typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
    __typeof__(MHD_queue_response) *queue_response;
    __typeof__(MHD_destroy_response) *destroy_response;
    __typeof__(MHD_get_connection_values) *get_connection_values;
    __typeof__(MHD_start_daemon) *start_daemon;
    __typeof__(MHD_stop_daemon) *stop_daemon;
} mhd;

static const struct mt_dynsym mhd_syms[] = {
    {"MHD_lookup_connection_value", (void **)&mhd.lookup_connection_value},
    {"MHD_add_response_header", (void **)&mhd.add_response_header},
    {"MHD_create_response_from_buffer", (void **)&mhd.create_response_from_buffer},
    {"MHD_queue_response", (void **)&mhd.queue_response},
    {"MHD_destroy_response", (void **)&mhd.destroy_response},
    {"MHD_get_connection_values", (void **)&mhd.get_connection_values},
    {"MHD_start_daemon", (void **)&mhd.start_daemon},
    {"MHD_stop_daemon", (void **)&mhd.stop_daemon},
};
static struct mt_dynlib libmhd = MT_DYNLIB_INIT("libmicrohttpd.so.12",
    "libmicrohttpd12 or libmicrohttpd12t64", "the viewer", mhd_syms);

/* A name the Host and Origin headers may carry. */
struct host_name {
    char *name;                   /* lowercase, IPv6 in brackets */
    int port;                     /* -1: any port (given without one by --allow-host) */
    int extra;                    /* from --allow-host: any scheme in Origin */
};

struct vsrv {
    struct MHD_Daemon *daemon;
    vsrv_api_fn api;
    void *ctx;
    int port;
    int loopback;                 /* bound to a loopback address */
    int wildcard;                 /* bound to 0.0.0.0 or :: (every interface) */
    char host_text[80];           /* as it appears in a URL: "127.0.0.1", "[::1]" */
    char url[128];
    struct host_name *names;      /* accepted in Host and Origin */
    size_t n_names, cap_names;
    char **urls;                  /* every URL the server can be reached at */
    size_t n_urls;
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
    return mhd.lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name);
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
    mhd.add_response_header(r, "Content-Type", type);
    mhd.add_response_header(r, "Cache-Control", "no-store");
    mhd.add_response_header(r, "X-Content-Type-Options", "nosniff");
    mhd.add_response_header(r, "X-Frame-Options", "DENY");
    mhd.add_response_header(r, "Referrer-Policy", "no-referrer");
    mhd.add_response_header(r, "Content-Security-Policy",
                            "default-src 'self'; img-src 'self' data:; "
                            "style-src 'self'; script-src 'self'; frame-ancestors 'none'");
}

static enum MHD_Result send_body(struct MHD_Connection *c, int status, const char *type,
                                 const void *body, size_t len, enum MHD_ResponseMemoryMode mode,
                                 int retry_after)
{
    struct MHD_Response *r = mhd.create_response_from_buffer(len, (void *)body, mode);
    if (!r) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free((void *)body);
        return MHD_NO;
    }
    common_headers(r, type);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        mhd.add_response_header(r, "Allow", "GET, HEAD");
    if (retry_after > 0) {
        char ra[16];
        snprintf(ra, sizeof ra, "%d", retry_after);
        mhd.add_response_header(r, "Retry-After", ra);
    }
    enum MHD_Result ret = mhd.queue_response(c, (unsigned)status, r);
    mhd.destroy_response(r);
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
    return send_body(c, status, resp.content_type, resp.body, resp.len, MHD_RESPMEM_MUST_FREE, 0);
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

/* Split "name[:port]" ("[v6]:port" for IPv6) into a lowercase name (without
 * a trailing dot) and a port (-1 when absent, -2 when malformed). */
static int split_host(const char *h, char *name, size_t cap, int *port)
{
    size_t n;
    const char *rest;
    *port = -1;
    if (h[0] == '[') {
        const char *close = strchr(h, ']');
        if (!close)
            return -1;
        n = (size_t)(close - h) + 1;
        rest = close + 1;
    } else {
        n = strcspn(h, ":");
        rest = h + n;
    }
    if (n == 0 || n >= cap)
        return -1;
    for (size_t i = 0; i < n; i++)
        name[i] = (char)tolower((unsigned char)h[i]);
    name[n] = 0;
    if (n > 1 && name[n - 1] == '.')
        name[n - 1] = 0;
    if (*rest == ':') {
        char *end;
        long p = strtol(rest + 1, &end, 10);
        if (rest[1] < '0' || rest[1] > '9' || *end || p < 0 || p > 65535) {
            *port = -2;
            return 0;
        }
        *port = (int)p;
    } else if (*rest) {
        return -1;
    }
    return 0;
}

/* Is "name[:port]" this server? default_port: the port implied when none is
 * given (Origin: the scheme's; -1: any port is fine, as for Host, where the
 * name is what matters: ssh tunnels and proxies change the port).
 * extra_only: only --allow-host names qualify (an https Origin). */
static int names_server(const struct vsrv *s, const char *hostport, int default_port,
                        int extra_only)
{
    char name[256];
    int port;
    if (split_host(hostport, name, sizeof name, &port) < 0 || port == -2)
        return 0;
    if (port < 0 || default_port < 0)
        port = default_port;
    for (size_t i = 0; i < s->n_names; i++) {
        const struct host_name *h = &s->names[i];
        if (strcmp(h->name, name) || (extra_only && !h->extra))
            continue;
        if (h->port < 0 || port < 0 || port == h->port)
            return 1;
    }
    return 0;
}

static int host_allowed(const struct vsrv *s, const char *host)
{
    if (!host)
        return 1;  /* HTTP/1.0 clients send none; browsers always do */
    return names_server(s, host, -1, 0);
}

/* NULL if the request may read the API, else why not. A browser tells where
 * a request comes from with Sec-Fetch-Site (same-origin: the viewer's own
 * page; none: the user typed or bookmarked the URL) and, on cross-origin
 * requests, Origin. Clients that are not browsers (curl, scripts) send
 * neither. "same-site" is refused too: another port of localhost is the same
 * site as the viewer. */
static const char *api_refusal(const struct vsrv *s, struct MHD_Connection *c)
{
    const char *site = mhd.lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site");
    if (site && strcasecmp(site, "same-origin") && strcasecmp(site, "none"))
        return "request from another site (Sec-Fetch-Site)";
    const char *origin = mhd.lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    if (!origin)
        return NULL;
    if (!strncasecmp(origin, "http://", 7) && names_server(s, origin + 7, 80, 0))
        return NULL;
    if (!strncasecmp(origin, "https://", 8) && names_server(s, origin + 8, 443, 1))
        return NULL;
    return "request from another origin (Origin)";
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
    if (!host_allowed(s, mhd.lookup_connection_value(conn, MHD_HEADER_KIND, "Host")))
        return send_error(conn, MHD_HTTP_FORBIDDEN, "unexpected Host header");
    if (!path_is_sane(url))
        return send_error(conn, MHD_HTTP_BAD_REQUEST, "malformed path");

    struct arg_check ac = {0, 0, NULL};
    mhd.get_connection_values(conn, MHD_GET_ARGUMENT_KIND, check_arg, &ac);
    if (ac.count > VSRV_MAX_ARGS)
        return send_error(conn, MHD_HTTP_BAD_REQUEST, "too many query parameters (%d)", ac.count);
    if (ac.too_long)
        return send_error(conn, MHD_HTTP_URI_TOO_LONG, "query parameter too long");

    if (!strncmp(url, "/api/", 5)) {
        const char *why = api_refusal(s, conn);
        if (why)
            return send_error(conn, MHD_HTTP_FORBIDDEN,
                              "cross-origin request refused: %s; the API answers only the "
                              "viewer's own page and non-browser clients",
                              why);
        vreq req = {conn, NULL};
        vresp resp = {0};
        s->api(s->ctx, url + 5, &req, &resp);
        if (!resp.body) {
            free(resp.body);
            return send_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
        }
        return send_body(conn, resp.status ? resp.status : 200,
                         resp.content_type ? resp.content_type : "application/json",
                         resp.body, resp.len, MHD_RESPMEM_MUST_FREE, resp.retry_after);
    }

    const struct mt_viewer_asset *a = find_asset(strcmp(url, "/") ? url : "/index.html");
    if (!a)
        return send_error(conn, MHD_HTTP_NOT_FOUND, "no such page");
    return send_body(conn, MHD_HTTP_OK, content_type_of(a->path), a->data, a->size,
                     MHD_RESPMEM_PERSISTENT, 0);
}

/* libmicrohttpd's own complaints (e.g. a request too large for its buffer)
 * are answered by it with an error status; keep them off the terminal. */
static void quiet_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    (void)fmt;
    (void)ap;
}

/* The listening socket, opened here rather than by libmicrohttpd so that the
 * port is known, and everything the request handler reads is set, before the
 * first connection is accepted. "::" takes IPv4 too (dual stack). Returns
 * the socket, or -1 with errno set. */
static int open_listener(const struct sockaddr *sa, int v6, int dual)
{
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1, v6only = !dual;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (v6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
    socklen_t len = v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (bind(fd, sa, len) < 0 || listen(fd, 256) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static struct MHD_Daemon *start_on(struct vsrv *s, int fd, int v6)
{
    /* A thread per connection (answers can take seconds; one slow answer must
     * not hold up the others), poll() rather than select() so that more than
     * FD_SETSIZE sockets are fine. */
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD |
                     MHD_USE_ERROR_LOG;
    if (v6)
        flags |= MHD_USE_IPv6;
    /* Per address: beyond loopback, so that one machine cannot take every
     * connection; on loopback every client has the same address. */
    unsigned per_ip = s->loopback ? 0 : VSRV_MAX_CONN_PER_IP;
    return mhd.start_daemon(flags, 0, NULL, NULL, handle, s,
                            MHD_OPTION_LISTEN_SOCKET, fd,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(VSRV_MAX_URL * 2),
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)VSRV_MAX_CONNECTIONS,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)VSRV_IDLE_TIMEOUT,
                            MHD_OPTION_EXTERNAL_LOGGER, quiet_log, NULL,
                            MHD_OPTION_END);
}

static int add_name(struct vsrv *s, const char *name, int port, int extra)
{
    for (size_t i = 0; i < s->n_names; i++)
        if (!strcmp(s->names[i].name, name) && s->names[i].port == port &&
            s->names[i].extra == extra)
            return 0;
    if (s->n_names == s->cap_names) {
        size_t cap = s->cap_names ? 2 * s->cap_names : 16;
        struct host_name *n = realloc(s->names, cap * sizeof *n);
        if (!n)
            return -1;
        s->names = n;
        s->cap_names = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return -1;
    for (char *p = copy; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    s->names[s->n_names++] = (struct host_name){copy, port, extra};
    return 0;
}

static int add_url(struct vsrv *s, const char *host_text)
{
    char url[160];
    snprintf(url, sizeof url, "http://%s:%d/", host_text, s->port);
    for (size_t i = 0; i < s->n_urls; i++)
        if (!strcmp(s->urls[i], url))
            return 0;
    char **u = realloc(s->urls, (s->n_urls + 1) * sizeof *u);
    if (!u)
        return -1;
    s->urls = u;
    if (!(s->urls[s->n_urls] = strdup(url)))
        return -1;
    s->n_urls++;
    return 0;
}

/* The machine's addresses, as they appear in a URL (IPv6 bracketed); the
 * link-local IPv6 ones are left out (a URL would need the interface). */
static int add_interfaces(struct vsrv *s, int with_v6)
{
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) < 0)
        return 0;
    int rc = 0;
    for (struct ifaddrs *i = ifs; i && rc == 0; i = i->ifa_next) {
        if (!i->ifa_addr)
            continue;
        char text[INET6_ADDRSTRLEN + 2], addr[INET6_ADDRSTRLEN];
        int loop;
        if (i->ifa_addr->sa_family == AF_INET) {
            const struct sockaddr_in *a = (const struct sockaddr_in *)i->ifa_addr;
            if (!inet_ntop(AF_INET, &a->sin_addr, addr, sizeof addr))
                continue;
            snprintf(text, sizeof text, "%s", addr);
            loop = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
        } else if (i->ifa_addr->sa_family == AF_INET6 && with_v6) {
            const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)i->ifa_addr;
            if (IN6_IS_ADDR_LINKLOCAL(&a->sin6_addr) ||
                !inet_ntop(AF_INET6, &a->sin6_addr, addr, sizeof addr))
                continue;
            snprintf(text, sizeof text, "[%s]", addr);
            loop = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
        } else {
            continue;
        }
        rc = add_name(s, text, s->port, 0);
        if (rc == 0 && !loop)
            rc = add_url(s, text);
    }
    freeifaddrs(ifs);
    return rc;
}

/* Fill the accepted names and the URLs once the port is known. */
static int set_names(struct vsrv *s, int v6, const char *const *allow, char **error)
{
    static const char *const local[] = {"localhost", "127.0.0.1", "[::1]"};
    if (add_url(s, s->wildcard ? "127.0.0.1" : s->host_text) < 0)
        return -1;
    for (size_t i = 0; i < sizeof local / sizeof *local; i++)
        if (add_name(s, local[i], s->port, 0) < 0)
            return -1;
    if (add_name(s, s->host_text, s->port, 0) < 0)
        return -1;
    if (!s->loopback) {  /* reachable from elsewhere: by the machine's name too */
        char hn[256];
        if (gethostname(hn, sizeof hn - 1) == 0) {
            hn[sizeof hn - 1] = 0;
            if (hn[0] && (add_name(s, hn, s->port, 0) < 0 || (s->wildcard && add_url(s, hn) < 0)))
                return -1;
        }
        if (s->wildcard && add_interfaces(s, v6) < 0)
            return -1;
    }
    for (const char *const *a = allow; a && *a; a++) {
        char name[256];
        int port;
        if (split_host(*a, name, sizeof name, &port) < 0 || port == -2 || strchr(name, '/')) {
            if (asprintf(error, "--allow-host %s: expected NAME or NAME:PORT", *a) < 0)
                *error = NULL;
            return -1;
        }
        if (add_name(s, name, port, 1) < 0)
            return -1;
    }
    return 0;
}

static void vsrv_free(struct vsrv *s)
{
    for (size_t i = 0; i < s->n_names; i++)
        free(s->names[i].name);
    free(s->names);
    for (size_t i = 0; i < s->n_urls; i++)
        free(s->urls[i]);
    free(s->urls);
    free(s);
}

vsrv *vsrv_start(const char *host, int port, int tries, vsrv_api_fn api, void *ctx,
                 char **error)
{
    vsrv_config cfg = {host, port, tries, NULL};
    return vsrv_open(&cfg, api, ctx, error);
}

vsrv *vsrv_open(const vsrv_config *cfg, vsrv_api_fn api, void *ctx, char **error)
{
    *error = NULL;
    const char *lerr = mt_dynlib_load(&libmhd);
    if (lerr) {
        *error = strdup(lerr);
        return NULL;
    }
    const char *host = cfg->host ? cfg->host : "127.0.0.1";
    int port = cfg->port, tries = cfg->tries;
    if (!strcmp(host, "localhost"))
        host = "127.0.0.1";
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
    int v6 = 0, loopback = 0, wildcard = 0;
    if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        loopback = (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
        wildcard = in4->sin_addr.s_addr == htonl(INADDR_ANY);
    } else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        v6 = 1;
        loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
        wildcard = IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr);
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
    s->wildcard = wildcard;
    char canon[INET6_ADDRSTRLEN];
    if (!inet_ntop(v6 ? AF_INET6 : AF_INET, v6 ? (void *)&in6->sin6_addr : (void *)&in4->sin_addr,
                   canon, sizeof canon))
        snprintf(canon, sizeof canon, "%s", host);
    snprintf(s->host_text, sizeof s->host_text, v6 ? "[%s]" : "%s", canon);
    if (tries < 1)
        tries = 1;
    int last_errno = 0, fd = -1;
    for (int i = 0; i < tries && port + i <= 65535; i++) {
        int p = port == 0 ? 0 : port + i;
        if (v6)
            in6->sin6_port = htons((uint16_t)p);
        else
            in4->sin_port = htons((uint16_t)p);
        fd = open_listener((const struct sockaddr *)&ss, v6, wildcard);
        if (fd >= 0)
            break;
        last_errno = errno;
        if (port == 0)
            break;
    }
    if (fd < 0) {
        if (asprintf(error, "cannot listen on %s port %d%s: %s", host, port,
                     tries > 1 && port != 0 ? " or the next ones" : "",
                     last_errno ? strerror(last_errno) : "address in use or not available") < 0)
            *error = NULL;
        vsrv_free(s);
        return NULL;
    }
    struct sockaddr_storage bound;
    socklen_t blen = sizeof bound;
    if (getsockname(fd, (struct sockaddr *)&bound, &blen) == 0)
        s->port = ntohs(v6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                           : ((struct sockaddr_in *)&bound)->sin_port);
    else
        s->port = port;
    snprintf(s->url, sizeof s->url, "http://%s:%d/", s->wildcard ? "127.0.0.1" : s->host_text,
             s->port);
    if (set_names(s, v6, cfg->allow_hosts, error) < 0) {
        close(fd);
        vsrv_free(s);
        return NULL;
    }
    s->daemon = start_on(s, fd, v6);
    if (!s->daemon) {
        if (asprintf(error, "cannot start the HTTP server on %s port %d", host, s->port) < 0)
            *error = NULL;
        close(fd);
        vsrv_free(s);
        return NULL;
    }
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

const char *const *vsrv_urls(const vsrv *s, size_t *n)
{
    *n = s->n_urls;
    return (const char *const *)s->urls;
}

int vsrv_exposed(const vsrv *s)
{
    return !s->loopback;
}

int vsrv_wildcard(const vsrv *s)
{
    return s->wildcard;
}

void vsrv_stop(vsrv *s)
{
    if (!s)
        return;
    mhd.stop_daemon(s->daemon);
    vsrv_free(s);
}
