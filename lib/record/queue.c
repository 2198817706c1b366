/*
 * queue.c - the tracer's event queue (see queue.h).
 *
 * Layout of a record in the ring, in 64-bit words:
 *   header = kind | nframes << 8 | words << 32 | source << 56, time, id,
 *   and for allocations: size, n_samples, frames...
 * A header of kind PAD means "skip to the start of the ring".
 * head and tail count words forever; the ring index is count % RING_WORDS.
 */
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lock.h"
#include "queue.h"
#include "own.h"

#define RING_WORDS MTR_QUEUE_WORDS
#define PAD 0xff
#define WAIT_NS 200000                   /* 0.2 ms between retries when full */
#define WAIT_ROUNDS 10000                /* give up after about 2 s */

static uint64_t *ring;
/* The producers' line (what they write under the lock) and the consumer's
 * (tail), apart: a record drained does not take the producers' line away,
 * nor a record queued the consumer's. A producer reads tail only when the
 * tail it saw last leaves too little room (tail never goes back). */
static struct {
    int lock_word;
    uint64_t head;        /* words queued, under the lock */
    uint64_t next_id;
    int64_t last_time;
    uint64_t tail_seen;   /* tail as read last, <= tail */
} prod __attribute__((aligned(64)));
static uint64_t tail __attribute__((aligned(64)));   /* words drained: the consumer's */
/* The consumer's sleep and its wake, an event count: `word` is the futex
 * it sleeps on, bumped by every wake; `asked` says a producer has asked
 * since the consumer last went to sleep, so that a ring past half full
 * costs one wake a turn, not one a record. */
static struct {
    int word;
    int asked;
} wake __attribute__((aligned(64)));

void mtr_queue_lock(void)
{
    mtr_lock(&prod.lock_word);
}

void mtr_queue_unlock(void)
{
    mtr_unlock(&prod.lock_word);
}

