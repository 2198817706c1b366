/*
 * rss.c - reads the resident-memory samples the recorder writes beside a
 * trace (TRACE.rss; lib/record/rss.c writes them, docs/format.md describes
 * them). Missing file: no samples, silently. A file of another recording
 * (other process id or start time: a stale file) is ignored with a
 * warning; a damaged line stops reading with a warning naming the line.
 * The pieces of a rotated recording read together (mt_rss_load_many):
 * every piece's own TRACE.partNNNN.rss, joined.
 *
 * The file is opened as every companion of a trace is (mt_sidecar_open):
 * a link, a FIFO or another user's file is refused with a warning.
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "warn.h"
#include "memtrace/analyze.h"
#include "memtrace/trace.h"
#include "merge.h"
#include "runfiles.h"
#include "vec.h"
#include "safefile.h"
#include "rssformat.h"

#define MAX_LINE MT_RSSF_MAX_LINE
#define MAX_POINTS ((size_t)1 << 24)   /* 19 days at 10 samples a second */

/* TRACE_PATH.rss of the recording of process want_pid that started at
 * want_start, its times made relative to base (the model's start). */
/* A new point at the end of r's array (*cap its capacity), or NULL if
 * there is no memory for it. */
static mt_rss_point *grow_one(mt_rss *r, size_t *cap)
{
    if (MT_VEC_ROOM(r->p, r->n, *cap, 256) < 0)
        return NULL;
    return &r->p[r->n++];
}

/* A new ledger reading at the end of r's readings. */
static mt_rss_reading *grow_reading(mt_rss *r, size_t *cap)
{
    if (MT_VEC_ROOM(r->l, r->nl, *cap, 64) < 0)
        return NULL;
    return &r->l[r->nl++];
}

static void reading_of(mt_rss_reading *o, const mt_rssf_ledger *l, mt_timedelta t)
{
    o->time = t;
    o->rss = l->rss;
    o->pss = l->pss;
    o->swap = l->swap;
    o->anon = l->anon;
    o->brk = l->brk;
    o->stack = l->stack;
    o->threads = l->threads;
    o->mod = l->mod;
    o->file = l->file;
    o->shm = l->shm;
    o->own = l->own;
    o->a_inuse = l->a_inuse;
    o->a_free = l->a_free;
    o->a_meta = l->a_meta;
    o->a_retained = l->a_retained;
    o->a_commit = l->a_commit;
    o->cost_us = l->cost_us;
    memcpy(o->alloc, l->alloc, sizeof o->alloc);
}

