/*
 * rssformat.c - TRACE.rss's lines, written and read (rssformat.h): the
 * one place that knows the header, the sample line and the ledger line.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rssformat.h"

/* The ledger's numeric keys, in the order they are written. */
static const struct {
    const char *key;
    size_t off;
} keys[] = {
    {"rss", offsetof(mt_rssf_ledger, rss)},
    {"pss", offsetof(mt_rssf_ledger, pss)},
    {"swap", offsetof(mt_rssf_ledger, swap)},
    {"anon", offsetof(mt_rssf_ledger, anon)},
    {"brk", offsetof(mt_rssf_ledger, brk)},
    {"stack", offsetof(mt_rssf_ledger, stack)},
    {"threads", offsetof(mt_rssf_ledger, threads)},
    {"mod", offsetof(mt_rssf_ledger, mod)},
    {"file", offsetof(mt_rssf_ledger, file)},
    {"shm", offsetof(mt_rssf_ledger, shm)},
    {"own", offsetof(mt_rssf_ledger, own)},
    {"a_inuse", offsetof(mt_rssf_ledger, a_inuse)},
    {"a_free", offsetof(mt_rssf_ledger, a_free)},
    {"a_meta", offsetof(mt_rssf_ledger, a_meta)},
    {"a_retained", offsetof(mt_rssf_ledger, a_retained)},
    {"a_commit", offsetof(mt_rssf_ledger, a_commit)},
    {"cost_us", offsetof(mt_rssf_ledger, cost_us)},
};
#define NKEYS (sizeof keys / sizeof keys[0])

static int64_t *slot(mt_rssf_ledger *l, size_t i)
{
    return (int64_t *)((char *)l + keys[i].off);
}

void mt_rssf_ledger_clear(mt_rssf_ledger *l)
{
    memset(l, 0, sizeof *l);
    l->time_us = -1;
    for (size_t i = 0; i < NKEYS; i++)
        *slot(l, i) = -1;
}

int mt_rssf_header(char *buf, size_t cap, long pid, long long start_us)
{
    int n = snprintf(buf, cap, "memtrace-rss %d %ld %lld\n", MT_RSSF_VERSION, pid, start_us);
    return n < 0 || (size_t)n >= cap ? -1 : n;
}

int mt_rssf_parse_header(const char *line, int *version, unsigned long long *pid,
                         long long *start, const char **why)
{
    if (sscanf(line, "memtrace-rss %d %llu %lld", version, pid, start) != 3) {
        *why = "not a memtrace-rss header";
        return -1;
    }
    if (*version != 1 && *version != 2) {
        *why = "a memtrace-rss version this memtrace does not know (1 and 2 only)";
        return -1;
    }
    return 0;
}

static void put_num(char *s, size_t cap, long long v)
{
    if (v < 0)
        snprintf(s, cap, "-");
    else
        snprintf(s, cap, "%lld", v);
}

int mt_rssf_sample(char *buf, size_t cap, long long time_us, long long rss, long long heap,
                   long long mapped, long long peak)
{
    char h[24], m[24], p[24];
    put_num(h, sizeof h, heap);
    put_num(m, sizeof m, mapped);
    put_num(p, sizeof p, peak);
    int n = snprintf(buf, cap, "%lld %lld %s %s %s\n", time_us, rss, h, m, p);
    return n < 0 || (size_t)n >= cap ? -1 : n;
}

/* A decimal number >= 0 or "-" (-1) ending at a space, '=' not allowed,
 * the end or a newline. Returns 0, or -1 if neither. */
static int number(const char **s, int64_t *out)
{
    const char *p = *s;
    while (*p == ' ')
        p++;
    if (*p == '-' && (p[1] == ' ' || p[1] == '\0' || p[1] == '\n')) {
        *out = -1;
        *s = p + 1;
        return 0;
    }
    if (*p < '0' || *p > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (errno || v > INT64_MAX || (*end != ' ' && *end != '\0' && *end != '\n'))
        return -1;
    *out = (int64_t)v;
    *s = end;
    return 0;
}

int mt_rssf_parse_sample(const char *line, int64_t v[5], const char **why)
{
    const char *s = line;
    for (int i = 0; i < 5; i++)
        if (number(&s, &v[i]) != 0) {
            *why = "expected TIME_US RSS HEAP MAPPED PEAK (numbers or -)";
            return -1;
        }
    return 0;
}

int mt_rssf_ledger_line(char *buf, size_t cap, const mt_rssf_ledger *l)
{
    size_t n = 0;
    int k = snprintf(buf, cap, "L %lld", (long long)l->time_us);
    if (k < 0 || (size_t)k >= cap)
        return -1;
    n = (size_t)k;
    for (size_t i = 0; i < NKEYS; i++) {
        int64_t v = *(const int64_t *)((const char *)l + keys[i].off);
        if (v < 0)
            continue;
        k = snprintf(buf + n, cap - n, " %s=%lld", keys[i].key, (long long)v);
        if (k < 0 || (size_t)k >= cap - n)
            return -1;
        n += (size_t)k;
    }
    if (l->alloc[0]) {
        k = snprintf(buf + n, cap - n, " alloc=%s", l->alloc);
        if (k < 0 || (size_t)k >= cap - n)
            return -1;
        n += (size_t)k;
    }
    if (n + 2 > cap)
        return -1;
    buf[n++] = '\n';
    buf[n] = '\0';
    return (int)n;
}

int mt_rssf_is_ledger(const char *line)
{
    return line[0] == 'L' && line[1] == ' ';
}

int mt_rssf_parse_ledger(const char *line, mt_rssf_ledger *l, const char **why)
{
    mt_rssf_ledger_clear(l);
    const char *s = line + 2;
    if (!mt_rssf_is_ledger(line) || number(&s, &l->time_us) != 0 || l->time_us < 0) {
        *why = "expected L TIME_US KEY=VALUE...";
        return -1;
    }
    for (;;) {
        while (*s == ' ')
            s++;
        if (*s == '\n' || *s == '\0')
            return 0;
        const char *eq = s;
        while (*eq && *eq != '=' && *eq != ' ' && *eq != '\n')
            eq++;
        if (*eq != '=' || eq == s) {
            *why = "expected KEY=VALUE";
            return -1;
        }
        size_t klen = (size_t)(eq - s);
        const char *v = eq + 1;
        if (klen == 5 && memcmp(s, "alloc", 5) == 0) {
            size_t n = 0;
            while ((v[n] >= 'a' && v[n] <= 'z') || (v[n] >= '0' && v[n] <= '9'))
                n++;
            if (n == 0 || n >= sizeof l->alloc || (v[n] != ' ' && v[n] != '\n' && v[n])) {
                *why = "alloc= names an allocator in lower-case letters and digits";
                return -1;
            }
            memcpy(l->alloc, v, n);
            l->alloc[n] = '\0';
            s = v + n;
            continue;
        }
        int64_t *dst = NULL;
        for (size_t i = 0; i < NKEYS; i++)
            if (strlen(keys[i].key) == klen && memcmp(keys[i].key, s, klen) == 0)
                dst = slot(l, i);
        int64_t x;
        const char *p = v;
        if (*p == ' ' || *p == '-' || number(&p, &x) != 0) {
            if (dst) {
                *why = "a ledger value must be a number";
                return -1;
            }
            /* an unknown key with a value of another form: skipped */
            while (*p && *p != ' ' && *p != '\n')
                p++;
        } else if (dst) {
            *dst = x;
        }
        s = p;
    }
}
