/*
 * tracer_write.c - the tracer's writer thread (tracer_state.h): queued
 * records into the trace writer, flushes every MEMTRACE_FLUSH_MS, the
 * trace's end time kept current, a piece's bound noticed, and the write
 * out of what is queued when the process dies of a fatal signal. Nothing
 * here runs in an allocation.
 *
 * The thread's pace: it sleeps 10 ms (PACE_MIN_MS) while the queue fills
 * fast and twice as long after each turn that found it nearly empty, up
 * to PACE_MAX_MS, never past the next flush, resident-memory reading or
 * piece's time bound (it wakes at most 10 ms late for those, as it always
 * did); a fatal signal's flush, or a producer that finds the queue past half
 * full, wakes it at once (queue.c's futex). An idle process
 * (a make, a compiler driver waiting for its child) then pays ten wakeups
 * a second, not a hundred.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "carry.h"
#include "fdsink.h"
#include "leaks.h"
#include "rss.h"
#include "sampler.h"
#include "thread_start.h"
#include "tracer_state.h"

/* mt_write_fn: write(2), after checking that our descriptor still refers
 * to the trace (a program may close all descriptors and reuse ours). */
int mtr_tr_write_trace(void *ctx, const void *buf, size_t len)
{
    (void)ctx;
    struct stat st;
    if (fstat(mtr_tr.fd, &st) != 0 || st.st_dev != mtr_tr.fd_dev || st.st_ino != mtr_tr.fd_ino) {
        errno = EBADF;
        return -1;
    }
    /* Past RLIMIT_FSIZE, write raises SIGXFSZ, which kills by default:
     * block it around our writes (write then fails with EFBIG) and discard
     * the signal if it was raised. */
    sigset_t xfsz, old;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, &old);
    size_t written = 0;
    int rc = mt_write_full(mtr_tr.fd, buf, len, &written);
    mtr_tr.off += (int64_t)written;
    if (rc != 0 && errno == EFBIG && !sigismember(&old, SIGXFSZ)) {
        int saved = errno;
        struct timespec zero = { 0, 0 };
        sigtimedwait(&xfsz, NULL, &zero);
        errno = saved;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* The writer failed: say so once, stop sampling, let the program go on.
 * Called with wlock held. */
void mtr_tr_writer_failed(void)
{
    if (mtr_tr.writer_failed)
        return;
    mtr_tr.writer_failed = 1;
    mtr_tr_message("%s: %s; tracing stopped, the trace is cut short", mtr_tr.path,
            mtr_tr.w ? mt_writer_error(mtr_tr.w) : strerror(errno));
    mt_memprof_stop();
    mtr_tr.state = IDLE;
}

void mtr_tr_put_record(void *ctx, const struct mtr_rec *r)
{
    (void)ctx;
    if (!mtr_tr.w || mtr_tr.writer_failed)
        return;
    int rc;
    if (r->kind == MT_REC_ALLOC) {
        size_t n = r->nframes;
        mtr_modules_codes(mtr_tr.modules, r->frames, n, mtr_tr.bt);   /* caller first */
        mt_obj_id id;
        rc = mt_writer_put_alloc(mtr_tr.w, r->time, r->size, r->n_samples, mtr_tr_source(r->source),
                                 mtr_tr.bt, n, &id);
        if (rc == 0 && mtr_tr_rotating()) {
            /* Ids restart in each piece: the table maps them. */
            if (mtr_carry_add(r->id, id, r->size, r->n_samples, r->source, mtr_tr.bt, n) != 0) {
                errno = ENOMEM;
                rc = -1;
            }
        } else if (rc == 0 && id != r->id) {
            mtr_tr_message("%s: allocation ids out of step (%llu, %llu); tracing stopped", mtr_tr.path,
                    (unsigned long long)id, (unsigned long long)r->id);
            mtr_tr.writer_failed = 1;
            mt_memprof_stop();
            mtr_tr.state = IDLE;
            return;
        }
    } else {
        uint64_t id = r->id;
        if (mtr_tr_rotating() && !mtr_carry_take(r->id, &id))
            return;   /* (an allocation that could not be queued) */
        rc = mt_writer_put_collect(mtr_tr.w, r->time, id);
    }
    if (rc != 0)
        mtr_tr_writer_failed();
    mtr_tr.dirty = 1;
    /* A piece that reached its size goes at once, not at the end of a
     * long drain. */
    if (mtr_tr.rot_size && mtr_tr.off - mtr_tr.piece_off0 >= mtr_tr.rot_size && mtr_tr.w && !mtr_tr.writer_failed)
        mtr_tr_rotate();
}

/* Write out the current packet with the trace's end time raised to now
 * (end: marked as the end of the recording). With no event since the last
 * time, the packet holds only that time: the previous such packet is
 * rewritten in place instead, so that an idle process's trace does not
 * grow. wlock held. */
void mtr_tr_write_until(int end)
{
    if (!mtr_tr.w || mtr_tr.writer_failed)
        return;
    int64_t at = -1;
    if (!mtr_tr.dirty) {
        if (mtr_tr.tail_off >= 0 && lseek(mtr_tr.fd, mtr_tr.tail_off, SEEK_SET) == mtr_tr.tail_off)
            mtr_tr.off = mtr_tr.tail_off;
        at = mtr_tr.off;
    }
    if (end)
        mtr_rss_close(mtr_tr_wall_us());
    if (mt_writer_flush_until(mtr_tr.w, mtr_tr_wall_us(), end) != 0) {
        mtr_tr_writer_failed();
        return;
    }
    mtr_tr.tail_off = at;
    mtr_tr.dirty = 0;
    mtr_tr.last_flush_ms = mtr_tr_mono_ms();
}

/* Drain the queue and flush if due (or if force); start the next piece
 * when this one has reached its bound. wlock held. */
void mtr_tr_pump(int force)
{
    mtr_queue_drain(mtr_tr_put_record, NULL);
    if (force || mtr_tr_mono_ms() - mtr_tr.last_flush_ms >= mtr_tr.flush_ms)
        mtr_tr_write_until(0);
    if (mtr_tr_rotating() && mtr_tr.w && !mtr_tr.writer_failed &&
        ((mtr_tr.rot_size && mtr_tr.off - mtr_tr.piece_off0 >= mtr_tr.rot_size) ||
         (mtr_tr.rot_ms && mtr_tr_mono_ms() - mtr_tr.piece_ms >= mtr_tr.rot_ms)))
        mtr_tr_rotate();
}

/* A fatal signal (fatal.c): its handler asks the writer thread to write
 * out what is queued (fatal_req), wakes it (mtr_queue_wake) and waits
 * for it (fatal_done). */
static int fatal_req, fatal_done;

#define PACE_MIN_MS 10
#define PACE_MAX_MS 100
/* Of the queue's ring (MTR_QUEUE_WORDS), a turn that drained at most 1/64 of it
 * doubles the pace (the next turn finds 1/32 at the same rate), one that
 * drained more than 1/16 goes back to PACE_MIN_MS. A burst that fills
 * half the ring within one sleep wakes the thread at once (queue.c), so
 * producers do not wait for the pace. */
#define FEW_WORDS (MTR_QUEUE_WORDS / 64)
#define MANY_WORDS (MTR_QUEUE_WORDS / 16)

/* The next sleep: the pace, cut to the next deadline (not below
 * PACE_MIN_MS). wlock held. */
static int64_t next_sleep_ms(int64_t pace)
{
    int64_t now = mtr_tr_mono_ms(), s = pace;
    int64_t f = mtr_tr.last_flush_ms + mtr_tr.flush_ms - now;
    if (f < s)
        s = f;
    int64_t r = mtr_rss_due_us(mtr_tr_wall_us());
    if (r < s * 1000)
        s = (r + 999) / 1000;
    if (mtr_tr.rot_ms && mtr_tr.piece_ms + mtr_tr.rot_ms - now < s)
        s = mtr_tr.piece_ms + mtr_tr.rot_ms - now;
    return s < PACE_MIN_MS ? PACE_MIN_MS : s;
}

/* Sleep ms, or less if a fatal signal's flush or a filling queue wakes
 * the thread. */
static void writer_sleep(int64_t ms)
{
    mtr_queue_sleep(ms, &fatal_req);
}

static void *writer_thread(void *arg)
{
    unsigned mine = (unsigned)(uintptr_t)arg;
    mtr_enter();   /* for good: nothing this thread allocates is sampled */
    mtr_leaks_own_thread();
    int64_t pace = PACE_MIN_MS, sleep_ms = PACE_MIN_MS;
    for (;;) {
        writer_sleep(sleep_ms);
        pthread_mutex_lock(&mtr_tr.wlock);
        if (mtr_tr.writer_epoch != mine) {
            /* A later recording has a writer of its own. */
            pthread_mutex_unlock(&mtr_tr.wlock);
            return NULL;
        }
        if (mtr_tr.state != ACTIVE || mtr_tr.pid != getpid()) {
            __atomic_store_n(&mtr_tr.thread_alive, 0, __ATOMIC_RELEASE);
            pthread_mutex_unlock(&mtr_tr.wlock);
            return NULL;
        }
        if (!mtr_tr.modules)
            mtr_tr.modules = mtr_modules_new();
        if (__atomic_load_n(&fatal_req, __ATOMIC_ACQUIRE)) {
            /* The process is dying: everything queued, now; no rotation. */
            mtr_queue_drain(mtr_tr_put_record, NULL);
            mtr_tr_write_until(0);
            mtr_rss_tick(mtr_tr_wall_us(), 1);
            __atomic_store_n(&fatal_done, 1, __ATOMIC_RELEASE);
            __atomic_store_n(&mtr_tr.thread_alive, 0, __ATOMIC_RELEASE);
            pthread_mutex_unlock(&mtr_tr.wlock);
            return NULL;
        }
        uint64_t before = mtr_queue_drained();
        mtr_tr_pump(0);
        uint64_t after = mtr_queue_drained();
        uint64_t drained_words = after >= before ? after - before : after;   /* a reset between */
        mtr_rss_tick(mtr_tr_wall_us(), 0);
        if (__atomic_load_n(&mtr_tr.attached, __ATOMIC_RELAXED) || drained_words > MANY_WORDS)
            pace = PACE_MIN_MS;   /* attach.c's tick: new modules within about 10 ms */
        else if (drained_words <= FEW_WORDS && pace < PACE_MAX_MS)
            pace = pace * 2 < PACE_MAX_MS ? pace * 2 : PACE_MAX_MS;
        sleep_ms = next_sleep_ms(pace);
        pthread_mutex_unlock(&mtr_tr.wlock);
        mtr_attach_tick();   /* attach.c: modules loaded since */
    }
}

int mtr_tr_start_thread(void)
{
    __atomic_store_n(&mtr_tr.thread_alive, 1, __ATOMIC_RELEASE);
    mtr_tr.writer_epoch++;
    /* detached; the thread takes no signals; the leak scan counts it as
     * the recorder's own */
    mtr_leaks_own_thread_coming(1);
    int rc = mt_thread_start(NULL, writer_thread, (void *)(uintptr_t)mtr_tr.writer_epoch);
    if (rc != 0)
        mtr_leaks_own_thread_coming(-1);
    if (rc != 0)
        __atomic_store_n(&mtr_tr.thread_alive, 0, __ATOMIC_RELEASE);
    return rc == 0 ? 0 : -1;
}

/* fatal.c, in a fatal signal's handler on a program thread (not in the
 * recorder's code): the writer thread writes out what is queued; wait for
 * it at most timeout_ms. Async-signal-safe: atomics, a futex wake and
 * nanosleep only, no lock taken here. 1 if the flush was done. */
int mtr_tracer_fatal_flush(int timeout_ms)
{
    if (__atomic_load_n(&mtr_tr.state, __ATOMIC_ACQUIRE) != ACTIVE || mtr_tr.pid != getpid() ||
        !__atomic_load_n(&mtr_tr.thread_alive, __ATOMIC_ACQUIRE))
        return 0;
    __atomic_store_n(&fatal_req, 1, __ATOMIC_SEQ_CST);
    mtr_queue_wake(1);
    struct timespec ts = { 0, 1000 * 1000 };
    for (int i = 0; i < timeout_ms; i++) {
        if (__atomic_load_n(&fatal_done, __ATOMIC_ACQUIRE))
            return 1;
        if (!__atomic_load_n(&mtr_tr.thread_alive, __ATOMIC_ACQUIRE))
            return 0;
        nanosleep(&ts, NULL);
    }
    return 0;
}
