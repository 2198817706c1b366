/*
 * verdicts.c - TRACE.leaks, the leak verdicts the recorder's scan writes
 * at exit or on request (lib/record/leaks.c; docs/format.md, "Leak
 * verdicts"), written and read here:
 *
 *     memtrace-leaks 1 PID START_US
 *     scan TIME_US MODE LOST REACHABLE UNKNOWN DURATION_US MEMORY ROOT_BYTES HEAP_BYTES CPU_US
 *     ID lost|reachable
 *     ...
 *
 * one line per sampled block still live (ids of the trace, increasing);
 * a block the scan could not place (UNKNOWN) has no line. The writer runs
 * inside the profiled program and allocates nothing (verdicts.h).
 *
 * Reading: the file must be the trace's (PID and START_US as its header says) and
 * is opened as every file that goes with a trace is (mt_sidecar_open).
 * A line that does not parse, is longer than any the recorder writes
 * (MAX_LINE), or ids that do not increase, stop reading with a warning
 * "FILE.leaks: line N: reason"; the lines before it count. A last line
 * without its newline (a file cut short) is left out silently.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdsink.h"
#include "warn.h"
#include "runfiles.h"
#include "safefile.h"
#include "verdicts.h"

/* ---- writing ---- */

static void out_flush(mtt_verdicts_out *o)
{
    if (!o->err && mt_write_full(o->fd, o->buf, o->len, NULL) != 0)
        o->err = errno ? errno : EIO;
    o->len = 0;
}

static void out_str(mtt_verdicts_out *o, const char *s)
{
    for (; *s; s++) {
        if (o->len == sizeof o->buf)
            out_flush(o);
        o->buf[o->len++] = *s;
    }
}

static void out_num(mtt_verdicts_out *o, uint64_t v)
{
    char s[24];
    int n = (int)sizeof s - 1;
    s[n] = 0;
    do
        s[--n] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    out_str(o, s + n);
}

int mtt_verdicts_create(mtt_verdicts_out *o, const char *trace_path,
                        const mtt_verdicts_scan *scan, const char **why)
{
    o->len = 0;
    o->err = 0;
    if (mt_runname_side(o->path, sizeof o->path, trace_path, MT_RUNFILE_LEAKS) < 0) {
        *why = strerror(ENAMETOOLONG);
        return -1;
    }
    /* made anew under a temporary name and renamed over at the end */
    o->fd = mt_outfile_create(o->path, o->tmp, sizeof o->tmp, 0600, MT_OUTFILE_REGULAR, why);
    if (o->fd < 0)
        return -1;
    out_str(o, "memtrace-leaks 1 ");
    out_num(o, (uint64_t)scan->pid);
    out_str(o, " ");
    out_num(o, (uint64_t)scan->start_us);
    out_str(o, "\nscan ");
    out_num(o, (uint64_t)scan->scan_us);
    out_str(o, " ");
    out_str(o, scan->mode);
    const uint64_t f[] = { scan->lost, scan->reachable, scan->unknown, scan->duration_us,
                           scan->memory, scan->root_bytes, scan->heap_bytes, scan->cpu_us };
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
        out_str(o, " ");
        out_num(o, f[i]);
    }
    out_str(o, "\n");
    return 0;
}

void mtt_verdicts_put(mtt_verdicts_out *o, uint64_t id, int verdict)
{
    out_num(o, id);
    out_str(o, verdict == MT_VERDICT_LOST ? " lost\n" : " reachable\n");
}

int mtt_verdicts_finish(mtt_verdicts_out *o, const char **why)
{
    out_flush(o);
    if (o->err) {
        *why = strerror(o->err);
        close(o->fd);
        unlink(o->tmp);
        return -1;
    }
    return mt_outfile_finish(o->fd, o->tmp, o->path, why);
}

/* ---- reading ---- */

struct mtt_verdicts {
    int64_t time;
    uint64_t *ids;       /* increasing */
    uint8_t *v;          /* MT_VERDICT_* */
    size_t n, cap;
};

#define MAX_LINE 256   /* with its newline and NUL: the recorder's lines are < 200 bytes */

/* The next line into line (MAX_LINE bytes): 1, 0 at the end of the file
 * (or a last line without its newline), -1 for a line too long, -2 for one
 * with a NUL byte (the rest of either is skipped). */
