/*
 * protowire.c - the protobuf wire writer shared by pprof.c and otlp.c
 * (protowire.h). Written by hand: the schemas are small, and a generated
 * encoder would need a code generator at build time and the whole object
 * graph in memory before packing.
 */
#include "protowire.h"

#include <stdlib.h>
#include <string.h>

#include "memtrace/present.h"
#include "hash.h"

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
        size_t k = mt_utf8_char(s + i, n - i);
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
        size_t k = mt_utf8_char(s + i, n - i);
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
