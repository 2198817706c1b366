/*
 * tracer.c - the tracker that writes memtrace traces, and how it starts:
 * memtrace_trace_if_requested (MEMTRACE, MEMTRACE_RATE, ...), called by
 * the library constructor when preloaded; memtrace_start_tracing /
 * memtrace_stop_tracing; exit and fork handling.
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
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "memtrace/record.h"
#include "memtrace/trace.h"
#include "carry.h"
#include "control.h"
#include "control_proto.h"
#include "fdsink.h"
#include "leaks.h"
#include "runfiles.h"
#include "thread_start.h"
#include "sampler.h"
#include "highfd.h"
#include "queue.h"
#include "real.h"
#include "recconf.h"
#include "rss.h"
#include "modules.h"
#include "unwind.h"

#define API __attribute__((visibility("default")))
#define DEFAULT_DEPTH MT_RECCONF_DEPTH_DEFAULT
#define MAX_FRAMES MT_RECCONF_DEPTH_MAX
#define DEFAULT_FLUSH_MS 500
#define DEFAULT_RSS_MS 100
#define TRACE_MODE 0600

/* The frame that ends (outermost) a stack cut at the depth limit: a code no
 * return address can have, resolved to the location "[truncated]". */
#define TRUNCATED_CODE ((uintptr_t)MT_CODE_TRUNCATED)

enum { IDLE, ACTIVE, CHILD_PENDING, CLOSING };

static struct {
    int state;
    pid_t pid;                  /* process the open trace belongs to */
    char base[PATH_MAX - 64];   /* FILE as the user gave it */
    char path[PATH_MAX];        /* the file this process writes */
    char stem[PATH_MAX - 32];   /* path without rotation's piece suffix */
    double rate;
    size_t depth;
    int follow;
    int flush_ms;
    int rss_ms;                 /* resident-memory interval (rss.h); -1: none, 0: default */
    char *context;              /* NULL: the command line */
    int64_t start_us;           /* when this process's recording started */
    int fd;
    int64_t off;                /* bytes written to fd */
    int64_t tail_off;           /* offset of a time-only last packet, or -1 */
    dev_t fd_dev;               /* what fd must still be before each write */
    ino_t fd_ino;
    mt_writer *w;
    mtr_modules *modules;
    int thread_alive;
    int writer_failed;
    int64_t last_flush_ms;
    int dirty;
    uint64_t bt[MAX_FRAMES + 1];   /* + the [truncated] frame */
    pthread_mutex_t wlock;      /* whoever holds it owns w, fd, sym */
    int atexit_done;
    int leaks;                  /* MEMTRACE_LEAKS: the leak scan at exit (leaks.h) */
    unsigned epoch;             /* recordings opened by this process, mod 2^16 */
    unsigned writer_epoch;      /* the recording the running writer thread serves */
    int fd_regular;             /* fd is a regular file (not /dev/null) */
    /* Rotation (MEMTRACE_ROTATE_SIZE, _TIME, MEMTRACE_KEEP); 0: off */
    int64_t rot_size;           /* bytes per piece, after its carried blocks */
    int64_t rot_ms;             /* milliseconds per piece */
    unsigned keep;              /* pieces kept (0: all) */
    unsigned piece;             /* number of the piece being written, from 1 */
    int64_t piece_ms;           /* when it started (monotonic) */
    int64_t piece_off0;         /* its size after its carried blocks */
    int delete_warned;
    int excl;                   /* every piece of stem is created exclusively */
    int excl_next;              /* the next start's FILE too (control.c's FILE-NNNN) */
} tr = { .fd = -1, .tail_off = -1, .wlock = PTHREAD_MUTEX_INITIALIZER };

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
static void message(const char *fmt, ...)
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

/* ---------------------------------------------------------------------- */
/* Writer side                                                             */

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The clock of event times (queue.c): µs since the epoch. */
static int64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* mt_write_fn: write(2), after checking that our descriptor still refers
 * to the trace (a program may close all descriptors and reuse ours). */
