/*
 * tracer.c - the tracker that writes memtrace traces: how it starts and
 * stops, memtrace_trace_if_requested (MEMTRACE, MEMTRACE_RATE, ...: the
 * recorder's configuration, recconf.h), called by the library constructor
 * when preloaded; memtrace_start_tracing / memtrace_stop_tracing; exit,
 * exec and fork handling; the leak scan's turn. Its other parts: the
 * writer thread (tracer_write.c), the files, pieces and rotation
 * (tracer_file.c), the sampler's callbacks (tracer_sample.c), what they
 * share (tracer_state.h); what the rest of the recorder calls: tracer.h.
 * This comment describes the whole.
 *
 * Data path: the sampler's alloc/free callbacks (on the program's threads)
 * append records to the queue (queue.h); a background writer thread drains
 * the queue into the trace writer (mt_writer, which owns the file) and
 * flushes every MEMTRACE_FLUSH_MS (default 500) so a killed process leaves
 * a readable trace. Raw frames (modules.h) are made when the writer flushes
 * a packet, in the writer thread: never in an allocation path.
 *
 * Files: the first process writes FILE, made absolute at start so that
 * every trace of the tree lands beside it whatever directory a process
 * runs in; every other process of the tree (forked children, exec'd
 * programs, the first process after it exec'd) writes FILE.<pid>, or
 * FILE.<pid>.<k> if that name exists, created at its first sampled
 * allocation (a process that samples nothing leaves no file). A child never
 * touches its parent's file. MEMTRACE_FOLLOW=0 traces the first process only.
 *
 * End of the recording: every flush raises the trace's end time to now,
 * and an idle trace has its time-only packet rewritten in place; exit,
 * _exit and exec write a last packet marked as the end (mt_writer_flush_until).
 *
 * On/off control (control.c: MEMTRACE_PAUSED, MEMTRACE_SIGNAL,
 * MEMTRACE_DURATION) starts and stops recordings with the same start and
 * stop; a sampled block's token names the recording it belongs to, so a
 * later recording never counts the free of an earlier one's block.
 *
 * Safety: MEMTRACE* is read with secure_getenv (a set-user-ID or otherwise
 * privileged process ignores it); FILE is opened without following a
 * symbolic link, must be a regular file of ours (or a character device),
 * and is created with mode 0600.
 *
 * Rotation (MEMTRACE_ROTATE_SIZE, MEMTRACE_ROTATE_TIME, MEMTRACE_KEEP): the
 * trace a process would write, TRACE, comes in pieces TRACE.partNNNN; the
 * writer thread ends a piece at its bound and starts the next with the
 * sampled blocks still live, carried over (carry.h keeps them, with the
 * ids they have in the piece), then deletes the piece KEEP back. Nothing
 * of it runs in an allocation.
 *
 * Resident memory: the writer thread samples the process's RSS every
 * MEMTRACE_RSS_MS (default 100; 0: never) into FILE.rss beside the trace
 * (rss.h).
 *
 * Fatal signals (fatal.c): a process dying of SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL or SIGABRT (left at their default) has the writer thread write out
 * what was queued first (mtr_tracer_fatal_flush), then dies of the signal
 * as it would have; its trace is not marked as ended.
 *
 * Failure (unwritable file, disk full): one message on the original stderr
 * (if it is still the same file), tracing stops, the program goes on.
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
#include <sys/syscall.h>

#include "memtrace/record.h"
#include "carry.h"
#include "control.h"
#include "fatal.h"
#include "leaks.h"
#include "ownheap.h"
#include "sampler.h"
#include "queue.h"
#include "real.h"
#include "recconf.h"
#include "rss.h"
#include "tracer_state.h"
#include "units.h"
#include "control_proto.h"
#include "unwind.h"

#define API __attribute__((visibility("default")))
#define DEFAULT_DEPTH MT_RECCONF_DEPTH_DEFAULT
#define DEFAULT_FLUSH_MS 500
#define DEFAULT_RSS_MS 100

struct mtr_tracer mtr_tr = { .fd = -1, .tail_off = -1, .wlock = PTHREAD_MUTEX_INITIALIZER };

static dev_t err_dev;
static ino_t err_ino;
static int err_known;

/* ---------------------------------------------------------------------- */
/* Messages                                                                */

