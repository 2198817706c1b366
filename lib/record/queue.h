/*
 * queue.h - the tracer's event queue: allocating and freeing threads append
 * records (under lock.h's lock, a few hundred nanoseconds per sampled event),
 * one consumer - the writer thread, or whoever stops the trace - drains
 * them into the trace writer.
 *
 * Records are variable-sized runs of 64-bit words in one ring. The id of an
 * allocation is assigned when it is queued, in queue order, which is the
 * order the writer numbers allocations in; an event's time is read before
 * the lock and raised under it to the queue's last time when older, so
 * times never decrease along the queue.
 */
#ifndef MT_RECORD_QUEUE_H
#define MT_RECORD_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "thread.h"

enum { MT_REC_ALLOC = 1, MT_REC_COLLECT = 2 };
/* The ring's size in 64-bit words (2 MiB). */
#define MTR_QUEUE_WORDS ((uint64_t)1 << 18)
/* Where an allocation's memory came from (struct mtr_rec.source). */
enum { MT_REC_SOURCE_MALLOC = 0, MT_REC_SOURCE_MMAP = 1 };

struct mtr_rec {
    int kind;
    int64_t time;            /* µs since the epoch */
    uint64_t id;
    uint64_t size, n_samples;
    int source;              /* MT_REC_SOURCE_* */
    size_t nframes;
    const uint64_t *frames;  /* innermost first */
};

MT_HIDDEN int mtr_queue_init(void);
/* Append; returns the allocation's id, or -1 if the queue stayed full
 * (or the consumer is gone, consumer_alive() false). */
MT_HIDDEN int64_t mtr_queue_alloc(uint64_t size, uint64_t n_samples, const uintptr_t *frames,
                                 size_t nframes, int (*consumer_alive)(void));
/* The same for memory of another source (MT_REC_SOURCE_*). */
MT_HIDDEN int64_t mtr_queue_alloc_from(uint64_t size, uint64_t n_samples, const uintptr_t *frames,
                                      size_t nframes, int source, int (*consumer_alive)(void));
MT_HIDDEN int mtr_queue_collect(uint64_t id, int (*consumer_alive)(void));
/* Words drained since the queue's last reset (the writer's pace). */
MT_HIDDEN uint64_t mtr_queue_drained(void);
/* Consumer: call fn on each record present now; returns how many. */
MT_HIDDEN size_t mtr_queue_drain(void (*fn)(void *ctx, const struct mtr_rec *r), void *ctx);
/* The consumer sleeps at most ms, or until a producer finds the ring past
 * half full (or full), or until mtr_queue_wake(1); not at all when *stop
 * is set (whoever sets it calls mtr_queue_wake(1) after). */
MT_HIDDEN void mtr_queue_sleep(int64_t ms, const int *stop);
/* Wake the consumer: once a sleep (always = 0: a producer), or each time
 * (always = 1: a fatal signal's flush). Async-signal-safe: atomics and a
 * futex wake. */
MT_HIDDEN void mtr_queue_wake(int always);
/* Start over (new trace): ids from 0, queue empty. */
MT_HIDDEN void mtr_queue_reset(void);
MT_HIDDEN void mtr_queue_lock(void);
MT_HIDDEN void mtr_queue_unlock(void);

#endif
