/*
 * feed.h - hands finished allocations from the thread that folds a trace
 * to a second thread that sums them (feed.c): batches of records through a
 * bounded ring, one mutex operation per batch, so that the folding thread
 * only copies records. The viewer's folded loads use it for their stats,
 * histograms and curve (big.c).
 */
#ifndef MT_VIEWER_FEED_H
#define MT_VIEWER_FEED_H

#include "memtrace/analyze.h"

typedef struct vfeed_rec {
    mt_alloc a;
    mt_timedelta end;            /* mt_model_end when it was folded */
    uint64_t seq;                /* its file index (on_fold's seq) */
} vfeed_rec;

/* Called on the second thread for each batch, in the order of vfeed_put.
 * Returns 0, or -1 to fail (the feed then takes no more records). */
typedef int (*vfeed_fn)(void *ctx, const vfeed_rec *recs, size_t n);

typedef struct vfeed vfeed;

/* Starts the consumer thread. NULL when out of memory or when no thread
 * can be started (the caller then sums on its own thread). */
vfeed *vfeed_start(vfeed_fn fn, void *ctx);
/* One record; may wait while the consumer is behind. Returns 0, or -1 once
 * the consumer has failed. */
int vfeed_put(vfeed *f, const mt_alloc *a, mt_timedelta end, uint64_t seq);
/* Hands over what is left, waits for the consumer and frees the feed.
 * Returns 0, or -1 when the consumer failed. */
int vfeed_finish(vfeed *f);

#endif