static mt_rss *rss_read(const char *trace_path, uint64_t want_pid, int64_t want_start,
                        int64_t base, mt_warning_fn warn, void *ctx)
{
    size_t path_cap = strlen(trace_path) + sizeof MT_RUNFILE_RSS_SUFFIX;
    char *path = malloc(path_cap);
    if (!path)
        return NULL;
    mt_runname side = { .kind = MT_RUNFILE_RSS };
    mt_runname_make(path, path_cap, trace_path, &side);
    /* Regular, not a link, never blocking, the trace owner's or ours
     * (another user may have planted it beside the trace: safefile.h). */
    const char *why = NULL;
    int fd = mt_sidecar_open(path, trace_path, &why);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        else if (errno != ENOENT)
            mt_warnf(warn, ctx, "%s: %s; no resident memory shown", path, why);
        free(path);
        return NULL;
    }
    char line[MAX_LINE + 2];
    mt_rss *r = NULL;
    unsigned long long pid = 0;
    long long start = 0;
    int version = 0;
    size_t lineno = 1, cap = 0, lcap = 0;
    const char *hwhy = "empty";
    if (!fgets(line, sizeof line, f) ||
        mt_rssf_parse_header(line, &version, &pid, &start, &hwhy) != 0) {
        mt_warnf(warn, ctx, "%s: line 1: %s; no resident memory shown", path, hwhy);
        goto out;
    }
    if (pid != want_pid || start != want_start) {
        mt_warnf(warn, ctx, "%s: written by another recording (pid %llu, start %lld; the trace: "
              "pid %llu, start %lld); no resident memory shown", path, pid, start,
              (unsigned long long)want_pid, (long long)want_start);
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
        if (len == 0 || line[len - 1] != '\n')
            why = feof(f) ? "cut short" : "line too long";
        if (!why && version >= 2 && mt_rssf_is_ledger(line)) {
            mt_rssf_ledger l;
            mt_timedelta t = 0;
            if (mt_rssf_parse_ledger(line, &l, &why) == 0) {
                if (l.time_us < start)
                    why = "time before the trace's start";
                else if (__builtin_sub_overflow(l.time_us, base, &t))
                    why = "time out of range";
                else if (r->nl && t < r->l[r->nl - 1].time)
                    why = "time goes backwards";
                else if (r->nl >= MAX_POINTS)
                    why = "too many samples";
            }
            if (!why) {
                mt_rss_reading *o = grow_reading(r, &lcap);
                if (!o)
                    break;
                reading_of(o, &l, t);
                continue;
            }
        }
        if (!why)
            mt_rssf_parse_sample(line, v, &why);
        if (!why && (v[0] < 0 || v[1] < 0))
            why = "time and RSS must be numbers";
        mt_timedelta t = 0;
        if (!why && v[0] < start)
            why = "time before the trace's start";
        if (!why && __builtin_sub_overflow(v[0], base, &t))
            why = "time out of range";
        if (!why && r->n && t < r->p[r->n - 1].time)
            why = "time goes backwards";
        if (!why && r->n >= MAX_POINTS)
            why = "too many samples";
        if (why) {
            /* A process killed while writing leaves a last line cut short:
             * not worth a warning. */
            if (strcmp(why, "cut short") != 0)
                mt_warnf(warn, ctx, "%s: line %zu: %s; resident memory shown up to there", path,
                      lineno, why);
            break;
        }
        mt_rss_point *p = grow_one(r, &cap);
        if (!p)
            break;
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

mt_rss *mt_rss_load(const char *trace_path, const mt_model *m, mt_warning_fn warn, void *ctx)
{
    const mt_trace_info *info = mt_model_info(m);
    return rss_read(trace_path, info->pid, info->start_time, info->start_time, warn, ctx);
}

/* Pieces of one rotated recording (or any traces of one process, in time
 * order): each piece's own .rss, checked against that piece's header,
 * joined in time order on the model's clock. */
static mt_rss *rss_join(const char *const *trace_paths, size_t n, const mt_model *m,
                        mt_warning_fn warn, void *ctx)
{
    if (n == 1)
        return mt_rss_load(trace_paths[0], m, warn, ctx);
    const mt_trace_info *info = mt_model_info(m);
    uint64_t *pid = calloc(n, sizeof *pid);
    int64_t *start = calloc(n, sizeof *start);
    size_t *order = calloc(n, sizeof *order);
    mt_rss *all = calloc(1, sizeof *all);
    int one_process = pid && start && order && all;
    for (size_t i = 0; i < n && one_process; i++) {
        mt_reader_options ro = {.skip_backtraces = 1};
        mt_reader *r = mt_reader_open(trace_paths[i], &ro, NULL);
        if (!r) {
            one_process = 0;
            break;
        }
        pid[i] = mt_reader_info(r)->pid;
        start[i] = mt_reader_info(r)->start_time;
        mt_reader_close(r);
        one_process = pid[i] == info->pid;
        /* insertion sort by start: a handful of pieces */
        size_t k = i;
        while (k > 0 && start[order[k - 1]] > start[i]) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = i;
    }
    if (!one_process) {
        /* traces of several processes: one resident memory does not
         * describe them; the first trace's, as before */
        free(pid);
        free(start);
        free(order);
        mt_rss_free(all);
        return mt_rss_load(trace_paths[0], m, warn, ctx);
    }
    all->peak_rss = -1;
    size_t cap = 0, lcap = 0;
    for (size_t j = 0; j < n; j++) {
        size_t i = order[j];
        mt_rss *r = rss_read(trace_paths[i], pid[i], start[i], info->start_time, warn, ctx);
        if (!r)
            continue;
        for (size_t k = 0; k < r->n; k++) {
            if (all->n && r->p[k].time < all->p[all->n - 1].time)
                continue; /* pieces overlap: keep the time order */
            mt_rss_point *p = grow_one(all, &cap);
            if (!p)
                break;
            *p = r->p[k];
        }
        for (size_t k = 0; k < r->nl; k++) {
            if (all->nl && r->l[k].time < all->l[all->nl - 1].time)
                continue;
            mt_rss_reading *o = grow_reading(all, &lcap);
            if (!o)
                break;
            *o = r->l[k];
        }
        if (r->peak_rss > all->peak_rss) {
            all->peak_rss = r->peak_rss;
            all->peak_time = r->peak_time;
        }
        mt_rss_free(r);
    }
    free(pid);
    free(start);
    free(order);
    if (all->n == 0) {
        mt_rss_free(all);
        return NULL;
    }
    return all;
}

mt_rss *mt_rss_load_many(const char *const *trace_paths, size_t n, const mt_model *m,
                         mt_warning_fn warn, void *ctx)
{
    /* the traces themselves: the sidecars a glob picked up are not */
    const char **kept = malloc((n ? n : 1) * sizeof *kept);
    if (!kept)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!mta_is_rss_sidecar(trace_paths[i]))
            kept[k++] = trace_paths[i];
    mt_rss *r = k ? rss_join(kept, k, m, warn, ctx) : NULL;
    free(kept);
    return r;
}

void mt_rss_free(mt_rss *r)
{
    if (!r)
        return;
    free(r->p);
    free(r->l);
    free(r);
}
