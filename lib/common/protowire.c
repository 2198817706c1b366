/*
 * protowire.c - the protobuf wire format (protowire.h): the writer shared
 * by pprof.c and otlp.c, and the bounds-checked reader profile_read.c
 * decodes pprof input with. Written by hand: the schemas are small, and a
 * generated codec would need a code generator at build time and the whole
 * object graph in memory before packing.
 */
#include "protowire.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "utf8.h"

void mt_pb_need(mt_pb *p, size_t k)
{
    if (p->n + k <= p->cap)
        return;
    size_t c = p->cap ? p->cap : 256;
    while (c < p->n + k)
        c *= 2;
    uint8_t *nb = realloc(p->b, c);
    if (!nb) {
        p->oom = 1;
        p->n = 0;
        return;
    }
    p->b = nb;
    p->cap = c;
}

void mt_pb_varint(mt_pb *p, uint64_t v)
{
    mt_pb_need(p, 10);
    if (p->oom)
        return;
    while (v >= 0x80) {
        p->b[p->n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p->b[p->n++] = (uint8_t)v;
}

void mt_pb_uint_always(mt_pb *p, unsigned field, uint64_t v)
{
    mt_pb_varint(p, (uint64_t)field << 3);
    mt_pb_varint(p, v);
}

void mt_pb_uint(mt_pb *p, unsigned field, uint64_t v)
{
    if (v)
        mt_pb_uint_always(p, field, v);
}

void mt_pb_fixed64(mt_pb *p, unsigned field, uint64_t v)
{
    if (!v)
        return;
    mt_pb_varint(p, (uint64_t)field << 3 | 1);
    mt_pb_need(p, 8);
    if (p->oom)
        return;
    for (int i = 0; i < 8; i++)
        p->b[p->n++] = (uint8_t)(v >> (8 * i));
}

void mt_pb_bytes(mt_pb *p, unsigned field, const void *data, size_t len)
{
    mt_pb_varint(p, (uint64_t)field << 3 | 2);
    mt_pb_varint(p, len);
    mt_pb_need(p, len);
    if (p->oom)
        return;
    if (len)
        memcpy(p->b + p->n, data, len);
    p->n += len;
}

void mt_pb_utf8(mt_pb *p, unsigned field, const char *s)
{
    static const char repl[] = "\xef\xbf\xbd";
    size_t n = strlen(s), len = 0;
    for (size_t i = 0; i < n;) {
        size_t k = mt_utf8_len(s + i, n - i);
        len += k ? k : 3;
        i += k ? k : 1;
    }
    if (len == n) {
        mt_pb_bytes(p, field, s, n);
        return;
    }
    mt_pb_varint(p, (uint64_t)field << 3 | 2);
    mt_pb_varint(p, len);
    mt_pb_need(p, len);
    if (p->oom)
        return;
    for (size_t i = 0; i < n;) {
        size_t k = mt_utf8_len(s + i, n - i);
        memcpy(p->b + p->n, k ? s + i : repl, k ? k : 3);
        p->n += k ? k : 3;
        i += k ? k : 1;
    }
}

void mt_pb_msg(mt_pb *p, unsigned field, mt_pb *sub)
{
    if (sub->oom)
        p->oom = 1;
    mt_pb_bytes(p, field, sub->b, sub->n);
    sub->n = 0;
}

void mt_pb_packed(mt_pb *p, unsigned field, const uint64_t *v, size_t n, mt_pb *tmp)
{
    tmp->n = 0;
    for (size_t i = 0; i < n; i++)
        mt_pb_varint(tmp, v[i]);
    mt_pb_msg(p, field, tmp);
}

void mt_pb_free(mt_pb *p)
{
    free(p->b);
    p->b = NULL;
    p->n = p->cap = 0;
}

static uint64_t shash(const char *s)
{
    return mt_fnv1a(MT_FNV_OFFSET ^ mt_hash_seed(), s);   /* keyed: names come from the trace */
}

uint64_t mt_pb_str_index(mt_pb_strtab *t, const char *s)
{
    if ((t->n + 1) * 2 > t->mask + 1) {
        size_t cap = t->mask ? (t->mask + 1) * 2 : 256;
        uint32_t *ns = calloc(cap, sizeof *ns);
        const char **nv = realloc(t->v, cap * sizeof *nv);
        if (!ns || !nv) {
            free(ns);
            if (nv)
                t->v = nv;
            t->oom = 1;
            return 0;
        }
        t->v = nv;
        for (size_t i = 0; i < t->n; i++) {
            size_t j = shash(t->v[i]) & (cap - 1);
            while (ns[j])
                j = (j + 1) & (cap - 1);
            ns[j] = (uint32_t)i + 1;
        }
        free(t->slots);
        t->slots = ns;
        t->mask = cap - 1;
    }
    size_t j = shash(s) & t->mask;
    while (t->slots[j]) {
        if (!strcmp(t->v[t->slots[j] - 1], s))
            return t->slots[j] - 1;
        j = (j + 1) & t->mask;
    }
    t->v[t->n] = s;
    t->slots[j] = (uint32_t)++t->n;
    return t->n - 1;
}

void mt_pb_strtab_free(mt_pb_strtab *t)
{
    free(t->v);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

/* ---- reading ---- */

int mt_pb_fail(mt_pb_in *d, const uint8_t *at, const char *fmt, ...)
{
    if (d->failed)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->why, sizeof d->why, fmt, ap);
    va_end(ap);
    d->why_off = (size_t)(at - d->base);
    d->failed = 1;
    return -1;
}

int mt_pb_read_varint(mt_pb_in *d, uint64_t *out)
{
    const uint8_t *start = d->p;
    uint64_t v = 0;
    for (unsigned i = 0; i < 10; i++) {
        if (d->p >= d->end)
            return mt_pb_fail(d, start, "truncated varint");
        uint8_t b = *d->p++;
        if (i == 9 && b > 1)
            return mt_pb_fail(d, start, "varint beyond 64 bits");
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return mt_pb_fail(d, start, "varint longer than 10 bytes");
}

int mt_pb_read_key(mt_pb_in *d, uint64_t *field, unsigned *wt)
{
    const uint8_t *at = d->p;
    uint64_t k;
    if (mt_pb_read_varint(d, &k) < 0)
        return -1;
    *field = k >> 3;
    *wt = (unsigned)(k & 7);
    if (*field == 0)
        return mt_pb_fail(d, at, "field number 0");
    if (*wt != MT_PB_VARINT && *wt != MT_PB_I64 && *wt != MT_PB_LEN && *wt != MT_PB_I32)
        return mt_pb_fail(d, at, "field %llu: wire type %u (groups or unknown) not allowed",
                          (unsigned long long)*field, *wt);
    return 0;
}

int mt_pb_read_len(mt_pb_in *d, mt_pb_in *sub)
{
    const uint8_t *at = d->p;
    uint64_t n;
    if (mt_pb_read_varint(d, &n) < 0)
        return -1;
    if (n > (uint64_t)(d->end - d->p))
        return mt_pb_fail(d, at, "length %llu beyond the %zu bytes left", (unsigned long long)n,
                          (size_t)(d->end - d->p));
    *sub = *d;
    sub->end = d->p + n;
    d->p += n;
    return 0;
}

int mt_pb_skip(mt_pb_in *d, unsigned wt)
{
    uint64_t v;
    mt_pb_in s;
    switch (wt) {
    case MT_PB_VARINT: return mt_pb_read_varint(d, &v);
    case MT_PB_LEN: return mt_pb_read_len(d, &s);
    case MT_PB_I64:
    case MT_PB_I32: {
        size_t n = wt == MT_PB_I64 ? 8 : 4;
        if ((size_t)(d->end - d->p) < n)
            return mt_pb_fail(d, d->p, "truncated fixed-size field");
        d->p += n;
        return 0;
    }
    }
    return mt_pb_fail(d, d->p, "bad wire type %u", wt);
}

int mt_pb_up(mt_pb_in *d, const mt_pb_in *sub)
{
    if (!sub->failed)
        return 0;
    memcpy(d->why, sub->why, sizeof d->why);
    d->why_off = sub->why_off;
    d->failed = 1;
    return -1;
}
