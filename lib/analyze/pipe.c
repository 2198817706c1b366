/*
 * pipe.c - the ring of batches between two threads of a read (pipe.h),
 * and the folded model's pipe of event batches on it. One lock and two
 * condition variables: a batch is handed over every couple of thousand
 * records, so the lock is taken rarely, and a thread that waits sleeps
 * instead of spinning on a core the other thread (or another process)
 * needs. A thread that waits is woken when half the ring is ready for it,
 * not at the first batch: each sleep and wake-up costs microseconds, and
 * the two threads, about as fast as each other, would otherwise take turns
 * at every batch.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pipe.h"
#include "thread_start.h"

int mta_ring_init(mta_ring *r, unsigned n, size_t slot_size)
{
    memset(r, 0, sizeof *r);
    r->slots = calloc(n, slot_size);
    if (!r->slots)
        return -1;
    r->slot_size = slot_size;
    r->n = n;
    r->wake = n / 2;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->filled, NULL);
    pthread_cond_init(&r->emptied, NULL);
    return 0;
}

void mta_ring_destroy(mta_ring *r)
{
    if (!r->slots)
        return;
    free(r->slots);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->filled);
    pthread_cond_destroy(&r->emptied);
    memset(r, 0, sizeof *r);
}

void *mta_ring_slot(mta_ring *r, unsigned i)
{
    MT_ASSERT(i < r->n);
    return r->slots + (size_t)i * r->slot_size;
}

void *mta_ring_free_slot(mta_ring *r)
{
    pthread_mutex_lock(&r->lock);
    while (r->n_full == r->n && !r->stop) {
        r->putting_waits = 1;
        pthread_cond_wait(&r->emptied, &r->lock);
        r->putting_waits = 0;
    }
    void *s = r->stop ? NULL : mta_ring_slot(r, (r->head + r->n_full) % r->n);
    pthread_mutex_unlock(&r->lock);
    return s;
}

void mta_ring_put(mta_ring *r, int last)
{
    pthread_mutex_lock(&r->lock);
    MT_ASSERT(r->n_full < r->n);   /* a slot put was a free one */
    r->n_full++;
    if (r->taking_waits && (r->n_full >= r->wake || last))
        pthread_cond_signal(&r->filled);
    pthread_mutex_unlock(&r->lock);
}

void *mta_ring_take(mta_ring *r)
{
    pthread_mutex_lock(&r->lock);
    while (r->n_full == 0) {
        r->taking_waits = 1;
        pthread_cond_wait(&r->filled, &r->lock);
        r->taking_waits = 0;
    }
    void *s = mta_ring_slot(r, r->head);
    pthread_mutex_unlock(&r->lock);
    return s;
}

void mta_ring_release(mta_ring *r)
{
    pthread_mutex_lock(&r->lock);
    MT_ASSERT(r->n_full > 0 && r->head < r->n);   /* a slot released was taken */
    r->head = (r->head + 1) % r->n;
    r->n_full--;
    if (r->putting_waits && r->n_full <= r->n - r->wake)
        pthread_cond_signal(&r->emptied);
    pthread_mutex_unlock(&r->lock);
}

void mta_ring_stop(mta_ring *r)
{
    pthread_mutex_lock(&r->lock);
    r->stop = 1;
    pthread_cond_signal(&r->emptied);
    pthread_mutex_unlock(&r->lock);
}

/* ---- the folded model's pipe: batches of events ---- */

int mta_pipe_init(mta_pipe *p)
{
    memset(p, 0, sizeof *p);
    return mta_ring_init(&p->ring, MTA_PIPE_BATCHES, sizeof(mta_batch));
}

static void batch_clear(mta_batch *b)
{
    for (size_t i = 0; i < b->warnings.n; i++)
        free(b->warnings.v[i]);
    free(b->message);
    b->warnings.n = 0;
    b->message = NULL;
    b->n = b->nodes.n = b->frames.n = b->funcs.n = 0;
    b->status = MTA_PIPE_MORE;
    b->why = NULL;
}

void mta_pipe_destroy(mta_pipe *p)
{
    if (!p->ring.slots)
        return;
    for (unsigned i = 0; i < MTA_PIPE_BATCHES; i++) {
        mta_batch *b = mta_ring_slot(&p->ring, i);
        batch_clear(b);
        free(b->nodes.v);
        free(b->frames.v);
        free(b->funcs.v);
        free(b->warnings.v);
    }
    mta_ring_destroy(&p->ring);
    memset(p, 0, sizeof *p);
}

mta_batch *mta_pipe_free_batch(mta_pipe *p)
{
    mta_batch *b = mta_ring_free_slot(&p->ring);
    if (b)
        batch_clear(b); /* (what the folding thread left: it never frees) */
    return b;
}

void mta_pipe_put(mta_pipe *p, int last)
{
    mta_ring_put(&p->ring, last);
}

mta_batch *mta_pipe_take(mta_pipe *p)
{
    return mta_ring_take(&p->ring);
}

void mta_pipe_release(mta_pipe *p)
{
    mta_ring_release(&p->ring);
}

void mta_pipe_stop(mta_pipe *p)
{
    mta_ring_stop(&p->ring);
}

int mta_pipe_start(pthread_t *th, void *(*fn)(void *), void *arg)
{
    return mt_thread_start(th, fn, arg);
}
