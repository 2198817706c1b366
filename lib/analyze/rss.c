/*
 * rss.c - reads the resident-memory samples the recorder writes beside a
 * trace (TRACE.rss; lib/record/rss.c writes them, docs/format.md describes
 * them). Missing file: no samples, silently. A file of another recording
 * (other process id or start time: a stale file) is ignored with a
 * warning; a damaged line stops reading with a warning naming the line.
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/analyze.h"

#define MAX_LINE 256
#define MAX_POINTS ((size_t)1 << 24)   /* 19 days at 10 samples a second */

static void warnf(mt_warning_fn warn, void *ctx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void warnf(mt_warning_fn warn, void *ctx, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (warn)
        warn(ctx, msg);
    else
        fprintf(stderr, "memtrace: warning: %s\n", msg);
}

/* A decimal number >= 0 or "-" (-1). Returns 0, or -1 if neither. */
static int field(char **s, int64_t *out)
{
    char *p = *s;
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

mt_rss *mt_rss_load(const char *trace_path, const mt_model *m, mt_warning_fn warn, void *ctx)
{
    size_t plen = strlen(trace_path);
    char *path = malloc(plen + 5);
    if (!path)
        return NULL;
    memcpy(path, trace_path, plen);
    memcpy(path + plen, ".rss", 5);
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno != ENOENT)
            warnf(warn, ctx, "%s: %s; no resident memory shown", path, strerror(errno));
        free(path);
        return NULL;
    }
    const mt_trace_info *info = mt_model_info(m);
    char line[MAX_LINE + 2];
    mt_rss *r = NULL;
    unsigned long long pid = 0;
    long long start = 0;
    int version = 0;
    size_t lineno = 1, cap = 0;
    if (!fgets(line, sizeof line, f) ||
        sscanf(line, "memtrace-rss %d %llu %lld", &version, &pid, &start) != 3 || version != 1) {
        warnf(warn, ctx, "%s: line 1: not a memtrace-rss version 1 header; no resident memory shown",
              path);
        goto out;
    }
    if (pid != info->pid || start != info->start_time) {
        warnf(warn, ctx, "%s: written by another recording (pid %llu, start %lld; the trace: "
              "pid %llu, start %lld); no resident memory shown", path, pid, start,
              (unsigned long long)info->pid, (long long)info->start_time);
        goto out;
    }
    r = calloc(1, sizeof *r);
    if (!r)
        goto out;
    r->peak_rss = -1;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        const char *why = NULL;
        int64_t v[5];
        char *s = line;
        if (len == 0 || line[len - 1] != '\n')
            why = feof(f) ? "cut short" : "line too long";
        for (int i = 0; !why && i < 5; i++)
            if (field(&s, &v[i]) != 0)
                why = "expected TIME_US RSS HEAP MAPPED PEAK (numbers or -)";
        if (!why && (v[0] < 0 || v[1] < 0))
            why = "time and RSS must be numbers";
        mt_timedelta t = 0;
        if (!why && __builtin_sub_overflow(v[0], (int64_t)start, &t))
            why = "time out of range";
        if (!why && t < 0)
            why = "time before the trace's start";
        if (!why && r->n && t < r->p[r->n - 1].time)
            why = "time goes backwards";
        if (!why && r->n >= MAX_POINTS)
            why = "too many samples";
        if (why) {
            /* A process killed while writing leaves a last line cut short:
             * not worth a warning. */
            if (strcmp(why, "cut short") != 0)
                warnf(warn, ctx, "%s: line %zu: %s; resident memory shown up to there", path,
                      lineno, why);
            break;
        }
        if (r->n == cap) {
            size_t nc = cap ? cap * 2 : 256;
            mt_rss_point *np = realloc(r->p, nc * sizeof *np);
            if (!np)
                break;
            r->p = np;
            cap = nc;
        }
        mt_rss_point *p = &r->p[r->n++];
        p->time = t;
        p->rss = v[1];
        p->heap = v[2];
        p->mapped = v[3];
        p->peak = v[4];
        if (p->rss > r->peak_rss) {
            r->peak_rss = p->rss;
            r->peak_time = t;
        }
        if (p->peak > r->peak_rss)
            r->peak_rss = p->peak;   /* the kernel saw a higher point between samples */
    }
    if (r && r->n == 0) {
        mt_rss_free(r);
        r = NULL;
    }
out:
    fclose(f);
    free(path);
    return r;
}

void mt_rss_free(mt_rss *r)
{
    if (!r)
        return;
    free(r->p);
    free(r);
}