static int next_line(FILE *f, char *line)
{
    if (!fgets(line, MAX_LINE, f))
        return 0;
    size_t len = strlen(line);
    if (len && line[len - 1] == '\n')
        return 1;
    if (len < MAX_LINE - 1 && feof(f))
        return 0;   /* cut short at the end */
    int c;
    while ((c = getc(f)) != EOF && c != '\n')
        ;
    return len < MAX_LINE - 1 ? -2 : -1;   /* -2: a NUL inside */
}

static int push(mtt_verdicts *v, uint64_t id, int verdict)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 256;
        uint64_t *ids = realloc(v->ids, cap * sizeof *ids);
        if (!ids)
            return -1;
        v->ids = ids;
        uint8_t *vv = realloc(v->v, cap);
        if (!vv)
            return -1;
        v->v = vv;
        v->cap = cap;
    }
    v->ids[v->n] = id;
    v->v[v->n++] = (uint8_t)verdict;
    return 0;
}

mtt_verdicts *mtt_verdicts_load(const char *trace_path, const mt_trace_info *info,
                                mt_warning_fn warn, void *ctx)
{
    size_t plen = strlen(trace_path) + sizeof MT_RUNFILE_LEAKS_SUFFIX;
    char *path = malloc(plen);
    if (!path)
        return NULL;
    if (mt_runname_side(path, plen, trace_path, MT_RUNFILE_LEAKS) < 0) {
        free(path);
        return NULL;
    }
    const char *why = NULL;
    int fd = mt_sidecar_open(path, trace_path, &why);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    mtt_verdicts *v = NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        else if (errno != ENOENT)
            mt_warnf(warn, ctx, "%s: %s; no leak verdicts", path, why);
        free(path);
        return NULL;
    }
    char line[MAX_LINE];
    unsigned long long pid = 0, id;
    long long start = 0, t = 0;
    int version = 0, got;
    if ((got = next_line(f, line)) != 1 ||
        sscanf(line, "memtrace-leaks %d %llu %lld", &version, &pid, &start) != 3 || version != 1) {
        mt_warnf(warn, ctx, "%s: line 1: %s; no leak verdicts", path,
                 got == -1 ? "longer than any the recorder writes (255 bytes)"
                           : "not a memtrace-leaks version 1 header");
        goto out;
    }
    if (pid != info->pid || start != (long long)info->start_time) {
        mt_warnf(warn, ctx, "%s: written by another recording (pid %llu, start %lld; the trace: "
              "pid %llu, start %lld); no leak verdicts", path, pid, start,
              (unsigned long long)info->pid, (long long)info->start_time);
        goto out;
    }
    if ((got = next_line(f, line)) != 1 || sscanf(line, "scan %lld", &t) != 1 || t < start) {
        mt_warnf(warn, ctx, "%s: line 2: %s; no leak verdicts", path,
                 got == -1 ? "longer than any the recorder writes (255 bytes)" : "not a scan line");
        goto out;
    }
    v = calloc(1, sizeof *v);
    if (!v)
        goto out;
    v->time = t;
    size_t lineno = 2;
    while ((got = next_line(f, line)) != 0) {
        lineno++;
        if (got == -1) {
            mt_warnf(warn, ctx, "%s: line %zu: longer than any the recorder writes (255 bytes); "
                     "the verdicts after it are not read", path, lineno);
            break;
        }
        char word[16];
        int verdict, end = 0;
        if (got < 0 || sscanf(line, "%llu %15s%n", &id, word, &end) != 2 || line[end] != '\n' ||
            !(verdict = !strcmp(word, "lost") ? MT_VERDICT_LOST
                        : !strcmp(word, "reachable") ? MT_VERDICT_REACHABLE : 0)) {
            mt_warnf(warn, ctx, "%s: line %zu: expected \"ID lost\" or \"ID reachable\"", path, lineno);
            break;
        }
        if (v->n && id <= v->ids[v->n - 1]) {
            mt_warnf(warn, ctx, "%s: line %zu: ids must increase", path, lineno);
            break;
        }
        if (push(v, id, verdict) != 0) {
            mt_warnf(warn, ctx, "%s: out of memory; no leak verdicts", path);
            mtt_verdicts_free(v);
            v = NULL;
            break;
        }
    }
out:
    fclose(f);
    free(path);
    return v;
}

int mtt_verdict_of(const mtt_verdicts *v, uint64_t id)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (v->ids[m] < id)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < v->n && v->ids[lo] == id ? v->v[lo] : MT_VERDICT_NONE;
}

int64_t mtt_verdicts_time(const mtt_verdicts *v)
{
    return v->time;
}

void mtt_verdicts_free(mtt_verdicts *v)
{
    if (!v)
        return;
    free(v->ids);
    free(v->v);
    free(v);
}
