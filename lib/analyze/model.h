/*
 * model.h - the insides of mt_model, shared by the files
 * of lib/analyze (model building, selections, queries). Internal.
 *
 * A model is three parts around its trace's info and scale: the stack
 * interner (stacks.h), which every model has, and exactly one of
 *   whole  the allocation table (alloctab.h): every allocation, the
 *          collections, the curve's events; what every query reads;
 *   fold   the per-node costs of one filter at one time (fold.h), which
 *          answer only mt_select_sites() with that filter and time.
 * mt_model_is_folded() (load.h) is fold != NULL.
 */
#ifndef MTA_MODEL_H
#define MTA_MODEL_H

#include <pthread.h>

#include "memtrace/analyze.h"
#include "alloctab.h"
#include "domains.h"
#include "fold.h"
#include "peak.h"
#include "stacks.h"

/* The most samples a model's allocations may hold in all: sums of sample
 * counts are int64_t (live counts) and uint64_t (costs). A trace beyond
 * this is refused. */
#define MTA_MAX_SAMPLES ((uint64_t)1 << 62)

struct mt_model {
    mt_trace_info info;            /* its strings in stacks.strings */
    mt_scale scale;                /* of info: what the estimates need */
    mta_stacks stacks;
    mta_alloctab *whole;           /* whole models only (NULL when folded) */
    mta_folded *fold;              /* folded models only (NULL when whole) */
    int monotone;                  /* event times never decrease in file order */
    mt_timedelta end;              /* the last event, or the recording's end */
    int64_t end_live_samples;
    uint64_t n_promotes, n_collects;
    /* The peak: found while reading (folded), or on first use from the
     * allocation table (ensure_peak, model.c) under the lock. */
    pthread_mutex_t lock;
    int peak_ready;                /* atomic; 1 once peak_time/peak_samples are set */
    int peak_unknown;              /* folded, times going back: not known */
    mt_timedelta peak_time;
    int64_t peak_samples;
    mta_peak_acc peak_acc;         /* the peak's accumulator (folded: while reading) */
    mt_peak peak_est;              /* the estimate, once peak_ready */
    int has_scan;                  /* the trace has leak verdicts (mt_model_scan) */
    /* A pprof profile (profile.c): MT_PROFILE_*, what it measures
     * (MT_PROFILE_HAS_*), and what kind it is, in words; 0 for a trace. */
    int profile;
    unsigned profile_has;
    const char *profile_kind;
    mt_timedelta scan_time;
    mta_domains domains;           /* OCaml 5 domains: their numbers by mt_alloc.domain */
    /* A model folded from an allocation index (allocindex.c): its stacks,
     * names and counts are those of the base model it was cloned from,
     * which outlives it; only fold and lock are its own. */
    int shares_stacks;
};

/* A new model, whole or folded as opts say (NULL when out of memory); its
 * stack interner is not yet initialised (build.c). */
mt_model *mta_model_new(const mt_model_options *opts);

/* The allocation table's parts, empty for a folded model. */
static inline size_t mta_n_allocs(const mt_model *m)
{
    return m->whole ? m->whole->allocs.n : 0;
}

/* The curve's events (their number in *n), built on first call (thread
 * safe): none for a folded model; NULL when out of memory. */
const mta_event *mta_events(const mt_model *m, size_t *n);

#endif
