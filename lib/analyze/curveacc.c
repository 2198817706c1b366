/*
 * curveacc.c - the live-memory curve's bucket rule, once: mt_curve_acc,
 * from events given in time order, which the whole model's query
 * (curve.c) and the reads that do not keep every allocation
 * (memtrace/stream.h) replay their events through, and mt_curve_grid, from
 * allocations given in any order.
 *
 * mt_curve_acc: a fixed number of buckets from time 0 whose width doubles
 * when an event falls past the last one, and the exact peak of the
 * selected allocations; or, for a window of the whole model's curve
 * (mta_curve_acc_window, curveacc.h), buckets of a fixed width from an
 * origin, past which events count for the peak alone.
 *
 * The values: the value at a time counts once every
 * event of that time is applied; a bucket holds the highest of the value
 * carried in from before it (when its first event comes after its start)
 * and the values after each of its times. Two neighbouring buckets merge
 * into the highest of their two values: the value carried into the second
 * is the first's last value, which the first already counted.
 *
 * mt_curve_grid: the viewer's curve of a folded trace, whose allocations
 * come as they are folded (at their collection, or at the end), not in time
 * order, and whose page asks for any window later. It cannot keep highest
 * values (they need the events in time order): it keeps, per fine bucket
 * of time (262,144 of them, doubling their width as times grow), the net
 * change of live samples and the samples allocated, i.e. the events folded
 * into one per fine bucket. Its curve, peak and estimate are those of an
 * mt_curve_acc fed those events in time order, each at its bucket's end:
 * exact at the fine buckets' ends, and a lower bound in between. One rule
 * differs, because a fine bucket is a span, not an instant: a bucket of the
 * view always counts the value carried in (the acc's carry_always).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "curveacc.h"
#include "peak.h"

struct mt_curve_acc {
    size_t n;
    mt_timedelta width;
    mt_timedelta origin;         /* bucket 0's start (a grid's view: its t0) */
    int carry_always;            /* a bucket counts the value carried in (a grid's view) */
    int fixed;                   /* the width never doubles (a window) */
    int64_t *total, *filtered;   /* live samples per bucket (highest reached) */
    uint64_t *falloc;            /* samples allocated per bucket (selected) */
    long cur;                    /* bucket of the last time closed, -1: none */
    int open;                    /* events of time t are being added */
    mt_timedelta t;
    long tb;                     /* t's bucket: -1 before origin, n past a window */
    int64_t tot, fil;            /* live samples after the events so far */
    int64_t tot_before, fil_before; /* before the events of time t */
    int64_t peak;
    mt_timedelta peak_t;
    uint64_t fil_alloc;          /* selected samples allocated at time t */
    mta_peak_acc est;            /* the peak's estimate (peak.c) */
};

