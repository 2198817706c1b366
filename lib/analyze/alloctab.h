/*
 * alloctab.h - the whole model's allocation table: every allocation of
 * the trace in file order with its collect and promote times, the order
 * of the collections, and (built on first use) the time-sorted event list
 * with the live samples after each event, behind the live-memory curve
 * and the peak. A folded model has none (model.h). Internal.
 *
 * Thread safety: filled by one builder; once the model is built, the
 * lazily made event list is built under the table's lock, and every other
 * part is read only.
 */
#ifndef MTA_ALLOCTAB_H
#define MTA_ALLOCTAB_H

#include <pthread.h>

#include "memtrace/analyze.h"
#include "peak.h"
#include "pool.h"

/* An event of the live-memory curve: allocation (kind 0) or collection (1)
 * of allocs[alloc]. Sorted by time. */
typedef struct mta_event {
    mt_timedelta time;
    uint32_t alloc;
    uint32_t kind : 1;
    /* allocs[alloc].n_samples, kept here so that the curve reads the
     * events in order without visiting the allocations; MTA_EV_SAMPLES_BIG:
     * too big, see allocs[alloc] */
    uint32_t samples : 31;
} mta_event;
#define MTA_EV_SAMPLES_BIG 0x7fffffffu

typedef struct mta_alloctab {
    MTA_VEC(mt_alloc) allocs;      /* in file order */
    MTA_VEC(uint32_t) collects;    /* allocations in the order they were collected */
    pthread_mutex_t lock;          /* guards the lazy part: */
    int events_ready;              /* atomic; 1 once events and live_after are set */
    MTA_VEC(mta_event) events;     /* sorted by time */
    int64_t *live_after;           /* live samples after events[i] */
} mta_alloctab;

/* An empty table, or NULL when out of memory. */
mta_alloctab *mta_alloctab_new(void);
void mta_alloctab_free(mta_alloctab *t);

/* The sorted event list (its length in *n), built on first call (thread
 * safe); monotone: the allocations' and collections' times never
 * decrease in file order (then no sort). NULL when out of memory. */
const mta_event *mta_alloctab_events(const mta_alloctab *t, int monotone, size_t *n);

/* The samples of event e. */
static inline uint64_t mta_alloctab_event_samples(const mta_alloctab *t, const mta_event *e)
{
    return e->samples != MTA_EV_SAMPLES_BIG ? e->samples : t->allocs.v[e->alloc].n_samples;
}

/* The peak of live samples: its height and first time, and the peak
 * accumulator fed with every time (peak.c). When the times are monotone
 * and the event list was not built, allocations and collections are
 * merged on the fly without storing anything; otherwise the event list
 * must be built (mta_alloctab_events) before the call. Returns 0, or -1
 * when the list is not there (acc left empty, *samples and *time
 * untouched). */
int mta_alloctab_peak(const mta_alloctab *t, int monotone, mta_peak_acc *acc,
                      int64_t *samples, mt_timedelta *time);

/* *live: the live samples after the last event at or before at (0 before
 * the first), from the event list. Returns 0, or -1 when the list cannot
 * be built (out of memory). */
int mta_alloctab_live_at(const mta_alloctab *t, int monotone, mt_timedelta at, int64_t *live);

/* Bytes held by the table (the event list read under its lock). */
size_t mta_alloctab_memory(const mta_alloctab *t);

#endif
