/*
 * queue.c - unit test of the recorder's event queue (lib/record/queue.c),
 * linked with the recorder's objects: records come out in the order they
 * went in, with their fields; the consumer asleep with a bound far above
 * the work is woken by a producer that takes the ring past half full, and
 * by a flush's wake with its stop flag set; a stop flag set before the
 * sleep keeps it from sleeping at all. (Without those wakes the writer
 * thread, idling at 100 ms, would leave a burst's producers waiting.)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "../check.h"
#include "../../lib/record/queue.h"

#define HALF_RECORDS ((1u << 18) / 2 / 5 + 1)   /* 5 words a record without frames */
#define LONG_SLEEP_MS (600 * 1000)                /* far above anything the test waits for */

static int stop, slept;
static uint64_t seen_records, seen_bad;

static int alive(void)
{
    return 1;
}

static void *consumer(void *arg)
{
    (void)arg;
    mtr_queue_sleep(LONG_SLEEP_MS, &stop);
    __atomic_store_n(&slept, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

/* Poll for the consumer's return, up to about 60 s; if it is still
 * asleep then (a wake went missing), wake it the flush's way so that the
 * test ends. */
static int consumer_returned(void)
{
    struct timespec ts = { 0, 10 * 1000 * 1000 };
    for (int i = 0; i < 6000; i++) {
        if (__atomic_load_n(&slept, __ATOMIC_SEQ_CST))
            return 1;
        nanosleep(&ts, NULL);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
    mtr_queue_wake(1);
    return 0;
}

static void count(void *ctx, const struct mtr_rec *r)
{
    (void)ctx;
    if (r->kind != MT_REC_ALLOC || r->id != seen_records || r->size != 16 + seen_records ||
        r->n_samples != 1 || r->nframes != 0)
        seen_bad++;
    seen_records++;
}

int main(void)
{
    CHECK(mtr_queue_init() == 0, "the ring is mapped");
    mtr_queue_reset();

    /* 1. the stop flag set first: no sleep at all */
    stop = 1;
    pthread_t t;
    slept = 0;
    pthread_create(&t, NULL, consumer, NULL);
    CHECK(consumer_returned(), "a sleep with its stop flag set returns at once");
    pthread_join(t, NULL);

    /* 2. a producer taking the ring past half full wakes the sleeper */
    stop = 0;
    slept = 0;
    pthread_create(&t, NULL, consumer, NULL);
    uint64_t queued = 0;
    for (; queued < HALF_RECORDS; queued++)
        if (mtr_queue_alloc(16 + queued, 1, NULL, 0, alive) != (int64_t)queued)
            break;
    CHECK(queued == HALF_RECORDS, "%u records queued in order (%llu)", HALF_RECORDS,
          (unsigned long long)queued);
    CHECK(consumer_returned(), "the ring past half full wakes the consumer");
    pthread_join(t, NULL);
    size_t n = mtr_queue_drain(count, NULL);
    CHECK(n == queued && seen_records == queued && seen_bad == 0,
          "every record drained, in order, with its fields (%zu, %llu bad)", n,
          (unsigned long long)seen_bad);

    /* 3. a fatal signal's flush: stop set, then a wake that always wakes */
    slept = 0;
    pthread_create(&t, NULL, consumer, NULL);
    /* the consumer may not be asleep yet: either way it must return */
    __atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
    mtr_queue_wake(1);
    CHECK(consumer_returned(), "a flush's wake returns the consumer");
    pthread_join(t, NULL);

    /* 4. the ring wraps: past its end, all still in order */
    stop = 0;
    seen_records = 0;
    seen_bad = 0;
    mtr_queue_reset();
    uint64_t total = 0;
    for (int round = 0; round < 5; round++) {
        for (uint64_t i = 0; i < HALF_RECORDS - 1; i++, total++)
            mtr_queue_alloc(16 + total, 1, NULL, 0, alive);
        mtr_queue_drain(count, NULL);
    }
    CHECK(seen_records == total && seen_bad == 0,
          "five half rings through the ring: %llu records in order (%llu bad)",
          (unsigned long long)seen_records, (unsigned long long)seen_bad);
    return failures != 0;
}
