/*
 * alloctab.c - the whole model's allocation table (alloctab.h): the event
 * list of the live-memory curve, merged from the allocations and the
 * collections (sorted first when the trace's times go back), and the
 * peak walked from it or on the fly.
 */
#include <stdlib.h>
#include <string.h>

#include "alloctab.h"
#include "check.h"

mta_alloctab *mta_alloctab_new(void)
{
    mta_alloctab *t = calloc(1, sizeof *t);
    if (t)
        pthread_mutex_init(&t->lock, NULL);
    return t;
}

void mta_alloctab_free(mta_alloctab *t)
{
    if (!t)
        return;
    free(t->allocs.v);
    free(t->collects.v);
    free(t->events.v);
    free(t->live_after);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

static int cmp_time(const void *x, const void *y, void *ctx)
{
    const mta_alloctab *t = ctx;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    mt_timedelta ta = t->allocs.v[a].collect, tb = t->allocs.v[b].collect;
    return ta < tb ? -1 : ta > tb ? 1 : (a > b) - (a < b);
}

static int cmp_alloc_time(const void *x, const void *y, void *ctx)
{
    const mta_alloctab *t = ctx;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    mt_timedelta ta = t->allocs.v[a].time, tb = t->allocs.v[b].time;
    return ta < tb ? -1 : ta > tb ? 1 : (a > b) - (a < b);
}

/* Merge allocations (by time) and collections (by time) into the event
 * list with the live count after each event. */
static int build_events(mta_alloctab *t, int monotone)
{
    size_t na = t->allocs.n, nc = t->collects.n, n = na + nc;
    uint32_t *order = NULL;
    if (!monotone) {
        order = malloc((na ? na : 1) * sizeof *order);
        if (!order)
            return -1;
        for (size_t i = 0; i < na; i++)
            order[i] = (uint32_t)i;
        qsort_r(order, na, sizeof *order, cmp_alloc_time, t);
        qsort_r(t->collects.v, nc, sizeof *t->collects.v, cmp_time, t);
    }
    t->events.v = malloc((n ? n : 1) * sizeof *t->events.v);
    t->live_after = malloc((n ? n : 1) * sizeof *t->live_after);
    if (!t->events.v || !t->live_after) {
        free(order);
        free(t->events.v);
        free(t->live_after);
        t->events.v = NULL;
        t->live_after = NULL;
        return -1;
    }
    t->events.n = t->events.cap = n;
    const mt_alloc *al = t->allocs.v;
    mta_event *ev = t->events.v;
    size_t i = 0, j = 0, k = 0;
    int64_t live = 0;
    while (i < na || j < nc) {
        uint32_t ai = i < na ? (order ? order[i] : (uint32_t)i) : 0;
        uint32_t ci = j < nc ? t->collects.v[j] : 0;
        /* at equal times, allocations first (a block can live 0us) */
        if (j >= nc || (i < na && al[ai].time <= al[ci].collect)) {
            ev[k].time = al[ai].time;
            ev[k].alloc = ai;
            ev[k].kind = 0;
            ev[k].samples = al[ai].n_samples < MTA_EV_SAMPLES_BIG
                                ? (uint32_t)al[ai].n_samples : MTA_EV_SAMPLES_BIG;
            live += (int64_t)al[ai].n_samples;
            i++;
        } else {
            ev[k].time = al[ci].collect;
            ev[k].alloc = ci;
            ev[k].kind = 1;
            ev[k].samples = al[ci].n_samples < MTA_EV_SAMPLES_BIG
                                ? (uint32_t)al[ci].n_samples : MTA_EV_SAMPLES_BIG;
            live -= (int64_t)al[ci].n_samples;
            j++;
        }
        MT_ASSERT(k == 0 || ev[k - 1].time <= ev[k].time);   /* the merge keeps time order */
        t->live_after[k++] = live;
    }
    MT_ASSERT(k == n);
    free(order);
    return 0;
}

const mta_event *mta_alloctab_events(const mta_alloctab *ct, int monotone, size_t *n)
{
    mta_alloctab *t = (mta_alloctab *)ct; /* the lazily built part is behind the lock */
    if (!__atomic_load_n(&t->events_ready, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&t->lock);
        if (!t->events_ready && build_events(t, monotone) == 0)
            __atomic_store_n(&t->events_ready, 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&t->lock);
        if (!t->events_ready)
            return NULL;
    }
    *n = t->events.n;
    return t->events.v;
}

int mta_alloctab_peak(const mta_alloctab *t, int monotone, mta_peak_acc *acc,
                      int64_t *samples, mt_timedelta *time)
{
    mta_peak_init(acc);
    if (!monotone || __atomic_load_n(&t->events_ready, __ATOMIC_ACQUIRE)) {
        if (!__atomic_load_n(&t->events_ready, __ATOMIC_ACQUIRE))
            return -1;
        const mta_event *ev = t->events.v;
        size_t n = t->events.n;
        *samples = 0;
        *time = 0;
        int64_t before = 0;
        uint64_t allocated = 0;
        for (size_t k = 0; k < n; k++) {
            if (!ev[k].kind)
                allocated += mta_alloctab_event_samples(t, &ev[k]);
            if (k + 1 < n && ev[k + 1].time == ev[k].time)
                continue;
            if (t->live_after[k] > *samples) {
                *samples = t->live_after[k];
                *time = ev[k].time;
            }
            mta_peak_time(acc, ev[k].time, before, t->live_after[k], allocated);
            before = t->live_after[k];
            allocated = 0;
        }
        return 0;
    }
    const mt_alloc *al = t->allocs.v;
    const uint32_t *co = t->collects.v;
    size_t na = t->allocs.n, nc = t->collects.n, i = 0, j = 0;
    int64_t live = 0, peak = 0;
    mt_timedelta peak_t = 0;
    while (i < na || j < nc) {
        /* all events of the next time, allocations first */
        mt_timedelta ta = i < na ? al[i].time : MT_TIME_NEVER;
        mt_timedelta tc = j < nc ? al[co[j]].collect : MT_TIME_NEVER;
        mt_timedelta tt = ta <= tc ? ta : tc;
        int64_t before = live;
        uint64_t allocated = 0;
        while (i < na && al[i].time == tt)
            allocated += al[i++].n_samples;
        live += (int64_t)allocated;
        while (j < nc && al[co[j]].collect == tt) {
            /* collections reach their records in random order */
            if (j + 16 < nc)
                __builtin_prefetch(&al[co[j + 16]]);
            live -= (int64_t)al[co[j++]].n_samples;
        }
        if (live > peak) {
            peak = live;
            peak_t = tt;
        }
        mta_peak_time(acc, tt, before, live, allocated);
    }
    *samples = peak;
    *time = peak_t;
    return 0;
}

int mta_alloctab_live_at(const mta_alloctab *t, int monotone, mt_timedelta at, int64_t *live)
{
    size_t n = 0;
    const mta_event *ev = mta_alloctab_events(t, monotone, &n);
    if (!ev)
        return -1;
    /* last event with time <= at */
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ev[mid].time <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    *live = lo ? t->live_after[lo - 1] : 0;
    return 0;
}

size_t mta_alloctab_memory(const mta_alloctab *ct)
{
    mta_alloctab *t = (mta_alloctab *)ct;
    pthread_mutex_lock(&t->lock);
    size_t lazy = t->events.cap * sizeof(mta_event) + t->events.n * sizeof(int64_t);
    pthread_mutex_unlock(&t->lock);
    return sizeof *t + t->allocs.cap * sizeof(mt_alloc) + t->collects.cap * sizeof(uint32_t) + lazy;
}
