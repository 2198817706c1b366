/*
 * curve.c - the live-memory curve query: total and filtered live bytes per
 * time bucket, and the filtered peak: the curve's highest and its
 * estimate (peak.c).
 *
 * The value at a time counts once every event of that time is applied, so
 * a bucket's value is the highest of: the value carried in from before the
 * bucket (if the bucket's first event comes after its start) and the
 * values after each of its timestamps.
 */
#include <stdlib.h>

#include "select.h"

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

mt_curve *mt_curve_span(const mt_model *m, mt_timedelta t0, mt_timedelta t1, size_t n)
{
    t0 = mt_model_resolve_time(m, t0);
    t1 = mt_model_resolve_time(m, t1);
    if (n == 0)
        n = 1;
    if (t1 <= t0)
        t1 = t0 + 1;
    return mt_curve_new(t0, (t1 - t0 + (mt_timedelta)n - 1) / (mt_timedelta)n, n);
}

mt_curve *mt_query_curve(const mt_selection *s, mt_timedelta t0, mt_timedelta t1, size_t n)
{
    const mt_model *m = s->m;
    mt_curve *c = mt_curve_span(m, t0, t1, n);
    if (!c)
        return NULL;
    t0 = c->t0;
    n = c->n;
    const double bps = m->scale.bytes_per_sample;
    int64_t tot = 0, fil = 0, peak = 0;
    mt_timedelta peak_t = 0;
    long cur = -1; /* bucket of the last timestamp seen (in range) */
    size_t ne = 0;
    const mta_event *ev = mta_events(m, &ne);
    mta_peak_acc *acc = malloc(sizeof *acc);
    if (!ev || !acc) {
        free(acc);
        mt_curve_free(c);
        return NULL;
    }
    mta_peak_init(acc);
    size_t i = 0;
    while (i < ne) {
        mt_timedelta t = ev[i].time;
        int64_t tot_before = tot, fil_before = fil;
        uint64_t fil_alloc = 0;
        long b = t < t0 ? -1 : (long)((t - t0) / c->width);
        for (; i < ne && ev[i].time == t; i++) {
            /* the events in order; the samples come with them */
            uint64_t ns = mta_alloctab_event_samples(m->whole, &ev[i]);
            int64_t d = ev[i].kind ? -(int64_t)ns : (int64_t)ns;
            tot += d;
            if (mt_selection_has(s, ev[i].alloc)) {
                fil += d;
                if (!ev[i].kind)
                    fil_alloc += ns;
                if (!ev[i].kind && b >= 0 && b < (long)n)
                    c->filtered_alloc[b] += (double)ns * bps;
            }
        }
        if (fil > peak) {
            peak = fil;
            peak_t = t;
        }
        mta_peak_time(acc, t, fil_before, fil, fil_alloc);
        if (b < 0)
            continue;
        long upto = b < (long)n ? b : (long)n;
        for (long k = cur + 1; k < upto; k++) {
            c->total[k] = (double)tot_before * bps;
            c->filtered[k] = (double)fil_before * bps;
        }
        if (b >= (long)n) {
            cur = (long)n - 1;
            /* later events do not matter for the buckets, only for the peak */
            continue;
        }
        if (b != cur) {
            int carried = t > c->time[b];
            double vt = (double)tot * bps, vf = (double)fil * bps;
            double pt = (double)tot_before * bps, pf = (double)fil_before * bps;
            c->total[b] = carried && pt > vt ? pt : vt;
            c->filtered[b] = carried && pf > vf ? pf : vf;
            cur = b;
        } else {
            if ((double)tot * bps > c->total[b])
                c->total[b] = (double)tot * bps;
            if ((double)fil * bps > c->filtered[b])
                c->filtered[b] = (double)fil * bps;
        }
    }
    for (long k = cur + 1; k < (long)n; k++) {
        c->total[k] = (double)tot * bps;
        c->filtered[k] = (double)fil * bps;
    }
    c->peak_filtered = (double)peak * bps;
    c->peak_filtered_time = peak_t;
    mta_peak_result(acc, bps, m->scale.sample_rate, &c->peak_filtered_est);
    free(acc);
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
