/*
 * payload.c - what a push says and where it goes: the formats and their
 * endpoints, label names, the JSON bodies of Pyroscope's Push (Connect)
 * and Parca's WriteRaw (grpc-gateway), base64, and the auth file.
 */
#include "push.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memtrace/present.h"

static const struct {
    mt_push_format f;
    const char *name, *path;
} formats[] = {
    { MT_PUSH_PYROSCOPE, "pyroscope", "/push.v1.PusherService/Push" },
    { MT_PUSH_PARCA, "parca", "/profiles/writeraw" },
    { MT_PUSH_OTLP, "otlp", "/v1development/profiles" },
    { MT_PUSH_PYROSCOPE_INGEST, "pyroscope-ingest", "/ingest" },
};
#define N_FORMATS (sizeof formats / sizeof formats[0])

/* the URL's path without query or fragment: [start, *end) */
static const char *url_path(const char *url, size_t *len)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    p += strcspn(p, "/?#");
    *len = strcspn(p, "?#");
    return p;
}

static int path_ends_with(const char *url, const char *suffix)
{
    size_t len, k = strlen(suffix);
    const char *p = url_path(url, &len);
    while (len > 1 && p[len - 1] == '/')
        len--;
    return len >= k && !memcmp(p + len - k, suffix, k);
}

mt_push_format mt_push_format_of_url(const char *url)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        if (path_ends_with(url, formats[i].path))
            return formats[i].f;
    return MT_PUSH_NONE;
}

mt_push_format mt_push_format_named(const char *name)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        if (!strcmp(name, formats[i].name))
            return formats[i].f;
    return MT_PUSH_NONE;
}

const char *mt_push_format_name(mt_push_format f)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        if (formats[i].f == f)
            return formats[i].name;
    return "none";
}

char *mt_push_endpoint(const char *url, mt_push_format f)
{
    const char *path = NULL;
    for (size_t i = 0; i < N_FORMATS; i++)
        if (formats[i].f == f)
            path = formats[i].path;
    size_t len;
    const char *p = url_path(url, &len);
    while (len > 0 && p[len - 1] == '/')
        len--;
    if (!path || len > 0)   /* a path of its own: the server's (a proxy's, a renamed route) */
        return strdup(url);
    /* base + path + query */
    size_t head = (size_t)(p - url) + len;
    const char *rest = p + strcspn(p, "?#");
    size_t cap = strlen(url) + strlen(path) + 2;
    char *r = malloc(cap);
    if (r)
        snprintf(r, cap, "%.*s%s%s", (int)head, url, path, rest);
    return r;
}

int mt_push_label_name_ok(const char *s)
{
    if (!*s || !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
        return 0;
    for (; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9')))
            return 0;
    return 1;
}

char *mt_push_base64(const uint8_t *d, size_t len)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *r = malloc((len + 2) / 3 * 4 + 1), *o = r;
    if (!r)
        return NULL;
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8 | d[i + 2];
        *o++ = a[v >> 18];
        *o++ = a[v >> 12 & 63];
        *o++ = a[v >> 6 & 63];
        *o++ = a[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < len ? (uint32_t)d[i + 1] << 8 : 0);
        *o++ = a[v >> 18];
        *o++ = a[v >> 12 & 63];
        *o++ = i + 1 < len ? a[v >> 6 & 63] : '=';
        *o++ = '=';
    }
    *o = '\0';
    return r;
}

/* s into f for a Pyroscope key: the characters the key syntax reserves
 * ({}=, and spaces, controls) as _ */
static void key_part(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(strchr("{}=,\"", *s) || (unsigned char)*s <= ' ' || *s == 0x7f ? '_' : *s, f);
}

/* s percent-encoded (RFC 3986: all but the unreserved characters) */
static void percent(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~')
            fputc(c, f);
        else
            fprintf(f, "%%%02X", c);
    }
}

char *mt_push_ingest_query(const mt_push_label *l, size_t n, long long from_s, long long until_s)
{
    char *key = NULL, *q = NULL;
    size_t klen = 0, qlen = 0;
    FILE *f = open_memstream(&key, &klen);
    if (!f)
        return NULL;
    const char *service = "unknown_service";
    for (size_t i = 0; i < n; i++)
        if (!strcmp(l[i].name, "service_name") && l[i].value && l[i].value[0])
            service = l[i].value;
    key_part(f, service);
    /* (no ".memory" after it: with format=pprof, Pyroscope takes the
     * name before the braces as service_name verbatim, and the profile
     * type from the sample types) */
    fputc('{', f);
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(l[i].name, "__name__") || !strcmp(l[i].name, "service_name"))
            continue;
        fputs(first ? "" : ",", f);
        first = 0;
        key_part(f, l[i].name);
        fputc('=', f);
        key_part(f, l[i].value ? l[i].value : "");
    }
    fputc('}', f);
    if (fclose(f) != 0) {
        free(key);
        return NULL;
    }
    f = open_memstream(&q, &qlen);
    if (!f) {
        free(key);
        return NULL;
    }
    fputs("name=", f);
    percent(f, key);
    fprintf(f, "&from=%lld&until=%lld&format=pprof&spyName=memtrace", from_s, until_s);
    free(key);
    if (fclose(f) != 0) {
        free(q);
        return NULL;
    }
    return q;
}

