/*
 * scan.c - the events of a trace in file order with the codec alone
 * (mt_scan_events, memtrace/stream.h): no backtraces, no stacks, only the
 * blocks still live (object id -> index in the file, samples), so a pass
 * that needs times and sizes but no stacks (the peak, a curve of
 * allocations chosen by an earlier pass) costs about as much as reading
 * the file. Blocks are matched to their collections as a folded model
 * does (buildfold.c, add_folded): an id allocated again while live leaves the
 * older block never collected; a collection of an unknown id is ignored;
 * a collection earlier than its allocation counts at the allocation.
 * Read on two threads where a folded model would be (mta_read_threads):
 * one decodes, the caller's meets the events with the live blocks.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "route.h"
#include "pipe.h"
#include "memtrace/stream.h"

static void quiet(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
}

/* The pass's state, the same on one thread or two. */
typedef struct scan {
    mt_scan_fn fn;
    void *ctx;
    mt_scan_result *out;
    mta_live live;
    mt_timedelta last;
    uint64_t total;
    int stop;                    /* -1 out of memory, -2 fn stopped, -3 samples overflow */
} scan;

static void scan_event(scan *s, int kind, mt_timedelta time, uint64_t id, uint64_t n_samples)
{
    mt_scan_result *out = s->out;
    if (time < s->last)
        out->monotone = 0;
    s->last = time;
    if (time > out->end)
        out->end = time;
    if (kind == MT_EVENT_ALLOC) {
        /* the model's limit (alloc_of in buildread.c): past it the sums
         * that callers keep in int64_t would overflow */
        if (n_samples > MTA_MAX_SAMPLES - s->total) {
            s->stop = -3;
            return;
        }
        s->total += n_samples;
        mta_live_rec old;
        int had;
        mta_live_rec *rec = mta_live_add(&s->live, id, &old, &had);
        if (!rec) {
            s->stop = -1;
            return;
        }
        if (had) {
            /* the older block of this id is never collected */
            out->n_live++;
            if (old.a.time < out->first_live)
                out->first_live = old.a.time;
        }
        rec->a.time = time;
        rec->a.n_samples = n_samples;
        rec->seq = out->n_allocs++;
        if (s->fn(s->ctx, time, rec->seq, n_samples, 0, time) < 0)
            s->stop = -2;
    } else if (kind == MT_EVENT_COLLECT) {
        mta_live_rec *rec = mta_live_find(&s->live, id);
        if (!rec)
            return;
        mt_timedelta t = time < rec->a.time ? rec->a.time : time, at = rec->a.time;
        uint64_t seq = rec->seq, samples = rec->a.n_samples;
        mta_live_remove(&s->live, rec);
        if (s->fn(s->ctx, t, seq, samples, 1, at) < 0)
            s->stop = -2;
    }
}

/* Two threads (as a folded model is read, buildpipe.c and pipe.h): this one
 * decodes, the caller's thread meets the events with the live blocks. */
typedef struct scan_reader {
    mt_reader *r;
    mta_pipe *p;
} scan_reader;

static void *scan_read_main(void *arg)
{
    scan_reader *sr = arg;
    mt_event ev;
    for (;;) {
        mta_batch *b = mta_pipe_free_batch(sr->p);
        if (!b)
            return NULL;   /* the caller stopped */
        int status = MTA_PIPE_MORE;
        while (b->n < MTA_PIPE_EVENTS) {
            int rc = mt_reader_next(sr->r, &ev);
            if (rc <= 0) {
                status = rc == 0 ? MTA_PIPE_END : MTA_PIPE_READ_ERROR;
                break;
            }
            mta_pipe_ev *e = &b->ev[b->n++];
            e->kind = (uint8_t)ev.kind;
            e->time = ev.time;
            e->id = ev.id;
            e->n_samples = ev.n_samples;
        }
        b->offset = mt_reader_offset(sr->r);
        b->status = status;
        mta_pipe_put(sr->p, status != MTA_PIPE_MORE);
        if (status != MTA_PIPE_MORE)
            return NULL;
    }
}

/* The events of r through s on two threads: 1 at the end, -1 when the
 * reader failed (its error stays in r), 0 when s stopped; -2 when the
 * thread could not start (nothing read: one thread then). */
