/*
 * curve.c - unit test of mt_query_curve (lib/analyze/curve.c) on windows
 * of whole models, the viewer's zoom: for the fixture traces, with and
 * without a filter, and windows anywhere (before the first event, across
 * the trace, past its end; one bucket or hundreds), every bucket holds
 * the highest live bytes after each time inside it and the value carried
 * in when no event falls on its start; the bytes the selection allocated
 * in it; the filtered peak is the highest value after a time and its
 * first time, whatever the window. The reference is a brute-force replay
 * of the model's allocations.
 */
#include <stdio.h>
#include <stdlib.h>

#include "analyze/load.h"
#include "memtrace/analyze.h"
#include "testtrace.h"

typedef struct ev {
    mt_timedelta t;
    int64_t d_tot, d_fil, fil_alloc;
} ev;

static int by_time(const void *x, const void *y)
{
    const ev *a = x, *b = y;
    return a->t < b->t ? -1 : a->t > b->t;
}

/* The distinct times of the model's events, in order, with the live
 * samples after each (all, selected) and the selected samples allocated
 * at it. Returns the number of times. */
static size_t replay(const mt_model *m, const mt_selection *s, ev **out)
{
    size_t na = mt_model_n_allocs(m), n = 0;
    const mt_alloc *al = mt_model_allocs(m);
    ev *e = malloc((2 * na + 1) * sizeof *e);
    for (size_t i = 0; i < na; i++) {
        int64_t ns = (int64_t)al[i].n_samples, sel = mt_selection_has(s, i);
        e[n++] = (ev){al[i].time, ns, sel ? ns : 0, sel ? ns : 0};
        if (al[i].collect != MT_TIME_NEVER)
            e[n++] = (ev){al[i].collect, -ns, sel ? -ns : 0, 0};
    }
    qsort(e, n, sizeof *e, by_time);
    size_t k = 0;
    int64_t tot = 0, fil = 0;
    for (size_t i = 0; i < n; i++) {
        ev x = e[i];   /* (e[k] may be e[i]) */
        if (k == 0 || e[k - 1].t != x.t)
            e[k++] = (ev){x.t, tot, fil, 0};
        tot += x.d_tot;
        fil += x.d_fil;
        e[k - 1].d_tot = tot;   /* from here on: the values after the time */
        e[k - 1].d_fil = fil;
        e[k - 1].fil_alloc += x.fil_alloc;
    }
    *out = e;
    return k;
}

/* Does curve c agree with the replay's times e[0..n) at bps? */
static int agrees(const mt_curve *c, const ev *e, size_t n, double bps)
{
    size_t i = 0;
    int64_t tot = 0, fil = 0;   /* the value carried in */
    for (size_t b = 0; b < c->n; b++) {
        mt_timedelta lo = c->t0 + (mt_timedelta)b * c->width, hi = lo + c->width;
        for (; i < n && e[i].t < lo; i++) {
            tot = e[i].d_tot;
            fil = e[i].d_fil;
        }
        int at_start = i < n && e[i].t == lo;
        int64_t mt = at_start ? INT64_MIN : tot, mf = at_start ? INT64_MIN : fil, alloc = 0;
        for (; i < n && e[i].t < hi; i++) {
            tot = e[i].d_tot;
            fil = e[i].d_fil;
            mt = tot > mt ? tot : mt;
            mf = fil > mf ? fil : mf;
            alloc += e[i].fil_alloc;
        }
        if (c->time[b] != lo || c->total[b] != (double)mt * bps ||
            c->filtered[b] != (double)mf * bps || c->filtered_alloc[b] != (double)alloc * bps) {
            printf("  bucket %zu [%lld, %lld): total %g (expected %g), filtered %g (%g), "
                   "allocated %g (%g)\n", b, (long long)lo, (long long)hi, c->total[b],
                   (double)mt * bps, c->filtered[b], (double)mf * bps, c->filtered_alloc[b],
                   (double)alloc * bps);
            return 0;
        }
    }
    return 1;
}

static uint64_t state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void) { return tt_rnd(&state); }

static void test_trace(const char *dir, const char *name)
{
    char path[4096], *err = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    mt_model *m = mt_model_load(path, NULL, &err);
    CHECK(m, "%s loads (%s)", name, err ? err : "");
    if (!m)
        return;
    const char *filters[] = {NULL, "collect:never", "size:>=64"};
    for (size_t f = 0; f < sizeof filters / sizeof *filters; f++) {
        mt_filter *flt = filters[f] ? mt_filter_parse(filters[f], &err, NULL) : NULL;
        mt_selection *s = mt_select(m, flt, MT_TIME_END);
        ev *e = NULL;
        size_t n = replay(m, s, &e);
        int64_t peak = 0;
        mt_timedelta peak_t = 0;
        for (size_t i = 0; i < n; i++)
            if (e[i].d_fil > peak) {
                peak = e[i].d_fil;
                peak_t = e[i].t;
            }
        double bps = mt_model_bytes_per_sample(m);
        mt_timedelta end = mt_model_end(m);
        uint64_t span = (uint64_t)end + 20;
        int ok = 1, tried = 0;
        for (int k = 0; k < 200 && ok; k++, tried++) {
            mt_timedelta t0 = k % 4 == 0 ? 0 : (mt_timedelta)(rnd() % span);
            mt_timedelta t1 = k % 4 == 1 ? MT_TIME_END : t0 + 1 + (mt_timedelta)(rnd() % span);
            size_t nb = k % 5 == 2 ? 1 + rnd() % 3 : 1 + rnd() % 300;
            mt_curve *c = mt_query_curve(s, t0, t1, nb);
            ok = c && c->n == nb && c->t0 == t0 && agrees(c, e, n, bps) &&
                 c->peak_filtered == (double)peak * bps && c->peak_filtered_time == peak_t;
            if (!ok)
                printf("  window [%lld, %lld) in %zu\n", (long long)t0, (long long)t1, nb);
            mt_curve_free(c);
        }
        CHECK(ok, "%s, filter '%s': %d windows agree with a replay of the allocations", name,
              filters[f] ? filters[f] : "", tried);
        free(e);
        mt_selection_free(s);
        mt_filter_free(flt);
    }
    mt_model_free(m);
}

int main(void)
{
    const char *dir = getenv("MT_FIXTURES");
    if (!dir)
        dir = "tests/fixtures/memtrace";
    const char *traces[] = {"leak.ctf", "prodcons.ctf", "major.ctf", "wrap.ctf", "synth_edge.ctf"};
    for (size_t i = 0; i < sizeof traces / sizeof *traces; i++)
        test_trace(dir, traces[i]);
    return failures != 0;
}