static void labels_json(FILE *f, const mt_push_label *l, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",{\"name\":" : "{\"name\":", f);
        mt_json_string(f, l[i].name);
        fputs(",\"value\":", f);
        mt_json_string(f, l[i].value);
        fputc('}', f);
    }
}

/* {"series":[{"labels":LABELS,"samples":[{"rawProfile":"B64"}]}]TAIL};
 * parca nests the labels in a LabelSet */
static char *body(int parca, const mt_push_label *l, size_t n, const uint8_t *gz, size_t len)
{
    char *b64 = mt_push_base64(gz, len);
    if (!b64)
        return NULL;
    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    if (!f) {
        free(b64);
        return NULL;
    }
    fputs(parca ? "{\"series\":[{\"labels\":{\"labels\":[" : "{\"series\":[{\"labels\":[", f);
    labels_json(f, l, n);
    fputs(parca ? "]}" : "]", f);
    fprintf(f, ",\"samples\":[{\"rawProfile\":\"%s\"}]}]%s}", b64,
            parca ? ",\"normalized\":false" : "");
    free(b64);
    if (ferror(f)) {
        fclose(f);
        free(text);
        return NULL;
    }
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

char *mt_push_pyroscope_body(const mt_push_label *l, size_t n, const uint8_t *gz, size_t len)
{
    return body(0, l, n, gz, len);
}

char *mt_push_parca_body(const mt_push_label *l, size_t n, const uint8_t *gz, size_t len)
{
    return body(1, l, n, gz, len);
}

char *mt_push_read_auth(const char *path, char *buf, size_t cap, const char **why)
{
    /* (a symbolic link is followed: Kubernetes mounts secrets through
     * them, root's; one another user planted, in a shared directory, is
     * not: it could hand us any 0600 file of root's to send as a token) */
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid != geteuid() &&
        st.st_uid != 0) {
        *why = "a symbolic link of another user";
        return NULL;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(buf, cap, "%s", strerror(errno));
        *why = buf;
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode) || (st.st_mode & 077)) {
        close(fd);
        *why = S_ISREG(st.st_mode) ? "readable by others than its owner (chmod 600 it)"
                                   : "not a regular file";
        return NULL;
    }
    if (st.st_uid != geteuid() && st.st_uid != 0) {
        close(fd);
        *why = "owned by another user (not root)";
        return NULL;
    }
    char line[4096];
    ssize_t k = read(fd, line, sizeof line - 1);
    close(fd);
    if (k < 0) {
        snprintf(buf, cap, "%s", strerror(errno));
        *why = buf;
        return NULL;
    }
    line[k] = '\0';
    line[strcspn(line, "\r\n")] = '\0';
    if (!line[0] || (strncmp(line, "Bearer ", 7) != 0 && !strchr(line, ':'))) {
        *why = "expected one line: 'Bearer TOKEN' or 'USER:PASSWORD'";
        return NULL;
    }
    char *r = strdup(line);
    if (!r)
        *why = "out of memory";
    return r;
}

void mt_push_summary(const mt_push_stats *s, char *buf, size_t cap)
{
    unsigned long long dropped = s->dropped_full + s->dropped_rejected + s->dropped_gave_up +
                                 s->dropped_exit;
    int k = snprintf(buf, cap, "push: %llu sent, %llu dropped", s->sent, dropped);
    if (k < 0 || (size_t)k >= cap)
        return;
    if (dropped) {
        const char *sep = " (";
        struct {
            unsigned long long n;
            const char *what;
        } r[] = {
            { s->dropped_full, "queue full" },
            { s->dropped_rejected, "refused by the server" },
            { s->dropped_gave_up, "retries exhausted" },
            { s->dropped_exit, "undelivered at exit" },
        };
        for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
            if (!r[i].n)
                continue;
            k += snprintf(buf + k, cap - (size_t)k, "%s%llu %s", sep, r[i].n, r[i].what);
            sep = ", ";
            if ((size_t)k >= cap)
                return;
        }
        if (s->last_error[0])
            k += snprintf(buf + k, cap - (size_t)k, "; last: %s", s->last_error);
        if ((size_t)k < cap)
            snprintf(buf + k, cap - (size_t)k, ")");
    }
    if (s->retried && (size_t)k < cap)
        snprintf(buf + strlen(buf), cap - strlen(buf), ", %llu retries", s->retried);
}
