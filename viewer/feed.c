/*
 * feed.c - the ring of batches between a folding thread and a summing
 * thread (see feed.h). The producer fills the batch at `head` without a
 * lock; a full batch is published under the mutex (count + 1) and the
 * producer moves on to the next slot, waiting only when every slot is
 * full. The consumer takes the batch at `tail`, runs the callback on it
 * outside the lock, then frees the slot. The mutex orders the records'
 * writes before their reads.
 */
#include "feed.h"

#include <pthread.h>
#include <stdlib.h>

#define FEED_BATCH 4096          /* records per batch */
#define FEED_SLOTS 32            /* batches in the ring */

struct vfeed {
    vfeed_fn fn;
    void *ctx;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;      /* a batch published or freed, or closed */
    vfeed_rec *slot[FEED_SLOTS];
    size_t len[FEED_SLOTS];      /* records in each published batch */
    size_t head, tail, count;    /* producer's slot, consumer's slot, published */
    size_t fill;                 /* records in the producer's batch */
    int closed, failed;          /* under lock */
};

static void *consume(void *arg)
{
    vfeed *f = arg;
    pthread_mutex_lock(&f->lock);
    for (;;) {
        while (f->count == 0 && !f->closed)
            pthread_cond_wait(&f->changed, &f->lock);
        if (f->count == 0)
            break;
        size_t t = f->tail;
        int skip = f->failed;
        pthread_mutex_unlock(&f->lock);
        int rc = skip ? 0 : f->fn(f->ctx, f->slot[t], f->len[t]);
        pthread_mutex_lock(&f->lock);
        if (rc < 0)
            f->failed = 1;
        f->tail = (t + 1) % FEED_SLOTS;
        f->count--;
        pthread_cond_signal(&f->changed);
    }
    pthread_mutex_unlock(&f->lock);
    return NULL;
}

static void feed_free(vfeed *f)
{
    for (size_t i = 0; i < FEED_SLOTS; i++)
        free(f->slot[i]);
    pthread_cond_destroy(&f->changed);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

vfeed *vfeed_start(vfeed_fn fn, void *ctx)
{
    vfeed *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->fn = fn;
    f->ctx = ctx;
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->changed, NULL);
    for (size_t i = 0; i < FEED_SLOTS; i++)
        if (!(f->slot[i] = malloc(FEED_BATCH * sizeof *f->slot[i]))) {
            feed_free(f);
            return NULL;
        }
    if (pthread_create(&f->thread, NULL, consume, f) != 0) {
        feed_free(f);
        return NULL;
    }
    return f;
}

/* Publish the producer's batch; wait for a free slot for the next one. */
static int publish(vfeed *f)
{
    pthread_mutex_lock(&f->lock);
    int failed = f->failed;
    if (!failed) {
        f->len[f->head] = f->fill;
        f->count++;
        pthread_cond_signal(&f->changed);
        f->head = (f->head + 1) % FEED_SLOTS;
        while (f->count == FEED_SLOTS && !f->failed)
            pthread_cond_wait(&f->changed, &f->lock);
        failed = f->failed;
    }
    f->fill = 0;
    pthread_mutex_unlock(&f->lock);
    return failed ? -1 : 0;
}

int vfeed_put(vfeed *f, const mt_alloc *a, mt_timedelta end, uint64_t seq)
{
    vfeed_rec *r = &f->slot[f->head][f->fill++];
    r->a = *a;
    r->end = end;
    r->seq = seq;
    return f->fill == FEED_BATCH ? publish(f) : 0;
}

int vfeed_finish(vfeed *f)
{
    if (f->fill)
        publish(f);
    pthread_mutex_lock(&f->lock);
    f->closed = 1;
    pthread_cond_signal(&f->changed);
    pthread_mutex_unlock(&f->lock);
    pthread_join(f->thread, NULL);
    int failed = f->failed;
    feed_free(f);
    return failed ? -1 : 0;
}