static int write_trace(void *ctx, const void *buf, size_t len)
{
    (void)ctx;
    struct stat st;
    if (fstat(tr.fd, &st) != 0 || st.st_dev != tr.fd_dev || st.st_ino != tr.fd_ino) {
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
    int rc = mt_write_full(tr.fd, buf, len, &written);
    tr.off += (int64_t)written;
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
static void writer_failed(void)
{
    if (tr.writer_failed)
        return;
    tr.writer_failed = 1;
    message("%s: %s; tracing stopped, the trace is cut short", tr.path,
            tr.w ? mt_writer_error(tr.w) : strerror(errno));
    mt_memprof_stop();
    tr.state = IDLE;
}

static void rotate(void);

static int rotating(void)
{
    return tr.rot_size || tr.rot_ms;
}

/* The allocation source written for a record: malloc blocks are External,
 * as in every C trace; anonymous mappings are Major (docs/format.md,
 * "Allocation sources in C traces"). */
static mt_source trace_source(int rec_source)
{
    return rec_source == MT_REC_SOURCE_MMAP ? MT_SOURCE_MAJOR : MT_SOURCE_EXTERNAL;
}

/* The queue's source of a sampled block. */
static int rec_source(const mt_allocation *a)
{
    return a->kind == MT_ALLOC_MMAP || a->kind == MT_ALLOC_MREMAP ? MT_REC_SOURCE_MMAP
                                                                   : MT_REC_SOURCE_MALLOC;
}

static void put_record(void *ctx, const struct mtr_rec *r)
{
    (void)ctx;
    if (!tr.w || tr.writer_failed)
        return;
    int rc;
    if (r->kind == MT_REC_ALLOC) {
        size_t n = r->nframes;
        for (size_t i = 0; i < n; i++)   /* caller first */
            tr.bt[i] = r->frames[n - 1 - i];
        mt_obj_id id;
        rc = mt_writer_put_alloc(tr.w, r->time, r->size, r->n_samples, trace_source(r->source),
                                 tr.bt, n, &id);
        if (rc == 0 && rotating()) {
            /* Ids restart in each piece: the table maps them. */
            if (mtr_carry_add(r->id, id, r->size, r->n_samples, r->source, tr.bt, n) != 0) {
                errno = ENOMEM;
                rc = -1;
            }
        } else if (rc == 0 && id != r->id) {
            message("%s: allocation ids out of step (%llu, %llu); tracing stopped", tr.path,
                    (unsigned long long)id, (unsigned long long)r->id);
            tr.writer_failed = 1;
            mt_memprof_stop();
            tr.state = IDLE;
            return;
        }
    } else {
        uint64_t id = r->id;
        if (rotating() && !mtr_carry_take(r->id, &id))
            return;   /* (an allocation that could not be queued) */
        rc = mt_writer_put_collect(tr.w, r->time, id);
    }
    if (rc != 0)
        writer_failed();
    tr.dirty = 1;
    /* A piece that reached its size goes at once, not at the end of a
     * long drain. */
    if (tr.rot_size && tr.off - tr.piece_off0 >= tr.rot_size && tr.w && !tr.writer_failed)
        rotate();
}

/* Write out the current packet with the trace's end time raised to now
 * (end: marked as the end of the recording). With no event since the last
 * time, the packet holds only that time: the previous such packet is
 * rewritten in place instead, so that an idle process's trace does not
 * grow. wlock held. */
static void write_until(int end)
{
    if (!tr.w || tr.writer_failed)
        return;
    int64_t at = -1;
    if (!tr.dirty) {
        if (tr.tail_off >= 0 && lseek(tr.fd, tr.tail_off, SEEK_SET) == tr.tail_off)
            tr.off = tr.tail_off;
        at = tr.off;
    }
    if (end)
        mtr_rss_close(wall_us());
    if (mt_writer_flush_until(tr.w, wall_us(), end) != 0) {
        writer_failed();
        return;
    }
    tr.tail_off = at;
    tr.dirty = 0;
    tr.last_flush_ms = mono_ms();
}

/* Drain the queue and flush if due (or if force); start the next piece
 * when this one has reached its bound. wlock held. */
static void pump(int force)
{
    mtr_queue_drain(put_record, NULL);
    if (force || mono_ms() - tr.last_flush_ms >= tr.flush_ms)
        write_until(0);
    if (rotating() && tr.w && !tr.writer_failed &&
        ((tr.rot_size && tr.off - tr.piece_off0 >= tr.rot_size) ||
         (tr.rot_ms && mono_ms() - tr.piece_ms >= tr.rot_ms)))
        rotate();
}

/* Asked only when the queue is full. A child made by a raw clone or
 * _Fork (no atfork handlers) has no writer thread: don't wait for one. */
static int consumer_alive(void);
MT_HIDDEN void mtr_fatal_install(void);   /* fatal.c */
MT_HIDDEN void mtr_attach_tick(void);     /* attach.c */

/* A fatal signal (fatal.c): its handler asks the writer thread to write
 * out what is queued (fatal_req) and waits for it (fatal_done). */
static int fatal_req, fatal_done;

static int consumer_alive(void)
{
    return __atomic_load_n(&tr.thread_alive, __ATOMIC_ACQUIRE) &&
           __atomic_load_n(&tr.state, __ATOMIC_ACQUIRE) == ACTIVE && tr.pid == getpid();
}

static void *writer_thread(void *arg)
{
    unsigned mine = (unsigned)(uintptr_t)arg;
    mtr_enter();   /* for good: nothing this thread allocates is sampled */
    mtr_leaks_own_thread();
    for (;;) {
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&tr.wlock);
        if (tr.writer_epoch != mine) {
            /* A later recording has a writer of its own. */
            pthread_mutex_unlock(&tr.wlock);
            return NULL;
        }
        if (tr.state != ACTIVE || tr.pid != getpid()) {
            __atomic_store_n(&tr.thread_alive, 0, __ATOMIC_RELEASE);
            pthread_mutex_unlock(&tr.wlock);
            return NULL;
        }
        if (!tr.modules)
            tr.modules = mtr_modules_new();
        if (__atomic_load_n(&fatal_req, __ATOMIC_ACQUIRE)) {
            /* The process is dying: everything queued, now; no rotation. */
            mtr_queue_drain(put_record, NULL);
            write_until(0);
            mtr_rss_tick(wall_us(), 1);
            __atomic_store_n(&fatal_done, 1, __ATOMIC_RELEASE);
            __atomic_store_n(&tr.thread_alive, 0, __ATOMIC_RELEASE);
            pthread_mutex_unlock(&tr.wlock);
            return NULL;
        }
        pump(0);
        mtr_rss_tick(wall_us(), 0);
        pthread_mutex_unlock(&tr.wlock);
        mtr_attach_tick();   /* attach.c: modules loaded since */
    }
}

static int start_thread(void)
{
    __atomic_store_n(&tr.thread_alive, 1, __ATOMIC_RELEASE);
    tr.writer_epoch++;
    /* detached; the thread takes no signals; the leak scan counts it as
     * the recorder's own */
    mtr_leaks_own_thread_coming(1);
    int rc = mt_thread_start(NULL, writer_thread, (void *)(uintptr_t)tr.writer_epoch);
    if (rc != 0)
        mtr_leaks_own_thread_coming(-1);
    if (rc != 0)
        __atomic_store_n(&tr.thread_alive, 0, __ATOMIC_RELEASE);
    return rc == 0 ? 0 : -1;
}

/* ---------------------------------------------------------------------- */
/* Callbacks (on the program's threads, sampling disabled)                 */

static int open_trace(int first);

/* The writer's location resolver. */
static int resolve(void *ctx, mt_location_code code, const mt_location **locs, size_t *n)
{
    (void)ctx;
    static const mt_location truncated = { "", "[truncated]", 0, 0, 0 };
    if (code == TRUNCATED_CODE) {
        *locs = &truncated;
        *n = 1;
        return 0;
    }
    if (!tr.modules)
        tr.modules = mtr_modules_new();
    return mtr_modules_resolve(tr.modules, code, locs, n);
}

/* Queues an allocation whose stack was cut at the depth limit, with the
 * [truncated] frame after its outermost frame. Out of line, so that the
 * copy's stack space is only taken on this path (threads may have small
 * stacks). */
static __attribute__((noinline)) int64_t queue_truncated(const mt_allocation *a)
{
    size_t n = a->callstack_length;
    uintptr_t cut[n + 1];
    memcpy(cut, a->callstack, n * sizeof *cut);   /* innermost first */
    cut[n] = TRUNCATED_CODE;
    return mtr_queue_alloc_from(a->size, a->n_samples, cut, n + 1, rec_source(a), consumer_alive);
}

/* A sampled block's token: its id + 1, and in the top 16 bits the
 * recording it belongs to, so that a block of an earlier recording of this
 * process (on/off control) is never taken for one of the current recording
 * when it is freed, even once the sampler's 7-bit generation has wrapped. */
#define TOKEN_ID_BITS 48
#define TOKEN_ID_MASK ((UINT64_C(1) << TOKEN_ID_BITS) - 1)

static uint64_t token_of(int64_t id)
{
    uint64_t e = __atomic_load_n(&tr.epoch, __ATOMIC_RELAXED) & 0xffff;
    return (e << TOKEN_ID_BITS) | (((uint64_t)id + 1) & TOKEN_ID_MASK);
}

static void *on_alloc(void *ctx, const mt_allocation *a)
{
    (void)ctx;
    int st = __atomic_load_n(&tr.state, __ATOMIC_ACQUIRE);
    if (st == CHILD_PENDING) {
        pthread_mutex_lock(&tr.wlock);
        if (tr.state == CHILD_PENDING && open_trace(0) != 0) {
            tr.state = IDLE;
            mt_memprof_stop();
        }
        pthread_mutex_unlock(&tr.wlock);
        st = __atomic_load_n(&tr.state, __ATOMIC_ACQUIRE);
    }
    if (st != ACTIVE)
        return NULL;
    int64_t id = a->callstack_truncated && a->callstack_length <= MAX_FRAMES
                     ? queue_truncated(a)
                     : mtr_queue_alloc_from(a->size, a->n_samples, a->callstack,
                                            a->callstack_length, rec_source(a), consumer_alive);
    return id < 0 ? NULL : (void *)(uintptr_t)token_of(id);
}

static void on_free(void *ctx, void *token)
{
    (void)ctx;
    uint64_t t = (uint64_t)(uintptr_t)token;
    if (__atomic_load_n(&tr.state, __ATOMIC_ACQUIRE) == ACTIVE &&
        (t >> TOKEN_ID_BITS) == (__atomic_load_n(&tr.epoch, __ATOMIC_RELAXED) & 0xffff))
        mtr_queue_collect((t & TOKEN_ID_MASK) - 1, consumer_alive);
}

/* ---------------------------------------------------------------------- */
/* Starting and stopping                                                   */

/* The command line, arguments joined by spaces, into buf (cap > 0). */
static void read_cmdline(char *buf, size_t cap)
{
    size_t len = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n;
        while (len < cap - 1 && (n = read(fd, buf + len, cap - 1 - len)) > 0)
            len += (size_t)n;
        close(fd);
    }
    while (len > 0 && buf[len - 1] == '\0')
        len--;
    for (size_t i = 0; i < len; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[len] = '\0';
}

/* The command line as executed, read by the constructor before main: a
 * program that rewrites its argv later (a process title, "postgres:
 * startup") and the children it forks (which keep this copy) are named by
 * the command that started them, not by the title at their first sample. */
static char exec_cmdline[4096];

/* The executable's name for the trace: the path the program was started
 * by (AT_EXECFN: /usr/bin/redis-server), which /proc/self/exe would give
 * with its symbolic links resolved (/usr/bin/redis-check-rdb); made
 * absolute. /proc/self/exe when that path is not the running binary (a
 * script started through its #! line, a path gone or changed since). */
static void executable_name(char *out, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    out[n > 0 ? n : 0] = '\0';
    const char *fn = (const char *)getauxval(AT_EXECFN);
    struct stat a, b;
    if (!fn || !*fn || stat(fn, &a) != 0 || stat("/proc/self/exe", &b) != 0 ||
        a.st_dev != b.st_dev || a.st_ino != b.st_ino)
        return;
    char cwd[PATH_MAX], abs[2 * PATH_MAX];
    int k = -1;
    if (fn[0] == '/')
        k = snprintf(abs, sizeof abs, "%s", fn);
    else if (getcwd(cwd, sizeof cwd)) {
        while (fn[0] == '.' && fn[1] == '/')
            fn += 2;
        k = snprintf(abs, sizeof abs, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", fn);
    }
    if (k > 0 && (size_t)k < cap)
        memcpy(out, abs, (size_t)k + 1);
}

/* Move fd out of the way of descriptors the program may dup2 onto. */
static int high_fd(int fd)
{
    return mtr_high_fd(fd);
}

/* Opens FILE for the first process: never through a symbolic link (a
 * link planted at the path cannot redirect the trace onto another file),
 * never a FIFO (it would block) or someone else's file; an existing
 * regular file of ours is truncated; a character device (/dev/null) is
 * written as is. Returns the descriptor, or -1 with *why set. */
static int open_first(const char *path, const char **why)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, TRACE_MODE);
    if (fd < 0) {
        *why = errno == ELOOP ? "is a symbolic link (not followed)"
             : errno == ENXIO ? "is a FIFO or socket" : strerror(errno);
        return -1;
    }
    struct stat st;
    *why = NULL;
    if (fstat(fd, &st) != 0)
        *why = strerror(errno);
    else if (S_ISREG(st.st_mode) && st.st_uid != geteuid())
        *why = "belongs to another user";
    else if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
        *why = "is not a regular file";
    else if (S_ISREG(st.st_mode) && ftruncate(fd, 0) != 0)
        *why = strerror(errno);
    else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
        *why = strerror(errno);
    if (*why) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Creates path, which must not exist (O_EXCL: never an existing file,
 * never through a link): the files of a child (FILE.<pid>), of a recording
 * started on request (FILE-NNNN) and every piece of them. -1 with *why;
 * errno EEXIST when the name is taken. */
static int open_new(const char *path, const char **why)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, TRACE_MODE);
    if (fd < 0) {
        int e = errno;
        *why = e == EEXIST ? "exists already (an earlier process's or run's: not overwritten)"
                           : strerror(e);
        errno = e;
    }
    return fd;
}

