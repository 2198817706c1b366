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
void mta_peak_time(mta_peak_acc *p, mt_timedelta t, int64_t before, int64_t after,
                   uint64_t allocated);
/* The estimate for bytes per sample bps at the trace's sample rate. */
void mta_peak_result(const mta_peak_acc *p, double bps, double rate, mt_peak *out);

#endif
