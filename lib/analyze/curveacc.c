/*
 * curveacc.c - the live-memory curve from events given in time order
 * (mt_curve_acc, memtrace/stream.h): a fixed number of buckets from time
 * 0 whose width doubles when an event falls past the last one, and the
 * exact peak of the selected allocations.
 *
 * The values are those of curve.c: the value at a time counts once every
 * event of that time is applied; a bucket holds the highest of the value
 * carried in from before it (when its first event comes after its start)
 * and the values after each of its times. Two neighbouring buckets merge
 * into the highest of their two values: the value carried into the second
 * is the first's last value, which the first already counted.
 */
#include <stdint.h>
#include <stdlib.h>

#include "peak.h"
#include "memtrace/stream.h"

struct mt_curve_acc {
    size_t n;
    mt_timedelta width;
    int64_t *total, *filtered;   /* live samples per bucket (highest reached) */
    uint64_t *falloc;            /* samples allocated per bucket (selected) */
    long cur;                    /* bucket of the last time closed, -1: none */
    int open;                    /* events of time t are being added */
    mt_timedelta t;
    int64_t tot, fil;            /* live samples after the events so far */
    int64_t tot_before, fil_before; /* before the events of time t */
    int64_t peak;
    mt_timedelta peak_t;
    uint64_t fil_alloc;          /* selected samples allocated at time t */
    mta_peak_acc est;            /* the peak's estimate (peak.c) */
};

mt_curve_acc *mt_curve_acc_new(size_t n, mt_timedelta width)
{
    mt_curve_acc *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->n = n < 1 ? 1 : n;
    c->width = width < 1 ? 1 : width;
    c->total = calloc(c->n, sizeof *c->total);
    c->filtered = calloc(c->n, sizeof *c->filtered);
    c->falloc = calloc(c->n, sizeof *c->falloc);
    c->cur = -1;
    mta_peak_init(&c->est);
    if (!c->total || !c->filtered || !c->falloc) {
        mt_curve_acc_free(c);
        return NULL;
    }
    return c;
}

void mt_curve_acc_free(mt_curve_acc *c)
{
    if (!c)
        return;
    free(c->total);
    free(c->filtered);
    free(c->falloc);
    free(c);
}

/* Merges buckets two by two: the width doubles. */
static void widen(mt_curve_acc *c)
{
    size_t half = (c->n + 1) / 2;
    for (size_t k = 0; k < half; k++) {
        long a = (long)(2 * k), b = a + 1 < (long)c->n ? a + 1 : a;
        if (a > c->cur) {
            c->total[k] = c->filtered[k] = 0;
        } else {
            int64_t t = c->total[a], f = c->filtered[a];
            if (b <= c->cur) {
                t = c->total[b] > t ? c->total[b] : t;
                f = c->filtered[b] > f ? c->filtered[b] : f;
            }
            c->total[k] = t;
            c->filtered[k] = f;
        }
        c->falloc[k] = c->falloc[a] + (b != a ? c->falloc[b] : 0);
    }
    for (size_t k = half; k < c->n; k++) {
        c->total[k] = c->filtered[k] = 0;
        c->falloc[k] = 0;
    }
    if (c->cur >= 0)
        c->cur /= 2;
    /* (saturated: a time past 2^62 us cannot double it past INT64_MAX) */
    c->width = c->width > INT64_MAX / 2 ? INT64_MAX : c->width * 2;
}

/* The bucket of a time >= 0: the last one for a time no width reaches (a
 * single bucket of INT64_MAX us and the time INT64_MAX). */
static long bucket_of(const mt_curve_acc *c, mt_timedelta t)
{
    mt_timedelta b = t / c->width;
    return b < (mt_timedelta)c->n ? (long)b : (long)c->n - 1;
}

/* The events of time c->t are all in: the buckets up to its own get their
 * values (curve.c's loop body, in samples). */
static void close_time(mt_curve_acc *c)
{
    mt_timedelta t = c->t;
    if (c->fil > c->peak) {
        c->peak = c->fil;
        c->peak_t = t;
    }
    mta_peak_time(&c->est, t, c->fil_before, c->fil, c->fil_alloc);
    if (t < 0)
        return;
    long b = bucket_of(c, t);
    for (long k = c->cur + 1; k < b; k++) {
        c->total[k] = c->tot_before;
        c->filtered[k] = c->fil_before;
    }
    if (b != c->cur) {
        int carried = t > (mt_timedelta)b * c->width;
        c->total[b] = carried && c->tot_before > c->tot ? c->tot_before : c->tot;
        c->filtered[b] = carried && c->fil_before > c->fil ? c->fil_before : c->fil;
        c->cur = b;
    } else {
        if (c->tot > c->total[b])
            c->total[b] = c->tot;
        if (c->fil > c->filtered[b])
            c->filtered[b] = c->fil;
    }
}

void mt_curve_acc_event(mt_curve_acc *c, mt_timedelta t, int64_t d_total, int64_t d_filtered,
                        uint64_t filtered_alloc)
{
    if (!c->open || t != c->t) {
        if (c->open)
            close_time(c);
        while (t >= 0 && t / c->width >= (mt_timedelta)c->n && c->width < INT64_MAX)
            widen(c);
        c->open = 1;
        c->t = t;
        c->tot_before = c->tot;
        c->fil_before = c->fil;
        c->fil_alloc = 0;
    }
    c->tot += d_total;
    c->fil += d_filtered;
    c->fil_alloc += filtered_alloc;
    if (filtered_alloc && t >= 0)
        c->falloc[bucket_of(c, t)] += filtered_alloc;
}

mt_curve *mt_curve_acc_result(const mt_curve_acc *acc, double bps, double rate)
{
    mt_curve_acc c = *acc; /* closing the open time changes the buckets: on copies */
    size_t n = c.n;
    c.total = malloc(n * sizeof *c.total);
    c.filtered = malloc(n * sizeof *c.filtered);
    mt_curve *r = mt_curve_new(0, c.width, n);
    if (!c.total || !c.filtered || !r) {
        free(c.total);
        free(c.filtered);
        mt_curve_free(r);
        return NULL;
    }
    for (size_t k = 0; k < n; k++) {
        c.total[k] = acc->total[k];
        c.filtered[k] = acc->filtered[k];
    }
    if (c.open)
        close_time(&c);
    for (long k = c.cur + 1; k < (long)n; k++) {
        c.total[k] = c.tot;
        c.filtered[k] = c.fil;
    }
    for (size_t k = 0; k < n; k++) {
        r->total[k] = (double)c.total[k] * bps;
        r->filtered[k] = (double)c.filtered[k] * bps;
        r->filtered_alloc[k] = (double)c.falloc[k] * bps;
    }
    r->peak_filtered = (double)c.peak * bps;
    r->peak_filtered_time = c.peak_t;
    mta_peak_result(&c.est, bps, rate, &r->peak_filtered_est);
    free(c.total);
    free(c.filtered);
    return r;
}