/* The name of piece k of this process's trace: the stem itself without
 * rotation, else STEM.partNNNN (docs/recorder.md, "Long runs: rotation"). */
static void piece_path(char *out, size_t cap, unsigned k)
{
    mt_runname n = { .piece = tr.rot_size || tr.rot_ms ? k : 0 };
    mt_runname_make(out, cap, tr.stem, &n);
}

static int attached;   /* mtr_tracer_set_attached */

/* Takes fd as the current piece's file and writes its trace info (start:
 * the time it covers from). The writer thread is not started here. wlock
 * held. Returns 0 or -1 (message given, fd closed). */
static int begin_piece(int fd, int64_t start)
{
    fd = high_fd(fd);
    struct stat st;
    fstat(fd, &st);
    tr.fd = fd;
    tr.fd_dev = st.st_dev;
    tr.fd_ino = st.st_ino;
    tr.off = 0;
    tr.tail_off = -1;
    tr.fd_regular = S_ISREG(st.st_mode);

    char exe[PATH_MAX], host[256];
    executable_name(exe, sizeof exe);
    if (gethostname(host, sizeof host) != 0)
        host[0] = '\0';
    host[sizeof host - 1] = '\0';
    char now[sizeof exec_cmdline];
    if (!tr.context && !exec_cmdline[0])
        read_cmdline(now, sizeof now);   /* (started without the constructor's copy) */
    mt_trace_info info;
    memset(&info, 0, sizeof info);
    info.version = 2;
    info.sample_rate = tr.rate;
    info.word_size = 8;
    info.executable_name = exe;
    info.host_name = host;
    info.ocaml_runtime_params = attached ? MT_INFO_ATTACHED : "";
    info.pid = (uint64_t)tr.pid;
    info.start_time = start;
    info.context = tr.context ? tr.context : exec_cmdline[0] ? exec_cmdline : now;

    mt_writer_options opts;
    memset(&opts, 0, sizeof opts);
    opts.version = 2;
    opts.resolve = resolve;     /* module table created by the writer thread */
    opts.write = write_trace;
    char *err = NULL;
    tr.writer_failed = 0;
    tr.dirty = 0;
    tr.last_flush_ms = mono_ms();
    tr.w = mt_writer_open(fd, &info, &opts, &err);
    if (!tr.w) {
        message("%s: %s", tr.path, err ? err : "cannot write trace");
        free(err);
        close(fd);
        tr.fd = -1;
        return -1;
    }
    tr.piece_ms = mono_ms();
    tr.piece_off0 = tr.off;
    return 0;
}

