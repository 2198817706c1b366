/*
 * read.c - unit test of mt_read (lib/analyze/read.c): on a trace of three
 * allocations whose figures are worked out by hand, every sink of a read
 * sees every allocation as it is read and as it is finished, in file
 * order; the request's filter chooses which are finished into the sinks;
 * the peak is found first when asked for; a pipe that would have to be
 * read twice, and the forced route whole, give the whole model without
 * calling the sinks, but a streaming request (stream) still folds and feeds
 * them; a read again (mt_read_again) keeps the plan and the peak found; a
 * sink that stops ends the read with an error. Sinks
 * apart (on_done_apart, on the read's own thread or, route one-thread, on
 * the caller's) get the same allocations in the same order after on_bind,
 * with the filter's stack clauses applied when the request says so, and
 * can stop the read too.
 *
 * The trace (64-bit words, rate 1: one sample per word is not needed, the
 * samples are given): times in microseconds from the start,
 *   t=10  a0  8 words (64 B), 1 sample, main > parse
 *   t=20  a1 16 words (128 B), 2 samples, main > leak   (never freed)
 *   t=30  a0 freed
 *   t=40  a2 24 words (192 B), 3 samples, main > parse
 *   t=50  a2 freed
 * Live samples: 1, 3, 2, 5, 2: the peak is at t=40.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memtrace/analyze.h"
#include "testtrace.h"

typedef struct seen {
    int allocs, dones, resets;
    uint64_t alloc_seq[8], done_seq[8];
    mt_timedelta done_collect[8];
    int stop_at;   /* on_done call at which to stop (-1: never) */
} seen;

static int on_alloc(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    (void)m;
    (void)a;
    seen *s = ctx;
    if (s->allocs < 8)
        s->alloc_seq[s->allocs] = seq;
    s->allocs++;
    return 0;
}

static int on_done(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    (void)m;
    seen *s = ctx;
    if (s->dones == s->stop_at)
        return -1;
    if (s->dones < 8) {
        s->done_seq[s->dones] = seq;
        s->done_collect[s->dones] = a->collect;
    }
    s->dones++;
    return 0;
}

static void on_reset(void *ctx)
{
    seen *s = ctx;
    s->resets++;
    s->allocs = s->dones = 0;
}

/* A sink apart: what it was given (it may not read the model). */
typedef struct apart {
    int bound, n, stop_at;
    uint64_t seq[8];
    mt_timedelta collect[8], end[8];
} apart;

static int apart_bind(void *ctx, const mt_model *m)
{
    apart *p = ctx;
    p->bound += m != NULL;
    return 0;
}

static int apart_done(void *ctx, const mt_alloc *a, mt_timedelta end, uint64_t seq)
{
    apart *p = ctx;
    if (p->n == p->stop_at)
        return -1;
    if (p->n < 8) {
        p->seq[p->n] = seq;
        p->collect[p->n] = a->collect;
        p->end[p->n] = end;
    }
    p->n++;
    return 0;
}

static int write_trace(const char *path)
{
    int fd;
    mt_writer *w = tt_writer_open(path, "read-test", 1.0, tt_resolve, &fd);
    if (!w)
        return -1;
    uint64_t parse[2] = {TT_MAIN, TT_PARSE}, leak[2] = {TT_MAIN, TT_LEAK};
    mt_obj_id a0, a1, a2;
    int rc = 0;
    rc |= mt_writer_put_alloc(w, TT_START + 10, 8, 1, MT_SOURCE_EXTERNAL, parse, 2, &a0);
    rc |= mt_writer_put_alloc(w, TT_START + 20, 16, 2, MT_SOURCE_EXTERNAL, leak, 2, &a1);
    rc |= mt_writer_put_collect(w, TT_START + 30, a0);
    rc |= mt_writer_put_alloc(w, TT_START + 40, 24, 3, MT_SOURCE_EXTERNAL, parse, 2, &a2);
    rc |= mt_writer_put_collect(w, TT_START + 50, a2);
    rc |= mt_writer_close(w);
    close(fd);
    return rc;
}

static void quiet(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
}

