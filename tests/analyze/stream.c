/*
 * stream.c - unit test of the streaming pieces (memtrace/stream.h) against
 * the whole model: a filter evaluated one allocation at a time selects the
 * same allocations as mt_select; the curve accumulator gives the buckets
 * and the exact peak of mt_query_curve, with a known width and with a
 * width that doubled along the way, and from mt_scan_events (no stacks);
 * the stats accumulator the figures of mt_query_stats and
 * mt_query_histogram.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/load.h"
#include "memtrace/stream.h"
#include "testtrace.h"

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void) { return tt_rnd(&rnd_state); }

/* n allocations on a few stacks, several at the same time now and then,
 * freed after random delays (some never), in bursts so that the curve
 * goes up and down within buckets, with quiet seconds now and then. */
static int write_trace(const char *path, size_t n)
{
    int fd;
    mt_writer *w = tt_writer_open(path, "stream-test", 0.01, tt_resolve, &fd);
    if (!w)
        return -1;
    enum { LIVE = 4096 };
    static uint64_t id[LIVE];
    static int64_t due[LIVE];
    size_t nl = 0;
    mt_timestamp t = TT_START;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (rnd() % 4)
            t += (int64_t)(rnd() % 40);
        if (rnd() % 6000 == 0)
            t += 3000000; /* quiet seconds: lifetimes of several seconds */
        for (size_t k = 0; k < nl;)
            if (due[k] <= t) {
                rc |= mt_writer_put_collect(w, t, id[k]);
                id[k] = id[--nl];
                due[k] = due[nl];
            } else {
                k++;
            }
        uint64_t st[4] = {TT_MAIN, TT_PARSE + rnd() % 2, TT_CACHE_PUT + rnd() % 2, TT_LEAK};
        size_t len = 1 + rnd() % 4;
        uint64_t words = 1 + rnd() % 500;
        mt_obj_id oid;
        rc |= mt_writer_put_alloc(w, t, words, 1 + words / 64, (mt_source)(rnd() % 3), st, len,
                                  &oid);
        if (rnd() % 10 == 0 || nl == LIVE)
            continue; /* never freed */
        id[nl] = oid;
        int64_t delay = (int64_t)(rnd() % (rnd() % 8 == 0 ? 200000 : 3000));
        if (rnd() % 64 == 0)
            delay = 5000000 + (int64_t)(rnd() % 5000000); /* freed after seconds */
        due[nl++] = t + delay;
    }
    rc |= mt_writer_close(w);
    close(fd);
    return rc;
}

/* What the callbacks fill. */
typedef struct acc {
    mt_stream_filter *sf;
    mt_stats_acc *stats;
    mt_curve_acc *known, *doubling; /* width known in advance; from 1 microsecond */
    uint64_t *bits;                 /* selected, by index in the file (second pass) */
    int read_bits;
    uint64_t selected;
    int failed;
} acc;

static int passes(acc *x, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    if (x->read_bits)
        return (int)(x->bits[seq / 64] >> (seq % 64) & 1);
    return mt_stream_filter_passes(x->sf, m, a, NULL);
}

static void event(acc *x, mt_timedelta t, int64_t d, int p, uint64_t alloc)
{
    if (x->known)
        mt_curve_acc_event(x->known, t, d, p ? d : 0, p ? alloc : 0);
    if (x->doubling)
        mt_curve_acc_event(x->doubling, t, d, p ? d : 0, p ? alloc : 0);
}

static int on_alloc(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    acc *x = ctx;
    int p = passes(x, m, a, seq);
    event(x, a->time, (int64_t)a->n_samples, p, a->n_samples);
    return p < 0 ? -1 : 0;
}

static int on_fold(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    acc *x = ctx;
    int p = passes(x, m, a, seq);
    if (p < 0)
        return -1;
    if (a->collect != MT_TIME_NEVER)
        event(x, a->collect, -(int64_t)a->n_samples, p, 0);
    if (!p)
        return 0;
    x->selected++;
    if (x->bits)
        x->bits[seq / 64] |= 1ULL << (seq % 64);
    if (x->stats && mt_stats_acc_add(x->stats, m, a) < 0)
        x->failed = 1;
    return 0;
}

/* mt_scan_events: blocks into a curve, selected as the whole selection
 * says (allocation i of a whole model is the file's i-th). */
typedef struct scan_ctx {
    const mt_selection *s;
    mt_curve_acc *c;
} scan_ctx;

static int scan_fn(void *ctx, mt_timedelta t, uint64_t seq, uint64_t samples, int collect,
                   mt_timedelta alloc_time)
{
    (void)alloc_time;
    scan_ctx *x = ctx;
    int p = mt_selection_has(x->s, (size_t)seq);
    int64_t d = collect ? -(int64_t)samples : (int64_t)samples;
    mt_curve_acc_event(x->c, t, d, p ? d : 0, p && !collect ? samples : 0);
    return 0;
}

