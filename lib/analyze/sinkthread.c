/*
 * sinkthread.c - sinks on a thread of their own (sinkthread.h). The
 * caller's thread fills a batch of records without a lock and hands it
 * over on the ring of pipe.h (its wake-up policy: a waiting thread wakes
 * when half the ring is ready); the sinks' thread calls every
 * on_done_apart on each record, in order. A sink that fails stops the
 * ring: the caller's next hand-off says so.
 */
#include <pthread.h>
#include <stdlib.h>

#include "pipe.h"
#include "sinkthread.h"
#include "thread_start.h"

#define SINK_BATCH 4096          /* records per batch (256 KB) */
#define SINK_BATCHES 32          /* in the ring (8 MB) */

typedef struct rec {
    mt_alloc a;
    mt_timedelta end;
    uint64_t seq;
} rec;

typedef struct batch {
    size_t n;
    int last;                    /* nothing follows */
    rec r[SINK_BATCH];
} batch;

struct mta_sinkthread {
    const mt_sink *sinks;
    size_t n_sinks;
    mta_ring ring;
    pthread_t thread;
    batch *fill;                 /* the caller's batch, or NULL once stopped */
    int failed;                  /* set by the sinks' thread before it stops the ring */
};

static void *consume(void *arg)
{
    mta_sinkthread *t = arg;
    for (;;) {
        batch *b = mta_ring_take(&t->ring);
        for (size_t i = 0; i < b->n; i++)
            for (size_t k = 0; k < t->n_sinks; k++) {
                const mt_sink *s = &t->sinks[k];
                if (s->on_done_apart &&
                    s->on_done_apart(s->ctx, &b->r[i].a, b->r[i].end, b->r[i].seq) < 0) {
                    /* the caller's next hand-off fails; it takes nothing more */
                    t->failed = 1;
                    mta_ring_stop(&t->ring);
                    return NULL;
                }
            }
        int last = b->last;
        mta_ring_release(&t->ring);
        if (last)
            return NULL;
    }
}

mta_sinkthread *mta_sinkthread_start(const mt_sink *sinks, size_t n)
{
    mta_sinkthread *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->sinks = sinks;
    t->n_sinks = n;
    if (mta_ring_init(&t->ring, SINK_BATCHES, sizeof(batch)) < 0) {
        free(t);
        return NULL;
    }
    t->fill = mta_ring_free_slot(&t->ring);
    if (mt_thread_start(&t->thread, consume, t) != 0) {
        mta_ring_destroy(&t->ring);
        free(t);
        return NULL;
    }
    return t;
}

/* Hands the caller's batch over and takes the next slot. */
static int hand_over(mta_sinkthread *t, int last)
{
    t->fill->last = last;
    mta_ring_put(&t->ring, last);
    t->fill = last ? NULL : mta_ring_free_slot(&t->ring);
    if (!last && t->fill)
        t->fill->n = 0;
    return last || t->fill ? 0 : -1;
}

int mta_sinkthread_put(mta_sinkthread *t, const mt_alloc *a, mt_timedelta end, uint64_t seq)
{
    if (!t->fill)
        return -1;
    rec *r = &t->fill->r[t->fill->n++];
    r->a = *a;
    r->end = end;
    r->seq = seq;
    return t->fill->n == SINK_BATCH ? hand_over(t, 0) : 0;
}

int mta_sinkthread_finish(mta_sinkthread *t)
{
    /* the last batch, unless the ring stopped (the thread returned) */
    if (t->fill)
        hand_over(t, 1);
    pthread_join(t->thread, NULL);
    int failed = t->failed;
    mta_ring_destroy(&t->ring);
    free(t);
    return failed ? -1 : 0;
}
