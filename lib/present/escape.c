/*
 * escape.c - names from a trace made safe for a terminal: the one escaper
 * every text report uses for strings that come from a trace (function and
 * file names, executable, host, context). A trace can hold any bytes, and
 * raw escape sequences would let it retitle the terminal, clear the screen
 * or worse. Control characters (C0, DEL, C1 as UTF-8 or as lone bytes) and
 * bytes that are not UTF-8 are written as \xHH; everything else, including
 * non-ASCII UTF-8 text, is kept as is. Also JSON strings (mt_json_string),
 * which must be valid UTF-8 whatever the trace holds.
 */
#include <stdio.h>
#include <string.h>

#include "memtrace/present.h"

/* Length of the well-formed UTF-8 sequence of a non-ASCII character at p
 * that is not a C1 control, or 0 when the bytes must be escaped. */
static size_t utf8_ok(const unsigned char *p)
{
    unsigned c = p[0];
    if (c >= 0xc2 && c <= 0xdf)
        return (p[1] & 0xc0) == 0x80 && !(c == 0xc2 && p[1] < 0xa0) ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 && (p[3] & 0xc0) == 0x80 ? 4 : 0;
    }
    return 0;
}

/* Calls put(ctx, bytes, n) for the escaped text of s. */
static void escape(const char *s, void (*put)(void *, const char *, size_t), void *ctx)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        const unsigned char *run = p;
        while (*p >= 0x20 && *p < 0x7f)
            p++;
        if (p > run)
            put(ctx, (const char *)run, (size_t)(p - run));
        if (!*p)
            break;
        size_t n = *p >= 0x80 ? utf8_ok(p) : 0;
        if (n) {
            put(ctx, (const char *)p, n);
            p += n;
        } else {
            char e[4] = {'\\', 'x', hex[*p >> 4], hex[*p & 15]};
            put(ctx, e, 4);
            p++;
        }
    }
}

static void put_file(void *ctx, const char *s, size_t n)
{
    fwrite(s, 1, n, ctx);
}

void mt_text_put(FILE *out, const char *s)
{
    escape(s, put_file, out);
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
    escape(s, put_buf, &b);
    buf[b.len] = 0;
    return b.len;
}

void mt_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        const unsigned char *run = p;
        while (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
            p++;
        if (p > run)
            fwrite(run, 1, (size_t)(p - run), out);
        if (!*p)
            break;
        size_t n;
        switch (*p) {
        case '"': fputs("\\\"", out); p++; continue;
        case '\\': fputs("\\\\", out); p++; continue;
        case '\n': fputs("\\n", out); p++; continue;
        case '\t': fputs("\\t", out); p++; continue;
        case '\r': fputs("\\r", out); p++; continue;
        }
        if (*p >= 0x80 && (n = utf8_ok(p)) > 0) {
            fwrite(p, 1, n, out);
            p += n;
        } else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
            fprintf(out, "\\u%04x", p[1]); /* a C1 control */
            p += 2;
        } else if (*p < 0x80) {
            fprintf(out, "\\u%04x", *p); /* a control character */
            p++;
        } else {
            /* a byte that is not UTF-8: the replacement character, as the
             * viewer's JSON writes it, so that the JSON stays valid */
            fputs("\\ufffd", out);
            p++;
        }
    }
    fputc('"', out);
}