int main(void)
{
    char path[4096];
    if (tt_scratch_file(path, sizeof path, "read") < 0 || write_trace(path) < 0)
        return 1;
    const char *paths[1] = {path};
    char *err = NULL;

    /* two sinks, the peak first */
    seen s1 = {.stop_at = -1}, s2 = {.stop_at = -1};
    mt_sink sinks[2] = {
        {.on_alloc = on_alloc, .on_done = on_done, .on_reset = on_reset, .ctx = &s1},
        {.on_alloc = on_alloc, .on_done = on_done, .on_reset = on_reset, .ctx = &s2},
    };
    mt_read_request rq = {.paths = paths, .n = 1, .fold = 1, .live_at = MT_TIME_PEAK,
                          .need_peak = 1, .sinks = sinks, .n_sinks = 2, .on_warning = quiet};
    mt_model *m = mt_read(&rq, &err);
    CHECK(m && rq.sinks_fed && mt_model_is_folded(m), "a file is read folded (%s)", err ? err : "");
    CHECK(rq.peak_known && rq.peak == 40, "the peak found first: t=40 (got %lld)",
          (long long)rq.peak);
    CHECK(s1.resets == 1 && s2.resets == 1, "each sink reset once before its pass");
    for (int k = 0; k < 2; k++) {
        seen *s = k ? &s2 : &s1;
        CHECK(s->allocs == 3 && s->alloc_seq[0] == 0 && s->alloc_seq[1] == 1 &&
                  s->alloc_seq[2] == 2,
              "sink %d: the 3 allocations as read, in file order", k + 1);
        CHECK(s->dones == 3 && s->done_seq[0] == 0 && s->done_collect[0] == 30 &&
                  s->done_seq[1] == 2 && s->done_collect[1] == 50 && s->done_seq[2] == 1 &&
                  s->done_collect[2] == MT_TIME_NEVER,
              "sink %d: finished as freed (a0 at 30, a2 at 50), then a1 live at the end", k + 1);
    }
    mt_selection *sel = m ? mt_select_sites(m, NULL, MT_TIME_PEAK, NULL, &err) : NULL;
    mt_cost c = sel ? mt_selection_total(sel) : (mt_cost){0};
    CHECK(sel && c.live_samples == 5, "the folded costs at the peak: 5 samples live (got %llu)",
          (unsigned long long)c.live_samples);
    mt_selection_free(sel);
    mt_model_free(m);

    /* the same read again, as planned: the peak kept, the sinks fed again */
    memset(&s1, 0, sizeof s1);
    s1.stop_at = -1;
    m = mt_read_again(&rq, &err);
    sel = m ? mt_select_sites(m, NULL, MT_TIME_PEAK, NULL, &err) : NULL;
    c = sel ? mt_selection_total(sel) : (mt_cost){0};
    CHECK(m && rq.sinks_fed && rq.peak == 40 && s1.resets == 1 && s1.allocs == 3 &&
              s1.dones == 3 && sel && c.live_samples == 5,
          "read again: folded at the peak found before (5 samples live), every sink fed again");
    mt_selection_free(sel);
    mt_model_free(m);

    /* the filter chooses what is finished into the sinks */
    mt_filter *f = mt_filter_parse("size:>=100", &err, NULL);
    memset(&s1, 0, sizeof s1);
    s1.stop_at = -1;
    mt_read_request fr = {.paths = paths, .n = 1, .fold = 1, .filter = f,
                          .live_at = MT_TIME_END, .sinks = sinks, .n_sinks = 1,
                          .on_warning = quiet};
    m = mt_read(&fr, &err);
    CHECK(m && s1.allocs == 3 && s1.dones == 2 && s1.done_seq[0] == 2 && s1.done_seq[1] == 1,
          "size:>=100: all 3 read, a2 and a1 finished into the sink (%d)", s1.dones);
    CHECK(!fr.need_peak && !fr.peak_known, "no peak pass when none is asked for");
    mt_model_free(m);

    /* a sink that stops */
    memset(&s1, 0, sizeof s1);
    s1.stop_at = 1;
    m = mt_read(&fr, &err);
    CHECK(!m && err && strstr(err, "stopped by the caller"), "a sink stops the read: %s",
          err ? err : "(no error)");
    free(err);
    err = NULL;
    mt_filter_free(f);

    /* sinks apart, on the read's thread and (route one-thread) on this one */
    mt_filter *fi = mt_filter_parse("inside:parse", &err, NULL);
    for (int route = 0; route < 2; route++) {
        mt_read_force(route ? "one-thread" : "auto");
        const char *rn = route ? "one-thread" : "default";
        apart ap = {.stop_at = -1};
        mt_sink as[1] = {{.on_done_apart = apart_done, .on_bind = apart_bind, .ctx = &ap}};
        mt_read_request ar = {.paths = paths, .n = 1, .fold = 1, .filter = fi,
                              .live_at = MT_TIME_END, .sinks = as, .n_sinks = 1,
                              .sinks_filtered = 1, .on_warning = quiet};
        m = mt_read(&ar, &err);
        CHECK(m && ap.bound == 1 && ap.n == 2 && ap.seq[0] == 0 && ap.collect[0] == 30 &&
                  ap.end[0] >= 30 && ap.seq[1] == 2 && ap.collect[1] == 50 && ap.end[1] >= 50,
              "%s: inside:parse apart: bound once, a0 (freed at 30) and a2 (at 50), in order "
              "(%d calls)", rn, ap.n);
        mt_model_free(m);
        ar.sinks_filtered = 0;
        memset(&ap, 0, sizeof ap);
        ap.stop_at = -1;
        m = mt_read(&ar, &err);
        CHECK(m && ap.n == 3 && ap.seq[2] == 1 && ap.collect[2] == MT_TIME_NEVER &&
                  ap.end[2] == 50,
              "%s: without sinks_filtered, a1 too, live at the end (50) (%d calls)", rn, ap.n);
        mt_model_free(m);
        memset(&ap, 0, sizeof ap);
        ap.stop_at = 0;
        m = mt_read(&ar, &err);
        CHECK(!m && err && strstr(err, "stopped by the caller"), "%s: a sink apart stops the read: %s",
              rn, err ? err : "(no error)");
        free(err);
        err = NULL;
    }
    mt_read_force("auto");
    mt_filter_free(fi);

    /* a pipe cannot be read twice: folding needs no peak, or the whole model */
    char fifo[4200];
    snprintf(fifo, sizeof fifo, "%s.fifo", path);
    unlink(fifo);
    if (mkfifo(fifo, 0600) == 0) {
        const char *fp[1] = {fifo};
        CHECK(mt_read_may_fold(fp, 1, 0) == 1 && mt_read_may_fold(fp, 1, 1) == 0 &&
                  mt_read_regular(fp, 1) == 0 && mt_read_may_fold(paths, 1, 1) == 1,
              "a pipe folds only when no peak is needed first; a file always may");
        unlink(fifo);
    }

    /* the forced route whole: the whole model, no sink called */
    CHECK(mt_read_force("nonsense") < 0 && mt_read_force("one-thread,two-threads") < 0 &&
              mt_read_forced() == 0,
          "unknown or contradictory routes are refused");
    CHECK(mt_read_force("whole,qsort") == 0 &&
              mt_read_forced() == (MT_ROUTE_WHOLE | MT_ROUTE_QSORT),
          "routes combine");
    memset(&s1, 0, sizeof s1);
    s1.stop_at = -1;
    rq.peak_known = 0;
    m = mt_read(&rq, &err);
    CHECK(m && !rq.sinks_fed && !mt_model_is_folded(m) && s1.allocs == 0 && s1.dones == 0 &&
              mt_model_n_allocs(m) == 3 && mt_model_peak_time(m) == 40,
          "route whole: the whole model (3 allocations, peak at 40), sinks not called");
    mt_model_free(m);
    /* a streaming request (its figures come from the sinks) folds whatever the route */
    memset(&s1, 0, sizeof s1);
    s1.stop_at = -1;
    mt_read_request sq = {.paths = paths, .n = 1, .fold = 1, .stream = 1,
                          .live_at = MT_TIME_END, .sinks = sinks, .n_sinks = 1,
                          .on_warning = quiet};
    m = mt_read(&sq, &err);
    CHECK(m && sq.sinks_fed && mt_model_is_folded(m) && s1.allocs == 3 && s1.dones == 3 &&
              mt_model_peak_known(m) && mt_model_peak_time(m) == 40,
          "route whole: a streaming request still folds and feeds its sinks (3 allocations, "
          "3 finished, peak at 40)");
    mt_model_free(m);
    mt_read_force("auto");
    CHECK(mt_read_forced() == 0, "auto: the default plan again");

    unlink(path);
    return failures ? 1 : 0;
}
