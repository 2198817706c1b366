/*
 * sinkthread.h - the sinks of a read that run on a thread of their own
 * (mt_sink.on_done_apart; sinkthread.c): finished allocations handed over
 * in batches on the ring of pipe.h while the caller's thread goes on
 * folding. Internal to lib/analyze (read.c).
 */
#ifndef MTA_SINKTHREAD_H
#define MTA_SINKTHREAD_H

#include "memtrace/analyze.h"

typedef struct mta_sinkthread mta_sinkthread;

/* Starts the thread that calls the on_done_apart of sinks[0 .. n - 1] (the
 * array must outlive it). NULL when out of memory or no thread can be
 * started: the caller then calls them itself. */
mta_sinkthread *mta_sinkthread_start(const mt_sink *sinks, size_t n);
/* One finished allocation (end: mt_model_end when it finished); may wait
 * while the thread is behind. Returns 0, or -1 once a sink failed. */
int mta_sinkthread_put(mta_sinkthread *t, const mt_alloc *a, mt_timedelta end, uint64_t seq);
/* Hands over what is left, waits for the thread and frees it. Returns 0,
 * or -1 when a sink failed. */
int mta_sinkthread_finish(mta_sinkthread *t);

#endif
