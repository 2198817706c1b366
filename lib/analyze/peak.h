/*
 * peak.h - the peak's accumulator (peak.c): fed once per time of the
 * live-memory curve, in time order, with the live samples before and
 * after that time's events and the samples it allocated. Internal.
 */
#ifndef MTA_PEAK_H
#define MTA_PEAK_H

#include "memtrace/analyze.h"

#define MTA_PEAK_BINS 4096
typedef struct mta_peak_acc {
    int64_t max;                   /* highest live samples after a time */
    mt_timedelta max_t;            /* the first time it was reached */
    int64_t last;                  /* live samples after the last time: the end */
    unsigned shift;                /* bin k: levels [k << shift, (k + 1) << shift) */
    uint64_t bin[MTA_PEAK_BINS];   /* samples allocated, by the level before */
    uint64_t reach[MTA_PEAK_BINS]; /* the same by the level after: reaching it */
} mta_peak_acc;
void mta_peak_init(mta_peak_acc *p);
/* Bins two by two until the highest level, max, fits (peak.c). */
void mta_peak_widen(mta_peak_acc *p);
/* One time of the curve: the live samples before and after its events,
 * and the samples it allocated. Inline: a folded read calls it once per
 * event time, and a call that saves the registers the widening needs cost
 * more than the bins' sums. */
static inline void mta_peak_time(mta_peak_acc *p, mt_timedelta t, int64_t before, int64_t after,
                                 uint64_t allocated)
{
    p->last = after;
    if (after > p->max) {
        p->max = after;
        p->max_t = t;
        if ((uint64_t)p->max >> p->shift >= MTA_PEAK_BINS)
            mta_peak_widen(p);
    }
    if (allocated && before >= 0) {
        uint64_t k = (uint64_t)before >> p->shift;   /* before <= max: in range */
        p->bin[k < MTA_PEAK_BINS ? k : MTA_PEAK_BINS - 1] += allocated;
    }
    if (allocated && after >= 0) {
        uint64_t k = (uint64_t)after >> p->shift;    /* after <= max: in range */
        p->reach[k < MTA_PEAK_BINS ? k : MTA_PEAK_BINS - 1] += allocated;
    }
}
/* The estimate for bytes per sample bps at the trace's sample rate. */
void mta_peak_result(const mta_peak_acc *p, double bps, double rate, mt_peak *out);

#endif
