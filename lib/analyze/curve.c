/*
 * curve.c - the live-memory curve query of a whole model: total and
 * filtered live bytes per time bucket of a window, and the filtered peak
 * (the curve's highest and its estimate), by replaying the model's sorted
 * events through a window's curve accumulator (curveacc.c, which owns the
 * bucket rule); a window's buckets (mt_curve_span).
 */
#include <stdlib.h>

#include "curveacc.h"
#include "select.h"

/* The buckets of [t0, t1) of m's times in n: *t0 resolved, *n at least
 * 1; returns the width. */
static mt_timedelta span_of(const mt_model *m, mt_timedelta *t0, mt_timedelta t1, size_t *n)
{
    *t0 = mt_model_resolve_time(m, *t0);
    t1 = mt_model_resolve_time(m, t1);
    if (*n == 0)
        *n = 1;
    if (t1 <= *t0)
        t1 = *t0 + 1;
    return (t1 - *t0 + (mt_timedelta)*n - 1) / (mt_timedelta)*n;
}

mt_curve *mt_curve_span(const mt_model *m, mt_timedelta t0, mt_timedelta t1, size_t n)
{
    mt_timedelta w = span_of(m, &t0, t1, &n);
    return mt_curve_new(t0, w, n);
}

mt_curve *mt_query_curve(const mt_selection *s, mt_timedelta t0, mt_timedelta t1, size_t n)
{
    const mt_model *m = s->m;
    mt_timedelta w = span_of(m, &t0, t1, &n);
    size_t ne = 0;
    const mta_event *ev = mta_events(m, &ne);
    mt_curve_acc *acc = ev ? mta_curve_acc_window(n, w, t0) : NULL;
    if (!acc)
        return NULL;
    size_t i = 0;
    while (i < ne) {
        /* the events of one time, in order, as one (the samples come with
         * them) */
        mt_timedelta t = ev[i].time;
        int64_t d_tot = 0, d_fil = 0;
        uint64_t fil_alloc = 0;
        for (; i < ne && ev[i].time == t; i++) {
            uint64_t ns = mta_alloctab_event_samples(m->whole, &ev[i]);
            int64_t d = ev[i].kind ? -(int64_t)ns : (int64_t)ns;
            d_tot += d;
            if (mta_selection_has(s, ev[i].alloc)) {
                d_fil += d;
                fil_alloc += ev[i].kind ? 0 : ns;
            }
        }
        mt_curve_acc_event(acc, t, d_tot, d_fil, fil_alloc);
    }
    mt_curve *c = mt_curve_acc_result(acc, m->scale.bytes_per_sample, m->scale.sample_rate);
    mt_curve_acc_free(acc);
    return c;
}