int mtr_queue_init(void)
{
    if (ring)
        return 0;
    void *p = mmap(NULL, RING_WORDS * 8, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    mtr_own_add(p, RING_WORDS * 8);
    ring = p;
    return 0;
}

void mtr_queue_reset(void)
{
    /* atomic: a writer thread of the recording before may still read
     * them on its way to sleep (mtr_queue_sleep) */
    __atomic_store_n(&prod.head, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&tail, 0, __ATOMIC_RELAXED);
    prod.tail_seen = 0;
    prod.next_id = 0;
    prod.last_time = 0;
    prod.lock_word = 0;
}

/* The wall clock, read before the lock so that the lock is held for less. */
static int64_t clock_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* An event's time, under the lock: t, or the queue's last time when t is
 * older (the wall clock stepped back, or another thread read it later but
 * took the lock first), so that times never decrease along the queue. */
static int64_t event_time(int64_t t)
{
    MT_ASSERT(mtr_lock_held(&prod.lock_word));   /* last_time is the lock's */
    if (t < prod.last_time)
        t = prod.last_time;
    prod.last_time = t;
    return t;
}

/* Reserve `words` contiguous words under the lock, waiting while the ring
 * is full (the consumer woken first). Returns the ring index, or -1. Lock
 * held on success; *half then says the ring is past half full with them
 * (the caller wakes the consumer once it has let the lock go). */
static int64_t reserve(uint64_t words, int (*alive)(void), int *half)
{
    MT_ASSERT(words >= 3 && words <= RING_WORDS / 2);
    for (int round = 0;; round++) {
        mtr_queue_lock();
        uint64_t t = prod.tail_seen;
        uint64_t at = prod.head % RING_WORDS;
        uint64_t pad = at + words > RING_WORDS ? RING_WORDS - at : 0;
        if (prod.head + pad + words - t > RING_WORDS)
            t = prod.tail_seen = __atomic_load_n(&tail, __ATOMIC_ACQUIRE);
        MT_ASSERT(t <= prod.head && prod.head - t <= RING_WORDS);   /* the consumer never passes the producers */
        MT_ASSERT(t <= __atomic_load_n(&tail, __ATOMIC_RELAXED));   /* a tail seen is never ahead */
        if (prod.head + pad + words - t <= RING_WORDS) {
            if (prod.head + pad + words - t > RING_WORDS / 2)
                t = prod.tail_seen = __atomic_load_n(&tail, __ATOMIC_ACQUIRE);
            *half = prod.head + pad + words - t > RING_WORDS / 2;
            if (pad) {
                ring[at] = PAD;
                __atomic_store_n(&prod.head, prod.head + pad, __ATOMIC_RELEASE);
            }
            return (int64_t)(prod.head % RING_WORDS);
        }
        mtr_queue_unlock();
        mtr_queue_wake(0);
        if (round >= WAIT_ROUNDS || !alive())
            return -1;
        struct timespec ts = { 0, WAIT_NS };
        nanosleep(&ts, NULL);
    }
}

int64_t mtr_queue_alloc(uint64_t size, uint64_t n_samples, const uintptr_t *frames,
                       size_t nframes, int (*alive)(void))
{
    return mtr_queue_alloc_from(size, n_samples, frames, nframes, MT_REC_SOURCE_MALLOC, alive);
}

int64_t mtr_queue_alloc_from(uint64_t size, uint64_t n_samples, const uintptr_t *frames,
                            size_t nframes, int source, int (*alive)(void))
{
    uint64_t words = 5 + nframes;
    MT_ASSERT(nframes < ((uint64_t)1 << 24) && source >= 0 && source <= 0xff);   /* header fields */
    int64_t now = clock_us();
    int half;
    int64_t at = reserve(words, alive, &half);
    if (at < 0)
        return -1;
    uint64_t *w = ring + at;
    uint64_t id = prod.next_id++;
    w[0] = MT_REC_ALLOC | (uint64_t)nframes << 8 | words << 32 | (uint64_t)(source & 0xff) << 56;
    w[1] = (uint64_t)event_time(now);
    w[2] = id;
    w[3] = size;
    w[4] = n_samples;
    memcpy(w + 5, frames, nframes * sizeof *frames);
    __atomic_store_n(&prod.head, prod.head + words, __ATOMIC_SEQ_CST);
    mtr_queue_unlock();
    if (half)
        mtr_queue_wake(0);
    return (int64_t)id;
}

int mtr_queue_collect(uint64_t id, int (*alive)(void))
{
    int64_t now = clock_us();
    int half;
    int64_t at = reserve(3, alive, &half);
    if (at < 0)
        return -1;
    uint64_t *w = ring + at;
    w[0] = MT_REC_COLLECT | (uint64_t)3 << 32;
    w[1] = (uint64_t)event_time(now);
    w[2] = id;
    __atomic_store_n(&prod.head, prod.head + 3, __ATOMIC_SEQ_CST);
    mtr_queue_unlock();
    if (half)
        mtr_queue_wake(0);
    return 0;
}

/* A producer has published its record (head, seq_cst) before it asks:
 * either its exchange finds `asked` clear and it bumps `word` and wakes,
 * or the consumer cleared `asked` after that exchange and so reads the new
 * head before it sleeps (mtr_queue_sleep). */
void mtr_queue_wake(int always)
{
    if (__atomic_exchange_n(&wake.asked, 1, __ATOMIC_SEQ_CST) && !always)
        return;
    __atomic_add_fetch(&wake.word, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &wake.word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void mtr_queue_sleep(int64_t ms, const int *stop)
{
    __atomic_store_n(&wake.asked, 0, __ATOMIC_SEQ_CST);
    int seen = __atomic_load_n(&wake.word, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(stop, __ATOMIC_SEQ_CST))
        return;   /* set before its wake's bump, which `seen` may hold */
    if (__atomic_load_n(&prod.head, __ATOMIC_SEQ_CST) - __atomic_load_n(&tail, __ATOMIC_RELAXED) >
        RING_WORDS / 2)
        return;   /* a producer may have asked before `asked` was cleared */
    struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 };
    syscall(SYS_futex, &wake.word, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
}

uint64_t mtr_queue_drained(void)
{
    return __atomic_load_n(&tail, __ATOMIC_RELAXED);
}

size_t mtr_queue_drain(void (*fn)(void *ctx, const struct mtr_rec *r), void *ctx)
{
    uint64_t h = __atomic_load_n(&prod.head, __ATOMIC_ACQUIRE);
    uint64_t t = tail;
    size_t count = 0;
    while (t < h) {
        uint64_t *w = ring + t % RING_WORDS;
        if ((w[0] & 0xff) == PAD) {
            t += RING_WORDS - t % RING_WORDS;
            continue;
        }
        struct mtr_rec r;
        uint64_t words = (w[0] >> 32) & 0xffffff;
        r.kind = (int)(w[0] & 0xff);
        MT_ASSERT(r.kind == MT_REC_ALLOC || r.kind == MT_REC_COLLECT);
        MT_ASSERT(words >= 3 && words <= h - t);   /* a record lies wholly before head */
        r.nframes = (size_t)((w[0] >> 8) & 0xffffff);
        r.source = (int)(w[0] >> 56);
        r.time = (int64_t)w[1];
        r.id = w[2];
        r.size = r.kind == MT_REC_ALLOC ? w[3] : 0;
        r.n_samples = r.kind == MT_REC_ALLOC ? w[4] : 0;
        r.frames = r.kind == MT_REC_ALLOC ? w + 5 : NULL;
        fn(ctx, &r);
        t += words;
        count++;
        __atomic_store_n(&tail, t, __ATOMIC_RELEASE);
    }
    return count;
}
