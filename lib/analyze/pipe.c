/*
 * pipe.c - the ring of batches between the reading thread and the folding
 * thread of a folded model (pipe.h). One lock and two condition variables:
 * a batch is handed over every couple of thousand events, so the lock is
 * taken rarely, and a thread that waits sleeps instead of spinning on a
 * core the other thread (or another process) needs. A thread that waits
 * is woken when half the ring is ready for it, not at the first batch:
 * each sleep and wake-up costs microseconds, and the two threads, about
 * as fast as each other, would otherwise take turns at every batch.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "pipe.h"
#include "thread_start.h"

int mta_pipe_init(mta_pipe *p)
{
    memset(p, 0, sizeof *p);
    p->b = calloc(MTA_PIPE_BATCHES, sizeof *p->b);
    if (!p->b)
        return -1;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->filled, NULL);
    pthread_cond_init(&p->emptied, NULL);
    return 0;
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
    if (!p->b)
        return;
    for (unsigned i = 0; i < MTA_PIPE_BATCHES; i++) {
        mta_batch *b = &p->b[i];
        batch_clear(b);
        free(b->nodes.v);
        free(b->frames.v);
        free(b->funcs.v);
        free(b->warnings.v);
    }
    free(p->b);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->filled);
    pthread_cond_destroy(&p->emptied);
    memset(p, 0, sizeof *p);
}

mta_batch *mta_pipe_free_batch(mta_pipe *p)
{
    pthread_mutex_lock(&p->lock);
    while (p->n_full == MTA_PIPE_BATCHES && !p->stop) {
        p->reading_waits = 1;
        pthread_cond_wait(&p->emptied, &p->lock);
        p->reading_waits = 0;
    }
    mta_batch *b = p->stop ? NULL : &p->b[(p->head + p->n_full) % MTA_PIPE_BATCHES];
    pthread_mutex_unlock(&p->lock);
    if (b)
        batch_clear(b); /* (what the folding thread left: it never frees) */
    return b;
}

void mta_pipe_put(mta_pipe *p, int last)
{
    pthread_mutex_lock(&p->lock);
    p->n_full++;
    if (p->folding_waits && (p->n_full >= MTA_PIPE_WAKE || last))
        pthread_cond_signal(&p->filled);
    pthread_mutex_unlock(&p->lock);
}

mta_batch *mta_pipe_take(mta_pipe *p)
{
    pthread_mutex_lock(&p->lock);
    while (p->n_full == 0) {
        p->folding_waits = 1;
        pthread_cond_wait(&p->filled, &p->lock);
        p->folding_waits = 0;
    }
    mta_batch *b = &p->b[p->head];
    pthread_mutex_unlock(&p->lock);
    return b;
}

void mta_pipe_release(mta_pipe *p)
{
    pthread_mutex_lock(&p->lock);
    p->head = (p->head + 1) % MTA_PIPE_BATCHES;
    p->n_full--;
    if (p->reading_waits && p->n_full <= MTA_PIPE_BATCHES - MTA_PIPE_WAKE)
        pthread_cond_signal(&p->emptied);
    pthread_mutex_unlock(&p->lock);
}

void mta_pipe_stop(mta_pipe *p)
{
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_signal(&p->emptied);
    pthread_mutex_unlock(&p->lock);
}

int mta_pipe_start(pthread_t *th, void *(*fn)(void *), void *arg)
{
    return mt_thread_start(th, fn, arg);
}