/* attach.c: this recording was started in a running process (format.md). */
void mtr_tracer_set_attached(int on) MT_HIDDEN;
void mtr_tracer_set_attached(int on)
{
    attached = on;
}

/* Open this process's file, write the header, start the writer thread.
 * first: this is the first process of the tree (writes FILE itself).
 * wlock held (or single-threaded start). Returns 0 or -1 (message given),
 * or -2 when the first process's file must be new (tr.excl_next) and its
 * name is taken (no message: control.c moves on to the next number). */
static int open_trace(int first)
{
    int fd = -1;
    pid_t pid = getpid();
    const char *why = NULL;
    mtr_carry_reset();   /* (a forked child's copy of its parent's blocks) */
    tr.piece = 1;
    if (first) {
        snprintf(tr.stem, sizeof tr.stem, "%s", tr.base);
        piece_path(tr.path, sizeof tr.path, tr.piece);
        tr.excl = tr.excl_next;
        fd = tr.excl ? open_new(tr.path, &why) : open_first(tr.path, &why);
        if (fd < 0 && tr.excl && errno == EEXIST)
            return -2;
    } else {
        /* O_EXCL: never an existing file, never through a link; so are
         * the later pieces (rotate), so a reused pid never overwrites an
         * earlier process's pieces. */
        tr.excl = 1;
        for (int k = 0; k < 100 && fd < 0; k++) {
            mt_runname n = { .pid = pid, .again = (unsigned)k };
            mt_runname_make(tr.stem, sizeof tr.stem, tr.base, &n);
            piece_path(tr.path, sizeof tr.path, tr.piece);
            fd = open_new(tr.path, &why);
            if (fd < 0 && errno != EEXIST)
                break;
        }
    }
    if (fd < 0) {
        message("%s: cannot create trace: %s", tr.path, why);
        return -1;
    }
    /* tr.modules: kept from an earlier recording of this process (on/off
     * control), created by the writer thread otherwise. */
    tr.pid = pid;
    mtr_queue_reset();
    /* The first piece starts with the process, not its first sample. */
    if (begin_piece(fd, tr.start_us) != 0)
        return -1;
    __atomic_store_n(&tr.epoch, tr.epoch + 1, __ATOMIC_RELAXED);
    /* Beside a regular file only (not beside /dev/null). */
    mtr_rss_open(tr.path, pid, tr.start_us, tr.fd_regular ? tr.rss_ms : 0);
    __atomic_store_n(&tr.state, ACTIVE, __ATOMIC_RELEASE);
    if (start_thread() != 0) {
        message("%s: cannot start the writer thread; tracing stopped", tr.path);
        __atomic_store_n(&tr.state, IDLE, __ATOMIC_RELEASE);
        mt_writer_close(tr.w);
        tr.w = NULL;
        close(tr.fd);
        tr.fd = -1;
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Rotation (docs/recorder.md, "Long runs: rotation")                      */

/* Writes a live block at the start of the new piece (mtr_carry_each). */
static int carry_one(void *ctx, struct mtr_carried *c)
{
    int64_t now = *(const int64_t *)ctx;
    mt_obj_id id;
    if (mt_writer_put_alloc(tr.w, now, c->size, c->n_samples, trace_source(c->source),
                            c->frames, c->nframes, &id) != 0)
        return 1;
    c->piece_id = id;
    return 0;
}

/* The next piece could not be started: say so once, stop sampling; the
 * pieces written so far are complete. wlock held. */
static void rotation_failed(const char *why)
{
    message("%s: cannot start this piece of the trace: %s; tracing stopped (the earlier "
            "pieces are complete)", tr.path, why);
    tr.writer_failed = 1;
    mt_memprof_stop();
    tr.state = IDLE;
    if (tr.w) {
        mt_writer_close(tr.w);
        tr.w = NULL;
    }
    if (tr.fd >= 0)
        close(tr.fd);
    tr.fd = -1;
    mtr_carry_reset();
}

/* MEMTRACE_KEEP: the piece that falls out of the window goes, with its
 * .rss. A failure is said once; tracing goes on. */
static void drop_old_piece(void)
{
    if (!tr.keep || tr.piece <= tr.keep)
        return;
    char old[PATH_MAX + 8];
    piece_path(old, sizeof old, tr.piece - tr.keep);
    if (unlink(old) != 0 && errno != ENOENT && !tr.delete_warned) {
        tr.delete_warned = 1;
        message("%s: cannot delete this old piece: %s; tracing goes on, but old pieces are "
                "no longer deleted reliably", old, strerror(errno));
    }
    mt_runname rss = { .piece = tr.piece - tr.keep, .kind = MT_RUNFILE_RSS };
    if (mt_runname_make(old, sizeof old, tr.stem, &rss) >= 0)
        unlink(old);
}

/* Ends the current piece (complete, with the end mark) and starts the next:
 * its trace info, then every sampled block still live, written again as
 * carried allocations at the piece's start time with their stacks and
 * sample counts, in packets marked as such. Runs in the writer thread (or
 * whoever pumps the queue), wlock held: never in an allocation. */
static void rotate(void)
{
    write_until(1);
    if (tr.writer_failed)
        return;
    int rc = mt_writer_close(tr.w);
    tr.w = NULL;
    close(tr.fd);
    tr.fd = -1;
    if (rc != 0) {
        rotation_failed("the previous piece could not be finished");
        return;
    }
    int64_t now = wall_us();
    tr.piece++;
    piece_path(tr.path, sizeof tr.path, tr.piece);
    const char *why = NULL;
    int fd = tr.excl ? open_new(tr.path, &why) : open_first(tr.path, &why);
    if (fd < 0) {
        rotation_failed(why);
        return;
    }
    if (begin_piece(fd, now) != 0) {
        rotation_failed("cannot write its header");
        return;
    }
    int crc = mt_writer_set_carried(tr.w, 1);
    if (crc == 0)
        crc = mtr_carry_each(carry_one, &now);
    if (crc == 0)
        crc = mt_writer_set_carried(tr.w, 0);
    if (crc != 0) {
        if (crc < 0)
            rotation_failed("out of memory for the table of live blocks");
        else
            writer_failed();
        return;
    }
    tr.piece_off0 = tr.off;
    tr.tail_off = -1;
    tr.dirty = 0;
    mtr_rss_open(tr.path, tr.pid, now, tr.fd_regular ? tr.rss_ms : 0);
    drop_old_piece();
}

static int lock_writer(void);

/* The verdicts of the blocks live now (not for a rotated recording: its
 * ids are the pieces'): at exit with MEMTRACE_LEAKS, and on request
 * ('memtrace ctl PID scan', from the control thread). 0 if written. */
static int scan_for_leaks(int flush)
{
    if (rotating())
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
        if (tr.state == ACTIVE && tr.w && !tr.writer_failed && tr.pid == getpid()) {
            rc = mtr_leaks_scan(tr.path, tr.pid, tr.start_us, tr.epoch);
            if (flush)   /* the judged blocks in the trace now, for whoever reads it */
                pump(1);
        } else {
            mtr_leaks_no_verdicts("the recording %s", tr.writer_failed ? "could not be written"
                                                                       : "is not under way");
        }
        pthread_mutex_unlock(&tr.wlock);
    }
    mtr_leave();
    return rc;
}

int mtr_tracer_scan_now(void)
{
    if (rotating()) {
        mtr_leaks_no_verdicts("not for a rotated recording (its ids are the pieces')");
        return -1;
    }
    return scan_for_leaks(1);
}

static void at_exit_handler(void)
{
    __atomic_store_n(&mtr_exiting, 1, __ATOMIC_RELEASE);
    if (__atomic_load_n(&tr.state, __ATOMIC_ACQUIRE) == ACTIVE && tr.pid == getpid()) {
        if (tr.leaks)
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
        message("no trace file name given");
        return -1;
    }
    double rate = c->rate;
    if (rate <= 0)
        rate = MEMTRACE_DEFAULT_RATE;
    if (!mt_recconf_rate_ok(rate)) {
        message("sampling rate %g out of range (0, 1]", rate);
        return -1;
    }
    mtr_enter();
    pthread_mutex_lock(&tr.wlock);
    int rc = -1;
    if (tr.state != IDLE) {
        message("tracing already active");
        goto out;
    }
    /* Resolved once: processes that change directory still write beside it. */
    char cwd[PATH_MAX];
    int rel = filename[0] != '/' && getcwd(cwd, sizeof cwd) != NULL;
    if ((rel ? strlen(cwd) + 1 : 0) + strlen(filename) >= sizeof tr.base) {
        message("trace file name too long");
        goto out;
    }
    if (mtr_queue_init() != 0) {
        message("cannot allocate the event queue");
        goto out;
    }
    remember_stderr();
    if (rel)
        snprintf(tr.base, sizeof tr.base, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", filename);
    else
        snprintf(tr.base, sizeof tr.base, "%s", filename);
    tr.start_us = wall_us();
    tr.rate = rate;
    tr.leaks = c->leaks;
    free(tr.context);
    tr.context = context ? strdup(context) : NULL;
    if (c->depth)
        tr.depth = (size_t)c->depth;
    if (!tr.depth)
        tr.depth = DEFAULT_DEPTH;
    if (c->unwind)
        mtr_unwind_choose(c->unwind);
    if (!tr.flush_ms)
        tr.flush_ms = DEFAULT_FLUSH_MS;
    if (!tr.rss_ms)
        tr.rss_ms = DEFAULT_RSS_MS;
    if (first) {
        int orc = open_trace(1);
        if (orc != 0) {
            rc = orc;
            goto out;
        }
    } else {
        /* The file is created at the first sampled allocation, if any. */
        tr.pid = getpid();
        __atomic_store_n(&tr.state, CHILD_PENDING, __ATOMIC_RELEASE);
    }
    if (first && !attached && !mtr_malloc_is_ours())
        message("malloc is not the recorder's (another allocator comes before libmemtrace.so "
                "in LD_PRELOAD?): no malloc block will be sampled; put libmemtrace.so first");
    mt_tracker tk = { on_alloc, on_free, NULL };
    if (mt_memprof_start(rate, tr.depth, &tk) != 0) {
        message("cannot start sampling");
        __atomic_store_n(&tr.state, IDLE, __ATOMIC_RELEASE);
        if (tr.w) {
            mt_writer_close(tr.w);
            tr.w = NULL;
            close(tr.fd);
            tr.fd = -1;
        }
        goto out;
    }
    if (!tr.atexit_done) {
        tr.atexit_done = 1;
        atexit(at_exit_handler);
    }
    mtr_fatal_install();
    rc = 0;
out:
    pthread_mutex_unlock(&tr.wlock);
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
            message("%s=%s: expected %s", mt_recconf_env(keys[i]), v,
                    mt_recconf_expected(keys[i]));
            return -1;
        }
    }
    return 0;
}

