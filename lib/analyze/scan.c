/*
 * scan.c - the events of a trace in file order with the codec alone
 * (mt_scan_events, memtrace/stream.h): no backtraces, no stacks, only the
 * blocks still live (object id -> index in the file, samples), so a pass
 * that needs times and sizes but no stacks (the peak, a curve of
 * allocations chosen by an earlier pass) costs about as much as reading
 * the file. Blocks are matched to their collections as a folded model
 * does (model.c, add_folded): an id allocated again while live leaves the
 * older block never collected; a collection of an unknown id is ignored;
 * a collection earlier than its allocation counts at the allocation.
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "memtrace/stream.h"

static void quiet(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
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
    mta_live live = {0};
    mt_event ev;
    mt_timedelta last = 0;
    uint64_t n = 0, total = 0;
    int rc, stop = 0;
    while (!stop && (rc = mt_reader_next(r, &ev)) == 1) {
        if (ev.time < last)
            out->monotone = 0;
        last = ev.time;
        if (ev.time > out->end)
            out->end = ev.time;
        if (progress && ++n % (1u << 20) == 0)
            progress(progress_ctx, mt_reader_offset(r), mt_reader_size(r));
        if (ev.kind == MT_EVENT_ALLOC) {
            /* the model's limit (alloc_of in model.c): past it the sums
             * that callers keep in int64_t would overflow */
            if (ev.n_samples > MTA_MAX_SAMPLES - total) {
                stop = -3;
                break;
            }
            total += ev.n_samples;
            mta_live_rec old;
            int had;
            mta_live_rec *rec = mta_live_add(&live, ev.id, &old, &had);
            if (!rec) {
                stop = -1;
                break;
            }
            if (had) {
                /* the older block of this id is never collected */
                out->n_live++;
                if (old.a.time < out->first_live)
                    out->first_live = old.a.time;
            }
            rec->a.time = ev.time;
            rec->a.n_samples = ev.n_samples;
            rec->seq = out->n_allocs++;
            if (fn(ctx, ev.time, rec->seq, ev.n_samples, 0, ev.time) < 0)
                stop = -2;
        } else if (ev.kind == MT_EVENT_COLLECT) {
            mta_live_rec *rec = mta_live_find(&live, ev.id);
            if (!rec)
                continue;
            mt_timedelta t = ev.time < rec->a.time ? rec->a.time : ev.time, at = rec->a.time;
            uint64_t seq = rec->seq, samples = rec->a.n_samples;
            mta_live_remove(&live, rec);
            if (fn(ctx, t, seq, samples, 1, at) < 0)
                stop = -2;
        }
    }
    if (!stop && rc < 0 && err)
        *err = strdup(mt_reader_error(r));
    if (!stop && rc == 0 && mt_reader_end_time(r) > out->end)
        out->end = mt_reader_end_time(r);
    for (size_t i = 0; !stop && rc == 0 && i < live.n_pool; i++)
        if (live.pool[i].seq != UINT64_MAX) {
            out->n_live++;
            if (live.pool[i].a.time < out->first_live)
                out->first_live = live.pool[i].a.time;
        }
    if (stop == -1 && err)
        *err = strdup("out of memory");
    if (stop == -3 && err)
        *err = strdup("sample counts add up to more than 2^62 (a damaged or forged trace)");
    mta_live_free(&live);
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
    mt_curve *c = rc == 0 && res.monotone ? mt_curve_acc_result(acc, 1.0) : NULL;
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