static int scan_two(scan *s, mt_reader *r, mt_progress_fn progress, void *progress_ctx)
{
    mta_pipe p;
    if (mta_pipe_init(&p) < 0)
        return -2;
    scan_reader sr = {r, &p};
    pthread_t th;
    if (mta_pipe_start(&th, scan_read_main, &sr) != 0) {
        mta_pipe_destroy(&p);
        return -2;
    }
    int status = MTA_PIPE_MORE;
    uint64_t n = 0;
    while (status == MTA_PIPE_MORE && !s->stop) {
        mta_batch *b = mta_pipe_take(&p);
        for (size_t i = 0; i < b->n && !s->stop; i++) {
            const mta_pipe_ev *e = &b->ev[i];
            scan_event(s, e->kind, e->time, e->id, e->n_samples);
        }
        uint64_t before = n;
        n += b->n;
        if (progress && n >> 20 != before >> 20)   /* every 2^20 events, as one thread */
            progress(progress_ctx, b->offset, mt_reader_size(r));
        status = b->status;
        mta_pipe_release(&p);
    }
    if (s->stop)
        mta_pipe_stop(&p);
    pthread_join(th, NULL);
    mta_pipe_destroy(&p);
    return s->stop ? 0 : status == MTA_PIPE_END ? 1 : -1;
}

int mt_scan_events(const char *path, mt_scan_fn fn, void *ctx, mt_progress_fn progress,
                   void *progress_ctx, mt_scan_result *out, char **err)
{
    mt_reader_options o = {.on_warning = quiet, .skip_backtraces = 1};
    if (err)
        *err = NULL;
    memset(out, 0, sizeof *out);
    out->monotone = 1;
    out->first_live = MT_TIME_NEVER;
    mt_reader *r = mt_reader_open(path, &o, err);
    if (!r)
        return -1;
    scan s = {.fn = fn, .ctx = ctx, .out = out};
    int rc = mta_read_threads(0) == 2 ? scan_two(&s, r, progress, progress_ctx) : -2;
    if (rc == -2) {   /* one thread */
        mt_event ev;
        uint64_t n = 0;
        while (!s.stop && (rc = mt_reader_next(r, &ev)) == 1) {
            if (progress && ++n % (1u << 20) == 0)
                progress(progress_ctx, mt_reader_offset(r), mt_reader_size(r));
            scan_event(&s, ev.kind, ev.time, ev.id, ev.n_samples);
        }
    } else if (rc == 1) {
        rc = 0;
    }
    /* rc: 0 the end (or stopped), -1 the reader's error */
    int stop = s.stop;
    mta_live *live = &s.live;
    if (!stop && rc < 0 && err)
        *err = strdup(mt_reader_error(r));
    if (!stop && rc == 0 && mt_reader_end_time(r) > out->end)
        out->end = mt_reader_end_time(r);
    for (size_t i = 0; !stop && rc == 0 && i < live->n_pool; i++)
        if (live->pool[i].seq != UINT64_MAX) {
            out->n_live++;
            if (live->pool[i].a.time < out->first_live)
                out->first_live = live->pool[i].a.time;
        }
    if (stop == -1 && err)
        *err = strdup("out of memory");
    if (stop == -3 && err)
        *err = strdup("sample counts add up to more than 2^62 (a damaged or forged trace)");
    mta_live_free(live);
    mt_reader_close(r);
    return stop || rc < 0 ? -1 : 0;
}

static int peak_event(void *ctx, mt_timedelta t, uint64_t seq, uint64_t samples, int collect,
                      mt_timedelta alloc_time)
{
    (void)seq;
    (void)alloc_time;
    int64_t d = collect ? -(int64_t)samples : (int64_t)samples;
    mt_curve_acc_event(ctx, t, d, d, 0);
    return 0;
}

int mt_scan_peak(const char *path, mt_progress_fn progress, void *progress_ctx,
                 mt_timedelta *peak, char **err)
{
    if (err)
        *err = NULL;
    mt_curve_acc *acc = mt_curve_acc_new(1, 1);
    if (!acc) {
        if (err)
            *err = strdup("out of memory");
        return -1;
    }
    mt_scan_result res;
    int rc = mt_scan_events(path, peak_event, acc, progress, progress_ctx, &res, err);
    mt_curve *c = rc == 0 && res.monotone ? mt_curve_acc_result(acc, 1.0, 0) : NULL;
    mt_curve_acc_free(acc);
    if (rc < 0)
        return -1;
    if (!res.monotone)
        return 1;
    if (!c) {
        if (err)
            *err = strdup("out of memory");
        return -1;
    }
    *peak = c->peak_filtered_time;
    mt_curve_free(c);
    return 0;
}