API int memtrace_start_tracing(const char *filename, double rate, const char *context)
{
    if (!tr.follow)
        tr.follow = 1;
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
        if (pthread_mutex_trylock(&tr.wlock) == 0)
            return 0;
        struct timespec ts = { 0, 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    return -1;
}

API int memtrace_stop_tracing(void)
{
    int st = __atomic_load_n(&tr.state, __ATOMIC_ACQUIRE);
    if (st == CHILD_PENDING && tr.pid == getpid()) {
        /* Nothing sampled, no file: just stop sampling. */
        mtr_enter();
        mt_memprof_stop();
        pthread_mutex_lock(&tr.wlock);
        if (tr.state == CHILD_PENDING)
            __atomic_store_n(&tr.state, IDLE, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&tr.wlock);
        mtr_leave();
        return 0;
    }
    if (st != ACTIVE || tr.pid != getpid())
        return -1;
    mtr_enter();
    mt_memprof_stop();
    int rc = -1;
    if (lock_writer() == 0) {
        if (tr.state == ACTIVE) {
            __atomic_store_n(&tr.state, CLOSING, __ATOMIC_RELEASE);
            mtr_queue_drain(put_record, NULL);
            write_until(1);   /* the recording ends now */
            rc = tr.writer_failed ? -1 : 0;
            if (tr.w && mt_writer_close(tr.w) != 0 && !tr.writer_failed) {
                message("%s: %s", tr.path, strerror(errno));
                rc = -1;
            }
            tr.w = NULL;
            if (tr.fd >= 0)
                close(tr.fd);
            tr.fd = -1;
            mtr_carry_reset();
            __atomic_store_n(&tr.state, IDLE, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&tr.wlock);
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
        message("%s=%s: expected %s", name, s, what);
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
        message("%s=%s: expected %s", name, s, what);
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
        message("MEMTRACE_ROTATE_SIZE=%s: expected a size from 64k to 1e18 bytes, such as 100m "
                "or 1g", sz);
        return -1;
    }
    if (tm && *tm && (ms = mt_ctl_time_ms_at_least(tm, MT_ROTATE_MIN_MS)) < 0) {
        message("MEMTRACE_ROTATE_TIME=%s: expected a time of at least 1s, such as 10m, 1h or "
                "1d", tm);
        return -1;
    }
    int k = env_long("MEMTRACE_KEEP", 1, 1000000, "a number of pieces to keep in [1, 1000000]",
                     &keep);
    if (k < 0)
        return -1;
    if (k > 0 && !size && !ms) {
        message("MEMTRACE_KEEP=%ld: needs MEMTRACE_ROTATE_SIZE or MEMTRACE_ROTATE_TIME", keep);
        return -1;
    }
    tr.rot_size = size > 0 ? size : 0;
    tr.rot_ms = ms > 0 ? ms : 0;
    tr.keep = (unsigned)keep;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* What control.c uses (docs/recorder.md, "Tracing on demand")             */

int mtr_tracer_begin(const mt_recconf *c, const char *file, int first, int exclusive)
{
    if (__atomic_load_n(&mtr_exiting, __ATOMIC_ACQUIRE))
        return -1;
    tr.excl_next = exclusive;
    int rc = start(file, c, NULL, first);
    tr.excl_next = 0;
    return rc;
}

int mtr_tracer_active(void)
{
    return __atomic_load_n(&tr.state, __ATOMIC_ACQUIRE) != IDLE && tr.pid == getpid();
}

void mtr_tracer_message(const char *fmt, ...)
{
    char buf[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    message("%s", buf);
}

/* MEMTRACE_PAUSED, MEMTRACE_SIGNAL or MEMTRACE_DURATION given: control.c
 * starts and stops the recordings. Processes started later find FILE
 * absolute in MEMTRACE (or nothing, without MEMTRACE_FOLLOW). */
static int controlled_start(int first)
{
    mtr_enter();
    if (!tr.follow)
        setenv("MEMTRACE", "", 1);
    else if (first)
        setenv("MEMTRACE", mtr_control_base(), 1);
    mtr_leave();
    if (!tr.atexit_done) {
        tr.atexit_done = 1;
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
    if (__atomic_load_n(&tr.state, __ATOMIC_ACQUIRE) != IDLE && tr.pid == getpid())
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
    tr.rss_ms = rss_ms ? (int)rss_ms : -1;   /* -1: no FILE.rss */
    tr.depth = (size_t)conf.depth;
    tr.flush_ms = (int)flush_ms;
    tr.follow = (int)follow;
    int first = secure_getenv("MEMTRACE_ROOT") == NULL;
    char pid[32];
    mtr_enter();
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    if (first)
        setenv("MEMTRACE_ROOT", pid, 1);
    char *copy = strdup(file);
    mtr_leave();
    if (!copy)
        return -1;
    conf.file = copy;
    int ctl = mtr_control_setup(&conf, first);
    if (ctl != 0) {
        free(copy);
        return ctl < 0 ? -1 : ctl == 2 ? 1 : controlled_start(first);
    }
    if (!tr.follow) {
        mtr_enter();
        setenv("MEMTRACE", "", 1);   /* exec'd programs don't trace */
        mtr_leave();
    }
    int rel = copy[0] != '/';   /* (file may be gone after setenv) */
    int rc = start(copy, &conf, NULL, first);
    free(copy);
    if (rc == 0 && first && tr.follow && rel) {
        /* Programs started from elsewhere write beside FILE too. */
        mtr_enter();
        setenv("MEMTRACE", tr.base, 1);
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
    fork_locked = pthread_mutex_lock(&tr.wlock) == 0;
    mtr_queue_lock();
    mtr_sampler_fork_prepare();
}

static void fork_parent(void)
{
    mtr_sampler_fork_parent();
    mtr_queue_unlock();
    if (fork_locked)
        pthread_mutex_unlock(&tr.wlock);
    mtr_leave();
}

static void fork_child(void)
{
    mtr_sampler_fork_child();
    mtr_leaks_fork_child();
    mtr_queue_reset();
    pthread_mutex_init(&tr.wlock, NULL);
    tr.thread_alive = 0;
    if (tr.state == ACTIVE || tr.state == CHILD_PENDING) {
        /* The parent's writer, file and module table stay the parent's. */
        mtr_rss_forget();
        if (tr.fd >= 0)
            close(tr.fd);
        tr.fd = -1;
        tr.w = NULL;
        tr.modules = NULL;
        if (tr.follow) {
            tr.start_us = wall_us();
            tr.pid = getpid();
            tr.state = CHILD_PENDING;
        } else {
            tr.state = IDLE;
            mt_memprof_stop();
        }
    }
    mtr_control_fork_child(tr.follow);
    mtr_leave();
}

int mtr_ready MT_HIDDEN;

/* fatal.c, in a fatal signal's handler on a program thread (not in the
 * recorder's code): the writer thread writes out what is queued; wait for
 * it at most timeout_ms. Async-signal-safe: atomics and nanosleep only,
 * no lock taken here. 1 if the flush was done. */
int mtr_tracer_fatal_flush(int timeout_ms) MT_HIDDEN;
int mtr_tracer_fatal_flush(int timeout_ms)
{
    if (__atomic_load_n(&tr.state, __ATOMIC_ACQUIRE) != ACTIVE || tr.pid != getpid() ||
        !__atomic_load_n(&tr.thread_alive, __ATOMIC_ACQUIRE))
        return 0;
    __atomic_store_n(&fatal_req, 1, __ATOMIC_RELEASE);
    struct timespec ts = { 0, 1000 * 1000 };
    for (int i = 0; i < timeout_ms; i++) {
        if (__atomic_load_n(&fatal_done, __ATOMIC_ACQUIRE))
            return 1;
        if (!__atomic_load_n(&tr.thread_alive, __ATOMIC_ACQUIRE))
            return 0;
        nanosleep(&ts, NULL);
    }
    return 0;
}

static void flush_now(int end)
{
    if (__atomic_load_n(&tr.state, __ATOMIC_ACQUIRE) != ACTIVE || tr.pid != getpid())
        return;
    int saved = errno;
    mtr_enter();
    if (lock_writer() == 0) {
        if (tr.state == ACTIVE) {
            mtr_queue_drain(put_record, NULL);
            if (end || tr.dirty)
                write_until(end);
        }
        pthread_mutex_unlock(&tr.wlock);
    }
    mtr_leave();
    errno = saved;
}

/* exec.c: write out what is queued (dlclose: while the library's code is
 * still mapped, for symbolization). */
void mtr_tracer_flush_before_exec(void) MT_HIDDEN;
void mtr_tracer_flush_before_exec(void)
{
    flush_now(0);
}

/* exec.c: the image is about to be replaced: this recording ends here (if
 * exec fails, it simply goes on). */
void mtr_tracer_end_before_exec(void) MT_HIDDEN;
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
    if (__atomic_load_n(&tr.state, __ATOMIC_ACQUIRE) == ACTIVE && tr.pid == getpid())
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
    __atomic_store_n(&mtr_ready, 1, __ATOMIC_RELEASE);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    read_cmdline(exec_cmdline, sizeof exec_cmdline);
    memtrace_trace_if_requested();
}

__attribute__((destructor)) static void memtrace_fini(void)
{
    at_exit_handler();
}
