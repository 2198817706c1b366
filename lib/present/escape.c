/*
 * escape.c - the one escaper of the project: text that comes from a trace
 * or from the outside (function and file names, executable, host, context,
 * command lines, module paths, file names given by the user) made safe for
 * each kind of output. A trace can hold any bytes: raw escape sequences
 * would let it retitle the terminal or clear the screen, lines it starts
 * with "::" are GitHub Actions workflow commands, and bytes that are not
 * UTF-8 make JSON, SVG and JUnit files that their readers reject.
 *
 * One UTF-8 validator (mt_utf8_char, lib/common/utf8.h: no overlong forms, no surrogates,
 * nothing past U+10FFFF, nothing cut short) under four escapers:
 *   terminal  control characters (C0, DEL, C1) and bytes that are not
 *             UTF-8 as \xHH; text that starts (after blanks) with "::" has
 *             its first ':' written \x3a, and "##[" its first '#' \x23, so
 *             that no line a report prints is a CI workflow command;
 *             everything else, non-ASCII UTF-8 included, as is
 *   JSON      a string's contents per RFC 8259, controls (C1 and DEL too)
 *             as \u00XX, each byte that is not UTF-8 as \ufffd
 *   XML       &lt; &gt; &amp; &quot; &apos;, tab, LF and CR as character
 *             references, and what XML 1.0 cannot hold at all (other C0
 *             controls, U+FFFE, U+FFFF, bytes that are not UTF-8) shown
 *             as \xHH, as on a terminal; C1 controls too
 *   CI data   the message of a workflow command (::error ...::MESSAGE):
 *             % as %25, CR as %0D, LF as %0A, the rest as on a terminal
 */
#include <stdio.h>
#include <string.h>

#include "memtrace/present.h"
#include "utf8.h"

static const char hex[] = "0123456789abcdef";

size_t mt_utf8_char(const char *str, size_t n)
{
    return mt_utf8_len(str, n);
}

static void put_hex(mt_put_fn put, void *ctx, unsigned char c)
{
    char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
    put(ctx, e, 4);
}

/* The character at p (n bytes left) is a C1 control (U+0080..U+009F)? */
static int is_c1(const unsigned char *p, size_t n)
{
    return n >= 2 && p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;
}

/* The byte or character at p, not ASCII-printable and not escaped by the
 * caller: a well-formed UTF-8 character other than a C1 control (for XML,
 * also other than U+FFFE and U+FFFF, which XML cannot hold) as it is,
 * anything else as \xHH. Returns the bytes consumed. */
static size_t put_char(mt_put_fn put, void *ctx, const unsigned char *p, const unsigned char *end,
                       int xml)
{
    size_t k = *p >= 0x80 && !is_c1(p, (size_t)(end - p))
                   ? mt_utf8_char((const char *)p, (size_t)(end - p)) : 0;
    if (xml && k == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe)
        k = 0;
    if (k) {
        put(ctx, (const char *)p, k);
        return k;
    }
    put_hex(put, ctx, *p);
    return 1;
}

/* A run of printable ASCII: at once, or (bytewise: into a buffer that may
 * be too small, which then stops at the first byte that does not fit; an
 * escape or a character is never cut) a byte at a time. */
