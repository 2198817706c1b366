/*
 * json.c - the JSON text builder (see json.h). Strings are escaped per RFC
 * 8259 by the project's one escaper (mt_json_escape_to); bytes that are not
 * valid UTF-8 are replaced by U+FFFD so that the browser's JSON.parse (and
 * any strict reader) never rejects an answer because of odd symbol names.
 */
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/present.h"

void vj_init(vjson *j)
{
    memset(j, 0, sizeof *j);
}

void vj_free(vjson *j)
{
    free(j->buf);
    vj_init(j);
}

static void put(vjson *j, const char *s, size_t n)
{
    if (j->failed)
        return;
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 4096;
        while (cap < j->len + n + 1)
            cap *= 2;
        char *b = realloc(j->buf, cap);
        if (!b) {
            j->failed = 1;
            return;
        }
        j->buf = b;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = 0;
}

static void putc1(vjson *j, char c)
{
    put(j, &c, 1);
}

/* Before any value: a comma if the current level already has an item. */
static void before_value(vjson *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->depth > 0) {
        if (j->has_item[j->depth - 1])
            putc1(j, ',');
        j->has_item[j->depth - 1] = 1;
    }
}

char *vj_finish(vjson *j, size_t *len)
{
    if (j->failed || !j->buf) {
        vj_free(j);
        return NULL;
    }
    char *b = j->buf;
    if (len)
        *len = j->len;
    j->buf = NULL;
    vj_free(j);
    return b;
}

static void open_level(vjson *j, char c)
{
    before_value(j);
    putc1(j, c);
    if (j->depth >= VJ_MAX_DEPTH) {
        j->failed = 1;
        return;
    }
    j->has_item[j->depth++] = 0;
}

static void close_level(vjson *j, char c)
{
    if (j->depth > 0)
        j->depth--;
    putc1(j, c);
}

void vj_obj(vjson *j) { open_level(j, '{'); }
void vj_arr(vjson *j) { open_level(j, '['); }
void vj_end_obj(vjson *j) { close_level(j, '}'); }
void vj_end_arr(vjson *j) { close_level(j, ']'); }

static void put_cb(void *ctx, const char *s, size_t n)
{
    put(ctx, s, n);
}

/* A string literal: the one JSON escaper (lib/present/escape.c), whose
 * UTF-8 validator rejects overlong forms, surrogates and code points past
 * U+10FFFF. */
static void put_escaped(vjson *j, const char *str, size_t n)
{
    putc1(j, '"');
    mt_json_escape_to(str, n, put_cb, j);
    putc1(j, '"');
}

void vj_key(vjson *j, const char *key)
{
    before_value(j);
    put_escaped(j, key, strlen(key));
    putc1(j, ':');
    j->after_key = 1;
}

void vj_strn(vjson *j, const char *s, size_t n)
{
    before_value(j);
    put_escaped(j, s, n);
}

void vj_str(vjson *j, const char *s)
{
    if (!s) {
        vj_null(j);
        return;
    }
    vj_strn(j, s, strlen(s));
}

void vj_int(vjson *j, int64_t v)
{
    char b[32];
    before_value(j);
    int n = snprintf(b, sizeof b, "%lld", (long long)v);
    put(j, b, (size_t)n);
}

void vj_uint(vjson *j, uint64_t v)
{
    char b[32];
    before_value(j);
    int n = snprintf(b, sizeof b, "%llu", (unsigned long long)v);
    put(j, b, (size_t)n);
}

void vj_num(vjson *j, double v)
{
    char b[40];
    if (!isfinite(v)) {
        vj_null(j);
        return;
    }
    before_value(j);
    int n;
    if (v == (double)(int64_t)v && fabs(v) < 9e15)
        n = snprintf(b, sizeof b, "%lld", (long long)v);
    else
        n = snprintf(b, sizeof b, "%.10g", v);
    put(j, b, (size_t)n);
}

void vj_bool(vjson *j, int v)
{
    before_value(j);
    put(j, v ? "true" : "false", v ? 4 : 5);
}

void vj_null(vjson *j)
{
    before_value(j);
    put(j, "null", 4);
}

void vj_raw(vjson *j, const char *text)
{
    before_value(j);
    put(j, text, strlen(text));
}

void vj_cost(vjson *j, const mt_cost *c)
{
    before_value(j);
    mt_json_cost_to(c, put_cb, j);
}

void vj_kstr(vjson *j, const char *k, const char *s) { vj_key(j, k); vj_str(j, s); }
void vj_kint(vjson *j, const char *k, int64_t v) { vj_key(j, k); vj_int(j, v); }
void vj_kuint(vjson *j, const char *k, uint64_t v) { vj_key(j, k); vj_uint(j, v); }
void vj_knum(vjson *j, const char *k, double v) { vj_key(j, k); vj_num(j, v); }

void vj_knums(vjson *j, const char *k, const double *v, size_t n)
{
    vj_key(j, k);
    vj_arr(j);
    for (size_t i = 0; i < n; i++)
        vj_num(j, v[i]);
    vj_end_arr(j);
}
void vj_kbool(vjson *j, const char *k, int v) { vj_key(j, k); vj_bool(j, v); }