static void remember_stderr(void)
{
    struct stat st;
    if (fstat(2, &st) == 0) {
        err_dev = st.st_dev;
        err_ino = st.st_ino;
        err_known = 1;
    }
}

/* One line on stderr, but only if fd 2 is still what it was at start-up:
 * a program that closed stderr may have reused fd 2 for its own file. */
void mtr_tr_message(const char *fmt, ...)
{
    char buf[1024];
    struct stat st;
    va_list ap;
    int n = snprintf(buf, sizeof buf, "memtrace: ");
    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof buf - 1)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    if (!err_known || fstat(2, &st) != 0 || st.st_dev != err_dev || st.st_ino != err_ino)
        return;
    ssize_t r = write(2, buf, (size_t)n);
    (void)r;
}

static int lock_writer(void);

/* The verdicts of the blocks live now (not for a rotated recording: its
 * ids are the pieces'): at exit with MEMTRACE_LEAKS, and on request
 * ('memtrace ctl PID scan', from the control thread). 0 if written. */
static int scan_for_leaks(int flush)
{
    if (mtr_tr_rotating())
        return -1;
    int rc = -1;
    mtr_enter();
    /* The writer may be symbolizing on a loaded machine: up to 10 s. */
    int locked = -1;
    for (int i = 0; i < 5 && locked != 0; i++)
        locked = lock_writer();
    if (locked != 0)
        mtr_leaks_no_verdicts("the trace writer stayed busy for 10 s");
    if (locked == 0) {
        if (mtr_tr.state == ACTIVE && mtr_tr.w && !mtr_tr.writer_failed && mtr_tr.pid == getpid()) {
            rc = mtr_leaks_scan(mtr_tr.path, mtr_tr.pid, mtr_tr.start_us, mtr_tr.epoch);
            if (flush)   /* the judged blocks in the trace now, for whoever reads it */
                mtr_tr_pump(1);
        } else {
            mtr_leaks_no_verdicts("the recording %s", mtr_tr.writer_failed ? "could not be written"
                                                                       : "is not under way");
        }
        pthread_mutex_unlock(&mtr_tr.wlock);
    }
    mtr_leave();
    return rc;
}

int mtr_tracer_scan_now(void)
{
    if (mtr_tr_rotating()) {
        mtr_leaks_no_verdicts("not for a rotated recording (its ids are the pieces')");
        return -1;
    }
    return scan_for_leaks(1);
}

static void at_exit_handler(void)
{
    __atomic_store_n(&mtr_exiting, 1, __ATOMIC_RELEASE);
    if (__atomic_load_n(&mtr_tr.state, __ATOMIC_ACQUIRE) == ACTIVE && mtr_tr.pid == getpid()) {
        if (mtr_tr.leaks)
            scan_for_leaks(0);
        memtrace_stop_tracing();
    }
}

/* Starts recording into filename as c says (its file is not used: a
 * recording on request writes FILE-NNNN). */