static void put_run(mt_put_fn put, void *ctx, const unsigned char *p, size_t n, int bytewise)
{
    if (!bytewise) {
        put(ctx, (const char *)p, n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        put(ctx, (const char *)p + i, 1);
}

/* Terminal and CI data: ci != 0 encodes %, CR and LF for a workflow
 * command's message. */
static void text_escape(const char *s, size_t n, int ci, mt_put_fn put, void *ctx, int bytewise)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    /* the CI guard: "::" at the start (after blanks) */
    const unsigned char *q = p;
    while (q < end && *q == ' ')
        q++;
    if (end - q >= 2 && q[0] == ':' && q[1] == ':') {
        if (q > p)
            put_run(put, ctx, p, (size_t)(q - p), bytewise);
        put_hex(put, ctx, ':');
        p = q + 1;
    }
    while (p < end) {
        const unsigned char *run = p;
        while (p < end && *p >= 0x20 && *p < 0x7f && !(ci && *p == '%') &&
               !(*p == '#' && end - p >= 3 && p[1] == '#' && p[2] == '['))
            p++;
        if (p > run)
            put_run(put, ctx, run, (size_t)(p - run), bytewise);
        if (p == end)
            break;
        if (*p == '#') {          /* "##[": the old form of workflow commands */
            put_hex(put, ctx, '#');
            p++;
            continue;
        }
        if (ci && (*p == '%' || *p == '\r' || *p == '\n')) {
            put(ctx, *p == '%' ? "%25" : *p == '\r' ? "%0D" : "%0A", 3);
            p++;
            continue;
        }
        p += put_char(put, ctx, p, end, 0);
    }
}

void mt_text_escape_to(const char *s, size_t n, mt_put_fn put, void *ctx)
{
    text_escape(s, n, 0, put, ctx, 0);
}

void mt_ci_escape_to(const char *s, size_t n, mt_put_fn put, void *ctx)
{
    text_escape(s, n, 1, put, ctx, 0);
}

void mt_json_escape_to(const char *s, size_t n, mt_put_fn put, void *ctx)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        const unsigned char *run = p;
        while (p < end && *p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
            p++;
        if (p > run)
            put(ctx, (const char *)run, (size_t)(p - run));
        if (p == end)
            break;
        switch (*p) {
        case '"': put(ctx, "\\\"", 2); p++; continue;
        case '\\': put(ctx, "\\\\", 2); p++; continue;
        case '\n': put(ctx, "\\n", 2); p++; continue;
        case '\t': put(ctx, "\\t", 2); p++; continue;
        case '\r': put(ctx, "\\r", 2); p++; continue;
        }
        unsigned cp;
        size_t k;
        if (*p < 0x80) {
            cp = *p;              /* C0 or DEL */
            k = 1;
        } else if (is_c1(p, (size_t)(end - p))) {
            cp = p[1];
            k = 2;
        } else if ((k = mt_utf8_char((const char *)p, (size_t)(end - p))) > 0) {
            put(ctx, (const char *)p, k);
            p += k;
            continue;
        } else {
            /* not UTF-8: the replacement character, one per byte */
            put(ctx, "\\ufffd", 6);
            p++;
            continue;
        }
        char e[6] = {'\\', 'u', '0', '0', hex[cp >> 4], hex[cp & 15]};
        put(ctx, e, 6);
        p += k;
    }
}

void mt_xml_escape_to(const char *s, size_t n, mt_put_fn put, void *ctx)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        const unsigned char *run = p;
        while (p < end && *p >= 0x20 && *p < 0x7f && !strchr("<>&\"'", *p))
            p++;
        if (p > run)
            put(ctx, (const char *)run, (size_t)(p - run));
        if (p == end)
            break;
        const char *ent = NULL;
        switch (*p) {
        case '<': ent = "&lt;"; break;
        case '>': ent = "&gt;"; break;
        case '&': ent = "&amp;"; break;
        case '"': ent = "&quot;"; break;
        case '\'': ent = "&apos;"; break;
        case '\t': ent = "&#x9;"; break;
        case '\n': ent = "&#xa;"; break;
        case '\r': ent = "&#xd;"; break;
        }
        if (ent) {
            put(ctx, ent, strlen(ent));
            p++;
            continue;
        }
        p += put_char(put, ctx, p, end, 1);
    }
}

/* ---- on a FILE, into a buffer ---- */

void mt_put_file(void *ctx, const char *s, size_t n)
{
    fwrite(s, 1, n, ctx);
}

void mt_text_put(FILE *out, const char *s)
{
    mt_text_escape_to(s, strlen(s), mt_put_file, out);
}

void mt_ci_data_put(FILE *out, const char *s)
{
    mt_ci_escape_to(s, strlen(s), mt_put_file, out);
}

void mt_xml_put(FILE *out, const char *s)
{
    mt_xml_escape_to(s, strlen(s), mt_put_file, out);
}

void mt_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    mt_json_escape_to(s, strlen(s), mt_put_file, out);
    fputc('"', out);
}

typedef struct sbuf {
    char *buf;
    size_t cap, len;
    int full;
} sbuf;

static void put_buf(void *ctx, const char *s, size_t n)
{
    sbuf *b = ctx;
    if (b->full || b->len + n >= b->cap) {
        b->full = 1; /* never half an escape or half a character */
        return;
    }
    memcpy(b->buf + b->len, s, n);
    b->len += n;
}

size_t mt_text_escape(char *buf, size_t cap, const char *s)
{
    if (!cap)
        return 0;
    sbuf b = {buf, cap, 0, 0};
    text_escape(s, strlen(s), 0, put_buf, &b, 1);
    buf[b.len] = 0;
    return b.len;
}

static void count(void *ctx, const char *s, size_t n)
{
    (void)s;
    *(size_t *)ctx += n;
}

size_t mt_json_escaped_len(const char *s, size_t n)
{
    size_t len = 0;
    mt_json_escape_to(s, n, count, &len);
    return len;
}