static mt_model *load(const char *path, acc *x, int curve)
{
    mt_model_options o = {0};
    o.fold = 1;
    o.fold_live_at = MT_TIME_END;
    o.on_fold = on_fold;
    o.on_alloc = curve ? on_alloc : NULL;
    o.fold_ctx = x;
    char *err = NULL;
    mt_model *m = mt_model_load(path, &o, &err);
    if (!m)
        printf("load: %s\n", err ? err : "?");
    free(err);
    return m;
}

static int near(double a, double b)
{
    double d = fabs(a - b);
    return d <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-9;
}

static int same_cost(const mt_cost *a, const mt_cost *b)
{
    return near(a->alloc_bytes, b->alloc_bytes) && near(a->alloc_objects, b->alloc_objects) &&
           near(a->live_bytes, b->live_bytes) && near(a->live_objects, b->live_objects) &&
           a->samples == b->samples && a->live_samples == b->live_samples &&
           a->allocs == b->allocs && near(a->temp_bytes, b->temp_bytes) &&
           a->temp_samples == b->temp_samples;
}

static int same_hist(const mt_histogram *a, const mt_histogram *b)
{
    if (a->n != b->n || !same_cost(&a->never_collected, &b->never_collected))
        return 0;
    for (size_t i = 0; i < a->n; i++) {
        if (a->lo[i] != b->lo[i] || a->hi[i] != b->hi[i] || !same_cost(&a->cost[i], &b->cost[i]))
            return 0;
        for (int k = 0; k < 3; k++)
            if (!same_cost(&a->by_source[i * 3 + k], &b->by_source[i * 3 + k]))
                return 0;
    }
    return 1;
}

static int same_curve(const mt_curve *a, const mt_curve *b)
{
    if (a->n != b->n || a->t0 != b->t0 || a->width != b->width)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->time[i] != b->time[i] || a->total[i] != b->total[i] ||
            a->filtered[i] != b->filtered[i] || !near(a->filtered_alloc[i], b->filtered_alloc[i]))
            return 0;
    return a->peak_filtered == b->peak_filtered && a->peak_filtered_time == b->peak_filtered_time &&
           !memcmp(&a->peak_filtered_est, &b->peak_filtered_est, sizeof a->peak_filtered_est);
}