static mt_curve_acc *acc_new(size_t n, mt_timedelta width, mt_timedelta origin,
                             int carry_always, int fixed)
{
    mt_curve_acc *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->n = n < 1 ? 1 : n;
    c->width = width < 1 ? 1 : width;
    c->origin = origin;
    c->carry_always = carry_always;
    c->fixed = fixed;
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

mt_curve_acc *mt_curve_acc_new(size_t n, mt_timedelta width)
{
    return acc_new(n, width, 0, 0, 0);
}

mt_curve_acc *mta_curve_acc_window(size_t n, mt_timedelta width, mt_timedelta origin)
{
    return acc_new(n, width, origin, 0, 1);
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

/* The bucket of time t: -1 before the origin; past the last bucket, n in
 * a window, else the last one (a time no width reaches: a single bucket of
 * INT64_MAX us and the time INT64_MAX). */
static long bucket_of(const mt_curve_acc *c, mt_timedelta t)
{
    t -= c->origin;
    if (t < 0)
        return -1;
    mt_timedelta b = t / c->width;
    return b < (mt_timedelta)c->n ? (long)b : (long)c->n - (c->fixed ? 0 : 1);
}

/* The events of time c->t are all in: the buckets up to its own get their
 * values (the bucket rule, in samples). */
static inline __attribute__((always_inline)) void close_time(mt_curve_acc *c)
{
    mt_timedelta t = c->t;
    if (c->fil > c->peak) {
        c->peak = c->fil;
        c->peak_t = t;
    }
    mta_peak_time(&c->est, t, c->fil_before, c->fil, c->fil_alloc);
    long b = c->tb;
    if (b < 0)
        return;
    if (b == (long)c->n) {
        /* past a window: the buckets left keep the value before */
        for (long k = c->cur + 1; k < (long)c->n; k++) {
            c->total[k] = c->tot_before;
            c->filtered[k] = c->fil_before;
        }
        c->cur = (long)c->n - 1;
        return;
    }
    t -= c->origin;
    for (long k = c->cur + 1; k < b; k++) {
        c->total[k] = c->tot_before;
        c->filtered[k] = c->fil_before;
    }
    if (b != c->cur) {
        int carried = c->carry_always || t > (mt_timedelta)b * c->width;
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
    MT_ASSERT(!c->open || t >= c->t);   /* times never decrease (stream.h) */
    if (!c->open || t != c->t) {
        if (c->open)
            close_time(c);
        mt_timedelta r = t - c->origin;
        while (!c->fixed && r >= 0 && r / c->width >= (mt_timedelta)c->n &&
               c->width < INT64_MAX)
            widen(c);
        c->open = 1;
        c->t = t;
        c->tot_before = c->tot;
        c->fil_before = c->fil;
        c->fil_alloc = 0;
        c->tb = bucket_of(c, t);
    }
    c->tot += d_total;
    c->fil += d_filtered;
    c->fil_alloc += filtered_alloc;
    if (filtered_alloc && c->tb >= 0 && c->tb < (long)c->n)
        c->falloc[c->tb] += filtered_alloc;
}

mt_curve *mt_curve_acc_result(const mt_curve_acc *acc, double bps, double rate)
{
    mt_curve_acc c = *acc; /* closing the open time changes the buckets: on copies */
    size_t n = c.n;
    c.total = malloc(n * sizeof *c.total);
    c.filtered = malloc(n * sizeof *c.filtered);
    mt_curve *r = mt_curve_new(c.origin, c.width, n);
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

/* ---- mt_curve_grid: allocations in any order, read through an acc ---- */

#define GRID_BUCKETS 262144      /* fine buckets (2 x 8 bytes each) */
#define GRID_MAX_TIME ((mt_timedelta)1 << 52)  /* later times count there (142 years) */

struct mt_curve_grid {
    mt_timedelta width;          /* of a fine bucket, microseconds (a power of two) */
    unsigned shift;              /* log2(width) */
    size_t used;                 /* buckets up to the last one touched */
    int64_t *delta;              /* samples allocated minus samples freed */
    int64_t *alloc;              /* samples allocated */
    int64_t peak;                /* mt_curve_grid_finish's */
    mt_timedelta peak_time;
    mt_peak peak_est;
};

mt_curve_grid *mt_curve_grid_new(void)
{
    mt_curve_grid *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->width = 1;
    g->delta = calloc(GRID_BUCKETS, sizeof *g->delta);
    g->alloc = calloc(GRID_BUCKETS, sizeof *g->alloc);
    if (!g->delta || !g->alloc) {
        mt_curve_grid_free(g);
        return NULL;
    }
    return g;
}

void mt_curve_grid_free(mt_curve_grid *g)
{
    if (!g)
        return;
    free(g->delta);
    free(g->alloc);
    free(g);
}

size_t mt_curve_grid_bytes(void)
{
    return sizeof(mt_curve_grid) + 2 * GRID_BUCKETS * sizeof(int64_t);
}

/* Halve the resolution: bucket j takes buckets 2j and 2j + 1 (sums: the
 * events of both, in one). */
static void coarsen(mt_curve_grid *g)
{
    for (size_t j = 0; j < GRID_BUCKETS / 2; j++) {
        g->delta[j] = g->delta[2 * j] + g->delta[2 * j + 1];
        g->alloc[j] = g->alloc[2 * j] + g->alloc[2 * j + 1];
    }
    memset(g->delta + GRID_BUCKETS / 2, 0, GRID_BUCKETS / 2 * sizeof *g->delta);
    memset(g->alloc + GRID_BUCKETS / 2, 0, GRID_BUCKETS / 2 * sizeof *g->alloc);
    g->used = (g->used + 1) / 2;
    g->width *= 2;
    g->shift++;
}

static size_t grid_bucket(mt_curve_grid *g, mt_timedelta t)
{
    if (t < 0)
        t = 0;
    if (t > GRID_MAX_TIME)   /* keeps (k + 1) * width far from overflowing */
        t = GRID_MAX_TIME;
    while ((t >> g->shift) >= GRID_BUCKETS)
        coarsen(g);
    size_t b = (size_t)(t >> g->shift);
    MT_ASSERT(b < GRID_BUCKETS);
    if (b + 1 > g->used)
        g->used = b + 1;
    return b;
}

void mt_curve_grid_add(mt_curve_grid *g, mt_timedelta time, mt_timedelta collect,
                       uint64_t samples)
{
    /* the later time first: placing it may coarsen the grid */
    if (collect != MT_TIME_NEVER)
        g->delta[grid_bucket(g, collect > time ? collect : time)] -= (int64_t)samples;
    size_t b = grid_bucket(g, time);
    g->delta[b] += (int64_t)samples;
    g->alloc[b] += (int64_t)samples;
}

/* Fine bucket k's events, at its end, into c; stops at `until` (no
 * bucket of c reaches it: c would widen). */
static void replay(const mt_curve_grid *g, mt_curve_acc *c, mt_timedelta until)
{
    for (size_t k = 0; k < g->used; k++) {
        mt_timedelta t = (mt_timedelta)(k + 1) * g->width - 1;
        if (t >= until)
            break;
        mt_curve_acc_event(c, t, g->delta[k], g->delta[k], (uint64_t)g->alloc[k]);
    }
}

void mt_curve_grid_finish(mt_curve_grid *g, double rate)
{
    mt_curve_acc *c = acc_new(1, 1, 0, 1, 0);
    mt_curve *r = NULL;
    if (c) {
        replay(g, c, INT64_MAX);
        r = mt_curve_acc_result(c, 1.0, rate);  /* in samples */
    }
    if (r) {
        g->peak = (int64_t)r->peak_filtered;
        g->peak_time = r->peak_filtered_time;
        g->peak_est = r->peak_filtered_est;
    } else {   /* out of memory: the highest alone */
        int64_t live = 0;
        g->peak = 0;
        g->peak_time = 0;
        for (size_t k = 0; k < g->used; k++)
            if ((live += g->delta[k]) > g->peak) {
                g->peak = live;
                g->peak_time = (mt_timedelta)(k + 1) * g->width - 1;
            }
        double p = (double)g->peak;
        g->peak_est = (mt_peak){p, p, p, p, 0, 1, p, p};
    }
    mt_curve_free(r);
    mt_curve_acc_free(c);
}

int64_t mt_curve_grid_peak(const mt_curve_grid *g, mt_timedelta *time, mt_peak *est)
{
    if (time)
        *time = g->peak_time;
    if (est)
        *est = g->peak_est;
    return g->peak;
}

int mt_curve_grid_curve(const mt_curve_grid *g, mt_timedelta t0, mt_timedelta w, size_t n,
                        double bps, double *out, double *alloc_out)
{
    if (n == 0)
        return 0;
    mt_curve_acc *c = acc_new(n, w, t0, 1, 0);
    if (!c)
        return -1;
    mt_timedelta span, until;
    if (__builtin_mul_overflow((mt_timedelta)n, w, &span) ||
        __builtin_add_overflow(t0, span, &until))
        until = INT64_MAX;
    replay(g, c, until);
    mt_curve *r = mt_curve_acc_result(c, bps, 0);
    mt_curve_acc_free(c);
    if (!r)
        return -1;
    for (size_t i = 0; i < n; i++) {
        out[i] = r->filtered[i];
        if (alloc_out)
            alloc_out[i] = r->filtered_alloc[i];
    }
    mt_curve_free(r);
    return 0;
}

/* The curves every route returns (mt_curve_acc_result, the queries of
 * curve.c) are made and freed here. */
mt_curve *mt_curve_new(mt_timedelta t0, mt_timedelta width, size_t n)
{
    if (n == 0)
        n = 1;
    mt_curve *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->n = n;
    c->t0 = t0;
    c->width = width < 1 ? 1 : width;
    c->time = malloc(n * sizeof *c->time);
    c->total = calloc(n, sizeof *c->total);
    c->filtered = calloc(n, sizeof *c->filtered);
    c->filtered_alloc = calloc(n, sizeof *c->filtered_alloc);
    if (!c->time || !c->total || !c->filtered || !c->filtered_alloc) {
        mt_curve_free(c);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        c->time[i] = t0 + (mt_timedelta)i * c->width;
    return c;
}

void mt_curve_free(mt_curve *c)
{
    if (!c)
        return;
    free(c->time);
    free(c->total);
    free(c->filtered);
    free(c->filtered_alloc);
    free(c);
}