static int start(const char *filename, const mt_recconf *c, const char *context, int first)
{
    if (!err_known)
        remember_stderr();   /* so that the messages below are seen */
    if (!filename || !*filename) {
        mtr_tr_message("no trace file name given");
        return -1;
    }
    double rate = c->rate;
    if (rate <= 0)
        rate = MEMTRACE_DEFAULT_RATE;
    if (!mt_recconf_rate_ok(rate)) {
        mtr_tr_message("sampling rate %g out of range (0, 1]", rate);
        return -1;
    }
    mtr_enter();
    pthread_mutex_lock(&mtr_tr.wlock);
    int rc = -1;
    if (mtr_tr.state != IDLE) {
        mtr_tr_message("tracing already active");
        goto out;
    }
    /* Resolved once: processes that change directory still write beside it. */
    char cwd[PATH_MAX];
    int rel = filename[0] != '/' && getcwd(cwd, sizeof cwd) != NULL;
    if ((rel ? strlen(cwd) + 1 : 0) + strlen(filename) >= sizeof mtr_tr.base) {
        mtr_tr_message("trace file name too long");
        goto out;
    }
    if (mtr_queue_init() != 0) {
        mtr_tr_message("cannot allocate the event queue");
        goto out;
    }
    remember_stderr();
    if (rel)
        snprintf(mtr_tr.base, sizeof mtr_tr.base, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", filename);
    else
        snprintf(mtr_tr.base, sizeof mtr_tr.base, "%s", filename);
    mtr_tr.start_us = mtr_tr_wall_us();
    mtr_tr.rate = rate;
    mtr_tr.leaks = c->leaks;
    mtr_heap_free(mtr_tr.context);
    mtr_tr.context = context ? mtr_heap_strdup(context) : NULL;
    if (c->depth)
        mtr_tr.depth = (size_t)c->depth;
    if (!mtr_tr.depth)
        mtr_tr.depth = DEFAULT_DEPTH;
    if (c->unwind)
        mtr_unwind_choose(c->unwind);
    if (!mtr_tr.flush_ms)
        mtr_tr.flush_ms = DEFAULT_FLUSH_MS;
    if (!mtr_tr.rss_ms)
        mtr_tr.rss_ms = DEFAULT_RSS_MS;
    if (first) {
        int orc = mtr_tr_open_trace(1);
        if (orc != 0) {
            rc = orc;
            goto out;
        }
    } else {
        /* The file is created at the first sampled allocation, if any. */
        mtr_tr.pid = getpid();
        __atomic_store_n(&mtr_tr.state, CHILD_PENDING, __ATOMIC_RELEASE);
    }
    if (first && !mtr_tr.attached && !mtr_malloc_is_ours())
        mtr_tr_message("malloc is not the recorder's (another allocator comes before libmemtrace.so "
                "in LD_PRELOAD?): no malloc block will be sampled; put libmemtrace.so first");
    mt_tracker tk = { mtr_tr_on_alloc, mtr_tr_on_free, NULL };
    if (mt_memprof_start(rate, mtr_tr.depth, &tk) != 0) {
        mtr_tr_message("cannot start sampling");
        __atomic_store_n(&mtr_tr.state, IDLE, __ATOMIC_RELEASE);
        if (mtr_tr.w) {
            mt_writer_close(mtr_tr.w);
            mtr_tr.w = NULL;
            close(mtr_tr.fd);
            mtr_tr.fd = -1;
        }
        goto out;
    }
    if (!mtr_tr.atexit_done) {
        mtr_tr.atexit_done = 1;
        atexit(at_exit_handler);
    }
    mtr_fatal_install();
    rc = 0;
out:
    pthread_mutex_unlock(&mtr_tr.wlock);
    mtr_leave();
    return rc;
}

/* MEMTRACE_LEAKS, MEMTRACE_DEPTH, MEMTRACE_RATE into c (recconf.h): 0, or
 * -1 after saying which value is not what it should be. */
static int env_conf(mt_recconf *c)
{
    static const enum mt_recconf_key keys[] = { MT_RC_RATE, MT_RC_DEPTH, MT_RC_LEAKS };
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const char *v = secure_getenv(mt_recconf_env(keys[i]));
        if (v && *v && mt_recconf_set(c, keys[i], v) != 0) {
            mtr_tr_message("%s=%s: expected %s", mt_recconf_env(keys[i]), v,
                    mt_recconf_expected(keys[i]));
            return -1;
        }
    }
    return 0;
}

API int memtrace_start_tracing(const char *filename, double rate, const char *context)
{
    if (!mtr_tr.follow)
        mtr_tr.follow = 1;
    mt_recconf c = { .rate = rate };
    const char *v = secure_getenv(mt_recconf_env(MT_RC_LEAKS));
    if (v && *v)
        mt_recconf_set(&c, MT_RC_LEAKS, v);
    return start(filename, &c, context, 1);
}