static void check_filter(const char *path, const mt_model *whole, const char *text, size_t nb)
{
    char *err = NULL;
    mt_filter *f = mt_filter_parse(text, &err, NULL);
    free(err);
    mt_selection *s = f ? mt_select(whole, f, MT_TIME_END) : NULL;
    if (!s) {
        CHECK(0, "filter '%s' compiles and selects", text);
        mt_filter_free(f);
        return;
    }
    mt_timedelta end = mt_model_end(whole);
    acc x = {0};
    x.sf = mt_stream_filter_new(f, mt_model_peak_time(whole));
    x.stats = mt_stats_acc_new(MT_TIME_END);
    int at_alloc = mt_stream_filter_at_alloc(x.sf);
    mt_model *m = NULL;
    if (!at_alloc) {
        /* the filter needs the collection: a first pass notes the selected */
        x.bits = calloc(mt_model_n_allocs(whole) / 64 + 1, sizeof *x.bits);
        m = load(path, &x, 0);
        mt_model_free(m);
        x.read_bits = 1;
        mt_stats_acc_free(x.stats);
        x.stats = mt_stats_acc_new(MT_TIME_END);
        x.selected = 0;
    }
    x.known = mt_curve_acc_new(nb, (end + (mt_timedelta)nb) / (mt_timedelta)nb);
    x.doubling = mt_curve_acc_new(nb, 1);
    m = load(path, &x, 1);
    if (!m || x.failed || !x.known || !x.doubling) {
        CHECK(0, "filter '%s': streaming load", text);
        goto out;
    }
    mt_cost tot = mt_selection_total(s);
    CHECK(x.selected == tot.allocs, "'%s': %llu selected one at a time, %llu by mt_select",
          text, (unsigned long long)x.selected, (unsigned long long)tot.allocs);
    mt_curve *ck = mt_curve_acc_result(x.known, mt_model_bytes_per_sample(m), mt_model_info(m)->sample_rate);
    mt_curve *wk = mt_query_curve(s, 0, end + 1, nb);
    CHECK(ck && wk && same_curve(ck, wk), "'%s': curve of %zu buckets as mt_query_curve", text,
          nb);
    mt_curve *cd = mt_curve_acc_result(x.doubling, mt_model_bytes_per_sample(m), mt_model_info(m)->sample_rate);
    mt_curve *wd = cd ? mt_query_curve(s, 0, cd->width * (mt_timedelta)nb, nb) : NULL;
    CHECK(cd && wd && same_curve(cd, wd) && cd->width > 1,
          "'%s': curve whose width doubled up to %lld as mt_query_curve", text,
          cd ? (long long)cd->width : 0LL);
    scan_ctx sx = {s, mt_curve_acc_new(nb, (end + (mt_timedelta)nb) / (mt_timedelta)nb)};
    mt_scan_result res;
    int scanned = sx.c && mt_scan_events(path, scan_fn, &sx, NULL, NULL, &res, NULL) == 0;
    mt_curve *cs = scanned ? mt_curve_acc_result(sx.c, mt_model_bytes_per_sample(m), mt_model_info(m)->sample_rate) : NULL;
    uint64_t n_live = 0;
    mt_timedelta first_live = MT_TIME_NEVER;
    for (size_t i = 0; i < mt_model_n_allocs(whole); i++) {
        const mt_alloc *a = &mt_model_allocs(whole)[i];
        if (a->collect == MT_TIME_NEVER) {
            n_live++;
            if (a->time < first_live)
                first_live = a->time;
        }
    }
    CHECK(cs && wk && same_curve(cs, wk) && res.end == end && res.monotone &&
              res.n_allocs == mt_model_n_allocs(whole) && res.n_live == n_live &&
              res.first_live == first_live,
          "'%s': mt_scan_events: the same curve, end, allocations and blocks live at the end",
          text);
    mt_curve_free(cs);
    mt_curve_acc_free(sx.c);
    mt_curve_free(ck);
    mt_curve_free(wk);
    mt_curve_free(cd);
    mt_curve_free(wd);
    mt_stats a, b;
    mt_histogram *hs = NULL, *hl = NULL;
    int ok = mt_stats_acc_finish(x.stats, m, &a, &hs, &hl) == 0;
    mt_query_stats(s, &b);
    ok = ok && a.duration == b.duration && a.events == b.events && a.allocs == b.allocs &&
         a.collects == b.collects && same_cost(&a.total, &b.total) &&
         same_cost(&a.by_source[0], &b.by_source[0]) &&
         same_cost(&a.by_source[2], &b.by_source[2]) && near(a.promoted_bytes, b.promoted_bytes) &&
         near(a.collected_bytes, b.collected_bytes) &&
         near(a.never_collected_bytes, b.never_collected_bytes) && a.peak_bytes == b.peak_bytes &&
         a.peak_time == b.peak_time && near(a.alloc_rate, b.alloc_rate) &&
         near(a.mean_lifetime_us, b.mean_lifetime_us) &&
         a.median_lifetime_us == b.median_lifetime_us;
    CHECK(ok, "'%s': stats as mt_query_stats (median lifetime %.0f us)", text,
          b.median_lifetime_us);
    mt_histogram *ws = mt_query_histogram(s, MT_HIST_SIZE);
    mt_histogram *wl = mt_query_histogram(s, MT_HIST_LIFETIME);
    CHECK(hs && hl && ws && wl && same_hist(hs, ws) && same_hist(hl, wl),
          "'%s': histograms as mt_query_histogram", text);
    mt_histogram_free(hs);
    mt_histogram_free(hl);
    mt_histogram_free(ws);
    mt_histogram_free(wl);
out:
    mt_model_free(m);
    mt_stream_filter_free(x.sf);
    mt_stats_acc_free(x.stats);
    mt_curve_acc_free(x.known);
    mt_curve_acc_free(x.doubling);
    free(x.bits);
    mt_selection_free(s);
    mt_filter_free(f);
}

int main(void)
{
    const char *tmp = getenv("MT_TMP") ? getenv("MT_TMP") : "/tmp";
    char path[4096];
    snprintf(path, sizeof path, "%s/stream-test.ctf", tmp);
    if (write_trace(path, 60000) != 0) {
        printf("FAIL: writing the test trace\n");
        return 1;
    }
    char *err = NULL;
    mt_model *whole = mt_model_load(path, NULL, &err);
    if (!whole) {
        printf("FAIL: loading the test trace: %s\n", err ? err : "?");
        return 1;
    }
    static const char *const filters[] = {
        "", "size:>=1k", "inside:grow", "!inside:/^(cache|leak)/", "hide:parse", "source:minor",
        "alloc:10ms-30ms inside:load", "lifetime:>1ms", "collect:never", "live:peak",
        "live:20ms-25ms", "lifetime:<100us !inside:parse", "lifetime:>4s",
    };
    size_t nb[] = {1, 7, 390};
    for (size_t i = 0; i < sizeof filters / sizeof *filters; i++)
        check_filter(path, whole, filters[i], nb[i % 3]);
    mt_model_free(whole);
    unlink(path);
    return failures ? 1 : 0;
}
