/*
 * curve.c - the live-memory curve query: total and filtered live bytes per
 * time bucket, and the exact filtered peak.
 */
#include <stdlib.h>

#include "model.h"

mt_curve *mt_query_curve(const mt_selection *s, mt_timedelta t0, mt_timedelta t1, size_t n)
{
    const mt_model *m = s->m;
    t0 = mt_model_resolve_time(m, t0);
    t1 = mt_model_resolve_time(m, t1);
    if (n == 0)
        n = 1;
    if (t1 <= t0)
        t1 = t0 + 1;
    mt_curve *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->n = n;
    c->t0 = t0;
    c->width = (t1 - t0 + (mt_timedelta)n - 1) / (mt_timedelta)n;
    if (c->width < 1)
        c->width = 1;
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
    int64_t tot = 0, fil = 0, peak = 0;
    mt_timedelta peak_t = 0;
    size_t b = 0; /* bucket being filled; values carried into later buckets */
    int64_t btot = 0, bfil = 0;  /* max in bucket b so far (samples) */
    const mta_event *ev = m->events.v;
    size_t ne = m->events.n;
    for (size_t i = 0; i < ne; i++) {
        const mt_alloc *a = &m->allocs.v[ev[i].alloc];
        int64_t d = ev[i].kind ? -(int64_t)a->n_samples : (int64_t)a->n_samples;
        int sel = mt_selection_has(s, ev[i].alloc);
        /* close the buckets that end at or before this event */
        while (ev[i].time >= t0 && b < n && ev[i].time >= c->time[b] + c->width) {
            c->total[b] = (double)btot * m->bps;
            c->filtered[b] = (double)bfil * m->bps;
            b++;
            btot = tot;
            bfil = fil;
        }
        if (ev[i].time < t0) {
            tot += d;
            if (sel)
                fil += d;
            btot = tot;
            bfil = fil;
        } else {
            tot += d;
            if (sel) {
                fil += d;
                if (!ev[i].kind && b < n)
                    c->filtered_alloc[b] += (double)a->n_samples * m->bps;
            }
            if (b < n) {
                if (tot > btot)
                    btot = tot;
                if (fil > bfil)
                    bfil = fil;
            }
        }
        if ((i + 1 == ne || ev[i + 1].time != ev[i].time) && fil > peak) {
            peak = fil;
            peak_t = ev[i].time;
        }
    }
    for (; b < n; b++) {
        c->total[b] = (double)btot * m->bps;
        c->filtered[b] = (double)bfil * m->bps;
        btot = tot;
        bfil = fil;
    }
    c->peak_filtered = (double)peak * m->bps;
    c->peak_filtered_time = peak_t;
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