/* Lock wlock, giving up after about 2 s (a writer stuck on a full pipe). */
static int lock_writer(void)
{
    for (int i = 0; i < 2000; i++) {
        if (pthread_mutex_trylock(&mtr_tr.wlock) == 0)
            return 0;
        struct timespec ts = { 0, 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    return -1;
}

API int memtrace_stop_tracing(void)
{
    int st = __atomic_load_n(&mtr_tr.state, __ATOMIC_ACQUIRE);
    if (st == CHILD_PENDING && mtr_tr.pid == getpid()) {
        /* Nothing sampled, no file: just stop sampling. */
        mtr_enter();
        mt_memprof_stop();
        pthread_mutex_lock(&mtr_tr.wlock);
        if (mtr_tr.state == CHILD_PENDING)
            __atomic_store_n(&mtr_tr.state, IDLE, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&mtr_tr.wlock);
        mtr_leave();
        return 0;
    }
    if (st != ACTIVE || mtr_tr.pid != getpid())
        return -1;
    mtr_enter();
    mt_memprof_stop();
    int rc = -1;
    if (lock_writer() == 0) {
        if (mtr_tr.state == ACTIVE) {
            __atomic_store_n(&mtr_tr.state, CLOSING, __ATOMIC_RELEASE);
            mtr_queue_drain(mtr_tr_put_record, NULL);
            mtr_tr_write_until(1);   /* the recording ends now */
            rc = mtr_tr.writer_failed ? -1 : 0;
            if (mtr_tr.w && mt_writer_close(mtr_tr.w) != 0 && !mtr_tr.writer_failed) {
                mtr_tr_message("%s: %s", mtr_tr.path, strerror(errno));
                rc = -1;
            }
            mtr_tr.w = NULL;
            if (mtr_tr.fd >= 0)
                close(mtr_tr.fd);
            mtr_tr.fd = -1;
            mtr_carry_reset();
            __atomic_store_n(&mtr_tr.state, IDLE, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&mtr_tr.wlock);
    }
    mtr_leave();
    return rc;
}

/* A MEMTRACE* variable as a whole number in [lo, hi]: 0 if unset (*out
 * untouched), 1 if good, -1 after saying what was expected (tracing then
 * does not start, as for a bad MEMTRACE_RATE). */
static int env_long(const char *name, long lo, long hi, const char *what, long *out)
{
    const char *s = secure_getenv(name);
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi) {
        mtr_tr_message("%s=%s: expected %s", name, s, what);
        return -1;
    }
    *out = v;
    return 1;
}

/* A MEMTRACE_*_MS variable: a time (lib/common/units.h; a bare number is
 * milliseconds) from lo ms to 1h, rounded to whole milliseconds;
 * returns as env_long does. */
static int env_ms(const char *name, long lo, const char *what, long *out)
{
    const char *s = secure_getenv(name);
    if (!s || !*s)
        return 0;
    uint64_t us;
    if (mt_units_duration(s, MT_US_PER_MS, &us) != MT_UNITS_OK || us > 3600 * MT_US_PER_S ||
        (long)((us + 500) / 1000) < lo) {
        mtr_tr_message("%s=%s: expected %s", name, s, what);
        return -1;
    }
    *out = (long)((us + 500) / 1000);
    return 1;
}

/* MEMTRACE_ROTATE_SIZE, MEMTRACE_ROTATE_TIME, MEMTRACE_KEEP: 0, or -1
 * after saying what was expected. */
static int rotation_env(void)
{
    const char *sz = secure_getenv("MEMTRACE_ROTATE_SIZE");
    const char *tm = secure_getenv("MEMTRACE_ROTATE_TIME");
    long long size = 0, ms = 0;
    long keep = 0;
    if (sz && *sz && (size = mt_ctl_size_at_least(sz, MT_ROTATE_MIN_SIZE)) < 0) {
        mtr_tr_message("MEMTRACE_ROTATE_SIZE=%s: expected a size from 64k to 1e18 bytes, such as 100m "
                "or 1g", sz);
        return -1;
    }
    if (tm && *tm && (ms = mt_ctl_time_ms_at_least(tm, MT_ROTATE_MIN_MS)) < 0) {
        mtr_tr_message("MEMTRACE_ROTATE_TIME=%s: expected a time of at least 1s, such as 10m, 1h or "
                "1d", tm);
        return -1;
    }
    int k = env_long("MEMTRACE_KEEP", 1, 1000000, "a number of pieces to keep in [1, 1000000]",
                     &keep);
    if (k < 0)
        return -1;
    if (k > 0 && !size && !ms) {
        mtr_tr_message("MEMTRACE_KEEP=%ld: needs MEMTRACE_ROTATE_SIZE or MEMTRACE_ROTATE_TIME", keep);
        return -1;
    }
    mtr_tr.rot_size = size > 0 ? size : 0;
    mtr_tr.rot_ms = ms > 0 ? ms : 0;
    mtr_tr.keep = (unsigned)keep;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* What control.c uses (docs/recorder.md, "Tracing on demand")             */

int mtr_tracer_begin(const mt_recconf *c, const char *file, int first, int exclusive)
{
    if (__atomic_load_n(&mtr_exiting, __ATOMIC_ACQUIRE))
        return -1;
    mtr_tr.excl_next = exclusive;
    int rc = start(file, c, NULL, first);
    mtr_tr.excl_next = 0;
    return rc;
}

int mtr_tracer_active(void)
{
    return __atomic_load_n(&mtr_tr.state, __ATOMIC_ACQUIRE) != IDLE && mtr_tr.pid == getpid();
}

void mtr_tracer_message(const char *fmt, ...)
{
    char buf[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    mtr_tr_message("%s", buf);
}

/* MEMTRACE_PAUSED, MEMTRACE_SIGNAL or MEMTRACE_DURATION given: control.c
 * starts and stops the recordings. Processes started later find FILE
 * absolute in MEMTRACE (or nothing, without MEMTRACE_FOLLOW). */
static int controlled_start(int first)
{
    mtr_enter();
    if (!mtr_tr.follow)
        setenv("MEMTRACE", "", 1);
    else if (first)
        setenv("MEMTRACE", mtr_control_base(), 1);
    mtr_leave();
    if (!mtr_tr.atexit_done) {
        mtr_tr.atexit_done = 1;
        atexit(at_exit_handler);
    }
    return mtr_control_run() == 0 ? 1 : -1;
}

/* MEMTRACE* is read with secure_getenv: in a privileged process (set-user-ID,
 * set-group-ID, file capabilities: AT_SECURE) the variables are not there,
 * so whoever starts such a program cannot make it write a trace (or choose
 * where). */
API int memtrace_trace_if_requested(void)
{
    const char *file = secure_getenv("MEMTRACE");
    if (!file || !*file)
        return 0;
    /* Linked-in programs get here twice: from our constructor and from
     * their own call. */
    if (__atomic_load_n(&mtr_tr.state, __ATOMIC_ACQUIRE) != IDLE && mtr_tr.pid == getpid())
        return 1;
    if (!err_known)
        remember_stderr();   /* so that a bad MEMTRACE_RATE is reported */
    mt_recconf conf = { .rate = MEMTRACE_DEFAULT_RATE, .depth = DEFAULT_DEPTH };
    if (env_conf(&conf) < 0)
        return -1;
    long flush_ms = DEFAULT_FLUSH_MS, follow = 1, rss_ms = DEFAULT_RSS_MS;
    if (env_ms("MEMTRACE_FLUSH_MS", 1, "a time between writes from 1ms to 1h", &flush_ms) < 0 ||
        env_long("MEMTRACE_FOLLOW", 0, 1,
                 "1 (trace the processes it starts) or 0 (this one only)", &follow) < 0 ||
        env_ms("MEMTRACE_RSS_MS", 0,
               "a time between resident-memory samples from 1ms to 1h, or 0 (none)",
               &rss_ms) < 0)
        return -1;
    if (rotation_env() < 0)
        return -1;
    mtr_tr.rss_ms = rss_ms ? (int)rss_ms : -1;   /* -1: no FILE.rss */
    mtr_tr.depth = (size_t)conf.depth;
    mtr_tr.flush_ms = (int)flush_ms;
    mtr_tr.follow = (int)follow;
    int first = secure_getenv("MEMTRACE_ROOT") == NULL;
    char pid[32];
    mtr_enter();
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    if (first)
        setenv("MEMTRACE_ROOT", pid, 1);
    char *copy = mtr_heap_strdup(file);
    mtr_leave();
    if (!copy)
        return -1;
    conf.file = copy;
    int ctl = mtr_control_setup(&conf, first);
    if (ctl != 0) {
        mtr_heap_free(copy);
        return ctl < 0 ? -1 : ctl == 2 ? 1 : controlled_start(first);
    }
    if (!mtr_tr.follow) {
        mtr_enter();
        setenv("MEMTRACE", "", 1);   /* exec'd programs don't trace */
        mtr_leave();
    }
    int rel = copy[0] != '/';   /* (file may be gone after setenv) */
    int rc = start(copy, &conf, NULL, first);
    mtr_heap_free(copy);
    if (rc == 0 && first && mtr_tr.follow && rel) {
        /* Programs started from elsewhere write beside FILE too. */
        mtr_enter();
        setenv("MEMTRACE", mtr_tr.base, 1);
        mtr_leave();
    }
    return rc == 0 ? 1 : -1;
}

/* ---------------------------------------------------------------------- */
/* fork and process life                                                   */

static int fork_locked;

static void fork_prepare(void)
{
    mtr_enter();
    fork_locked = pthread_mutex_lock(&mtr_tr.wlock) == 0;
    mtr_queue_lock();
    mtr_sampler_fork_prepare();
    mtr_heap_fork_prepare();
}

static void fork_parent(void)
{
    mtr_heap_fork_parent();
    mtr_sampler_fork_parent();
    mtr_queue_unlock();
    if (fork_locked)
        pthread_mutex_unlock(&mtr_tr.wlock);
    mtr_leave();
}

static void fork_child(void)
{
    mtr_heap_fork_child();
    mtr_sampler_fork_child();
    mtr_leaks_fork_child();
    mtr_queue_reset();
    pthread_mutex_init(&mtr_tr.wlock, NULL);
    mtr_tr.thread_alive = 0;
    if (mtr_tr.state == ACTIVE || mtr_tr.state == CHILD_PENDING) {
        /* The parent's writer, file and module table stay the parent's. */
        mtr_rss_forget();
        if (mtr_tr.fd >= 0)
            close(mtr_tr.fd);
        mtr_tr.fd = -1;
        mtr_tr.w = NULL;
        mtr_tr.modules = NULL;
        if (mtr_tr.follow) {
            mtr_tr.start_us = mtr_tr_wall_us();
            mtr_tr.pid = getpid();
            mtr_tr.state = CHILD_PENDING;
        } else {
            mtr_tr.state = IDLE;
            mt_memprof_stop();
        }
    }
    mtr_control_fork_child(mtr_tr.follow);
    mtr_leave();
}

int mtr_ready;

static void flush_now(int end)
{
    if (__atomic_load_n(&mtr_tr.state, __ATOMIC_ACQUIRE) != ACTIVE || mtr_tr.pid != getpid())
        return;
    int saved = errno;
    mtr_enter();
    if (lock_writer() == 0) {
        if (mtr_tr.state == ACTIVE) {
            mtr_queue_drain(mtr_tr_put_record, NULL);
            if (end || mtr_tr.dirty)
                mtr_tr_write_until(end);
        }
        pthread_mutex_unlock(&mtr_tr.wlock);
    }
    mtr_leave();
    errno = saved;
}

/* exec.c: write out what is queued (dlclose: while the library's code is
 * still mapped, for symbolization). */
void mtr_tracer_flush_before_exec(void)
{
    flush_now(0);
}

/* exec.c: the image is about to be replaced: this recording ends here (if
 * exec fails, it simply goes on). */
void mtr_tracer_end_before_exec(void)
{
    flush_now(1);
}

/* _exit and _Exit skip atexit handlers; finish the trace first, so short-
 * lived children that end with _exit (Python's multiprocessing workers,
 * forked helpers) keep their events. A vfork child (other pid) does not
 * touch its parent's trace. */
static void exit_now(int status) __attribute__((noreturn));
static void exit_now(int status)
{
    if (__atomic_load_n(&mtr_tr.state, __ATOMIC_ACQUIRE) == ACTIVE && mtr_tr.pid == getpid())
        memtrace_stop_tracing();
    for (;;)
        syscall(SYS_exit_group, status);
}

API void _exit(int status)
{
    exit_now(status);
}

API void _Exit(int status)
{
    exit_now(status);
}

__attribute__((constructor)) static void memtrace_init(void)
{
    mtr_real_resolve();   /* the program's allocator, before anything else allocates */
    mtr_interpose_init();
    __atomic_store_n(&mtr_ready, 1, __ATOMIC_RELEASE);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    mtr_tr_read_cmdline(mtr_tr_exec_cmdline, sizeof mtr_tr_exec_cmdline);
    memtrace_trace_if_requested();
}

__attribute__((destructor)) static void memtrace_fini(void)
{
    at_exit_handler();
}
