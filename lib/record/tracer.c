/*
 * tracer.c - the tracker that writes memtrace traces, and how it starts:
 * memtrace_trace_if_requested (MEMTRACE, MEMTRACE_RATE, ...), called by
 * the library constructor when preloaded; memtrace_start_tracing /
 * memtrace_stop_tracing; exit and fork handling.
 *
 * Data path: the engine's alloc/free callbacks (on the program's threads)
 * append records to the queue (queue.h); a background writer thread drains
 * the queue into the trace writer (mt_writer, which owns the file) and
 * flushes every MEMTRACE_FLUSH_MS (default 500) so a killed process leaves
 * a readable trace. Symbolization (symbolize.h) runs when the writer flushes
 * a packet, in the writer thread: never in an allocation path.
 *
 * Files: the first process writes FILE; every other process of the tree
 * (forked children, exec'd programs, the first process after it exec'd)
 * writes FILE.<pid>, or FILE.<pid>.<k> if that name exists. A forked child
 * opens its file at its first sampled allocation and never touches its
 * parent's. MEMTRACE_FOLLOW=0 traces the first process only.
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
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "memtrace/record.h"
#include "memtrace/trace.h"
#include "engine.h"
#include "queue.h"
#include "real.h"
#include "symbolize.h"

#define API __attribute__((visibility("default")))
#define DEFAULT_DEPTH 128
#define MAX_FRAMES 1024

enum { IDLE, ACTIVE, CHILD_PENDING, CLOSING };

static struct {
    int state;
    pid_t pid;                  /* process the open trace belongs to */
    char base[PATH_MAX - 64];   /* FILE as the user gave it */
    char path[PATH_MAX];        /* the file this process writes */
    double rate;
    size_t depth;
    int follow;
    int flush_ms;
    char *context;              /* NULL: the command line */
    int fd;
    dev_t fd_dev;               /* what fd must still be before each write */
    ino_t fd_ino;
    mt_writer *w;
    mtr_symbolizer *sym;
    int thread_alive;
    int writer_failed;
    int64_t last_flush_ms;
    int dirty;
    uint64_t bt[MAX_FRAMES];
    pthread_mutex_t wlock;      /* whoever holds it owns w, fd, sym */
    int atexit_done;
} tr = { .fd = -1, .wlock = PTHREAD_MUTEX_INITIALIZER };

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
    const char *p = buf;
    int rc = 0;
    while (len > 0) {
        ssize_t n = write(tr.fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = -1;
            break;
        }
        p += n;
        len -= (size_t)n;
    }
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
    message("%s: %s; tracing stopped", tr.path, tr.w ? mt_writer_error(tr.w) : strerror(errno));
    mt_memprof_stop();
    tr.state = IDLE;
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
        rc = mt_writer_put_alloc(tr.w, r->time, r->size, r->n_samples, MT_SOURCE_EXTERNAL,
                                 tr.bt, n, &id);
        if (rc == 0 && id != r->id) {
            message("%s: allocation ids out of step (%llu, %llu); tracing stopped", tr.path,
                    (unsigned long long)id, (unsigned long long)r->id);
            tr.writer_failed = 1;
            mt_memprof_stop();
            tr.state = IDLE;
            return;
        }
    } else {
        rc = mt_writer_put_collect(tr.w, r->time, r->id);
    }
    if (rc != 0)
        writer_failed();
    tr.dirty = 1;
}

/* Drain the queue and flush if due (or if force). wlock held. */
static void pump(int force)
{
    mtr_queue_drain(put_record, NULL);
    int64_t now = mono_ms();
    if (tr.w && !tr.writer_failed && tr.dirty &&
        (force || now - tr.last_flush_ms >= tr.flush_ms)) {
        if (mt_writer_flush(tr.w) != 0)
            writer_failed();
        tr.dirty = 0;
        tr.last_flush_ms = now;
    }
}

/* Asked only when the queue is full. A child made by a raw clone or
 * _Fork (no atfork handlers) has no writer thread: don't wait for one. */
static int consumer_alive(void)
{
    return __atomic_load_n(&tr.thread_alive, __ATOMIC_ACQUIRE) &&
           __atomic_load_n(&tr.state, __ATOMIC_ACQUIRE) == ACTIVE && tr.pid == getpid();
}

static void *writer_thread(void *arg)
{
    (void)arg;
    mtr_enter();   /* for good: nothing this thread allocates is sampled */
    for (;;) {
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&tr.wlock);
        if (tr.state != ACTIVE || tr.pid != getpid()) {
            __atomic_store_n(&tr.thread_alive, 0, __ATOMIC_RELEASE);
            pthread_mutex_unlock(&tr.wlock);
            return NULL;
        }
        if (!tr.sym)
            tr.sym = mtr_sym_new();
        pump(0);
        pthread_mutex_unlock(&tr.wlock);
    }
}

static int start_thread(void)
{
    pthread_attr_t attr;
    pthread_t th;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);   /* the thread takes no signals */
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    __atomic_store_n(&tr.thread_alive, 1, __ATOMIC_RELEASE);
    int rc = pthread_create(&th, &attr, writer_thread, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
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
    if (!tr.sym)
        tr.sym = mtr_sym_new();
    return mtr_sym_resolve(tr.sym, code, locs, n);
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
    int64_t id = mtr_queue_alloc(a->size, a->n_samples, a->callstack, a->callstack_length,
                                consumer_alive);
    return id < 0 ? NULL : (void *)(uintptr_t)(id + 1);
}

static void on_free(void *ctx, void *token)
{
    (void)ctx;
    if (__atomic_load_n(&tr.state, __ATOMIC_ACQUIRE) == ACTIVE)
        mtr_queue_collect((uint64_t)(uintptr_t)token - 1, consumer_alive);
}

/* ---------------------------------------------------------------------- */
/* Starting and stopping                                                   */

static char *read_cmdline(void)
{
    char buf[4096];
    size_t len = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n;
        while (len < sizeof buf - 1 && (n = read(fd, buf + len, sizeof buf - 1 - len)) > 0)
            len += (size_t)n;
        close(fd);
    }
    while (len > 0 && buf[len - 1] == '\0')
        len--;
    for (size_t i = 0; i < len; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[len] = '\0';
    return strdup(buf);
}

/* Move fd out of the way of descriptors the program may dup2 onto. */
static int high_fd(int fd)
{
    int hi = fcntl(fd, F_DUPFD_CLOEXEC, 200);
    if (hi < 0)
        return fd;
    close(fd);
    return hi;
}

/* Open this process's file, write the header, start the writer thread.
 * first: this is the first process of the tree (writes FILE itself).
 * wlock held (or single-threaded start). Returns 0 or -1 (message given). */
static int open_trace(int first)
{
    int fd = -1;
    pid_t pid = getpid();
    if (first) {
        snprintf(tr.path, sizeof tr.path, "%s", tr.base);
        fd = open(tr.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    } else {
        for (int k = 0; k < 100 && fd < 0; k++) {
            if (k == 0)
                snprintf(tr.path, sizeof tr.path, "%s.%d", tr.base, (int)pid);
            else
                snprintf(tr.path, sizeof tr.path, "%s.%d.%d", tr.base, (int)pid, k);
            fd = open(tr.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
            if (fd < 0 && errno != EEXIST)
                break;
        }
    }
    if (fd < 0) {
        message("%s: cannot create trace: %s", tr.path, strerror(errno));
        return -1;
    }
    fd = high_fd(fd);
    struct stat st;
    fstat(fd, &st);
    tr.fd = fd;
    tr.fd_dev = st.st_dev;
    tr.fd_ino = st.st_ino;

    char exe[PATH_MAX], host[256];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    if (gethostname(host, sizeof host) != 0)
        host[0] = '\0';
    host[sizeof host - 1] = '\0';
    char *cmdline = tr.context ? NULL : read_cmdline();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);

    mt_trace_info info;
    memset(&info, 0, sizeof info);
    info.version = 2;
    info.sample_rate = tr.rate;
    info.word_size = 8;
    info.executable_name = exe;
    info.host_name = host;
    info.ocaml_runtime_params = "";
    info.pid = (uint64_t)pid;
    info.start_time = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    info.context = tr.context ? tr.context : cmdline;

    mt_writer_options opts;
    memset(&opts, 0, sizeof opts);
    opts.version = 2;
    opts.resolve = resolve;     /* symbolizer created by the writer thread */
    opts.write = write_trace;
    char *err = NULL;
    tr.sym = NULL;
    tr.writer_failed = 0;
    tr.dirty = 0;
    tr.last_flush_ms = mono_ms();
    mtr_queue_reset();
    tr.w = mt_writer_open(fd, &info, &opts, &err);
    free(cmdline);
    if (!tr.w) {
        message("%s: %s", tr.path, err ? err : "cannot write trace");
        free(err);
        close(fd);
        tr.fd = -1;
        return -1;
    }
    tr.pid = pid;
    __atomic_store_n(&tr.state, ACTIVE, __ATOMIC_RELEASE);
    if (start_thread() != 0) {
        message("%s: cannot start the writer thread; tracing stopped", tr.path);
        __atomic_store_n(&tr.state, IDLE, __ATOMIC_RELEASE);
        mt_writer_close(tr.w);
        tr.w = NULL;
        close(fd);
        tr.fd = -1;
        return -1;
    }
    return 0;
}

static void at_exit_handler(void)
{
    if (__atomic_load_n(&tr.state, __ATOMIC_ACQUIRE) == ACTIVE && tr.pid == getpid())
        memtrace_stop_tracing();
}

static int start(const char *filename, double rate, const char *context, int first)
{
    if (!err_known)
        remember_stderr();   /* so that the messages below are seen */
    if (!filename || !*filename) {
        message("no trace file name given");
        return -1;
    }
    if (rate <= 0)
        rate = MEMTRACE_DEFAULT_RATE;
    if (!(rate <= 1.0)) {
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
    if (strlen(filename) >= sizeof tr.base) {
        message("trace file name too long");
        goto out;
    }
    if (mtr_queue_init() != 0) {
        message("cannot allocate the event queue");
        goto out;
    }
    remember_stderr();
    snprintf(tr.base, sizeof tr.base, "%s", filename);
    tr.rate = rate;
    free(tr.context);
    tr.context = context ? strdup(context) : NULL;
    if (!tr.depth)
        tr.depth = DEFAULT_DEPTH;
    if (!tr.flush_ms)
        tr.flush_ms = 500;
    if (open_trace(first) != 0)
        goto out;
    mt_tracker tk = { on_alloc, on_free, NULL };
    if (mt_memprof_start(rate, tr.depth, &tk) != 0) {
        message("cannot start sampling (address space for sampled blocks?)");
        __atomic_store_n(&tr.state, IDLE, __ATOMIC_RELEASE);
        mt_writer_close(tr.w);
        tr.w = NULL;
        close(tr.fd);
        tr.fd = -1;
        goto out;
    }
    if (!tr.atexit_done) {
        tr.atexit_done = 1;
        atexit(at_exit_handler);
    }
    rc = 0;
out:
    pthread_mutex_unlock(&tr.wlock);
    mtr_leave();
    return rc;
}

API int memtrace_start_tracing(const char *filename, double rate, const char *context)
{
    if (!tr.follow)
        tr.follow = 1;
    return start(filename, rate, context, 1);
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
    if (__atomic_load_n(&tr.state, __ATOMIC_ACQUIRE) != ACTIVE || tr.pid != getpid())
        return -1;
    mtr_enter();
    mt_memprof_stop();
    int rc = -1;
    if (lock_writer() == 0) {
        if (tr.state == ACTIVE) {
            __atomic_store_n(&tr.state, CLOSING, __ATOMIC_RELEASE);
            pump(1);
            rc = tr.writer_failed ? -1 : 0;
            if (tr.w && mt_writer_close(tr.w) != 0 && !tr.writer_failed) {
                message("%s: %s", tr.path, strerror(errno));
                rc = -1;
            }
            tr.w = NULL;
            if (tr.fd >= 0)
                close(tr.fd);
            tr.fd = -1;
            __atomic_store_n(&tr.state, IDLE, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&tr.wlock);
    }
    mtr_leave();
    return rc;
}

API int memtrace_trace_if_requested(void)
{
    const char *file = getenv("MEMTRACE");
    if (!file || !*file)
        return 0;
    /* Linked-in programs get here twice: from our constructor and from
     * their own call. */
    if (__atomic_load_n(&tr.state, __ATOMIC_ACQUIRE) != IDLE && tr.pid == getpid())
        return 1;
    if (!err_known)
        remember_stderr();   /* so that a bad MEMTRACE_RATE is reported */
    double rate = MEMTRACE_DEFAULT_RATE;
    const char *r = getenv("MEMTRACE_RATE");
    if (r && *r) {
        char *end;
        rate = strtod(r, &end);
        if (*end || !(rate > 0 && rate <= 1)) {
            message("MEMTRACE_RATE=%s: expected a probability per byte in (0, 1]", r);
            return -1;
        }
    }
    const char *d = getenv("MEMTRACE_DEPTH");
    if (d && *d) {
        long v = strtol(d, NULL, 10);
        tr.depth = v > 0 && v <= MAX_FRAMES ? (size_t)v : DEFAULT_DEPTH;
    }
    const char *f = getenv("MEMTRACE_FLUSH_MS");
    if (f && *f) {
        long v = strtol(f, NULL, 10);
        tr.flush_ms = v > 0 && v < 3600000 ? (int)v : 500;
    }
    const char *fo = getenv("MEMTRACE_FOLLOW");
    tr.follow = !(fo && strcmp(fo, "0") == 0);
    int first = getenv("MEMTRACE_ROOT") == NULL;
    char pid[32];
    mtr_enter();
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    if (first)
        setenv("MEMTRACE_ROOT", pid, 1);
    char *copy = strdup(file);
    if (!tr.follow)
        setenv("MEMTRACE", "", 1);   /* exec'd programs don't trace */
    mtr_leave();
    int rc = start(copy ? copy : file, rate, NULL, first);
    free(copy);
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
    mtr_engine_fork_prepare();
}

static void fork_parent(void)
{
    mtr_engine_fork_parent();
    mtr_queue_unlock();
    if (fork_locked)
        pthread_mutex_unlock(&tr.wlock);
    mtr_leave();
}

static void fork_child(void)
{
    mtr_engine_fork_child();
    mtr_queue_reset();
    pthread_mutex_init(&tr.wlock, NULL);
    tr.thread_alive = 0;
    if (tr.state == ACTIVE) {
        /* The parent's writer, file and symbolizer stay the parent's. */
        if (tr.fd >= 0)
            close(tr.fd);
        tr.fd = -1;
        tr.w = NULL;
        tr.sym = NULL;
        if (tr.follow) {
            tr.state = CHILD_PENDING;
        } else {
            tr.state = IDLE;
            mt_memprof_stop();
        }
    }
    mtr_leave();
}

int mtr_ready MT_HIDDEN;

/* exec.c: write out what is queued before the image is replaced. */
void mtr_tracer_flush_before_exec(void) MT_HIDDEN;
void mtr_tracer_flush_before_exec(void)
{
    if (__atomic_load_n(&tr.state, __ATOMIC_ACQUIRE) != ACTIVE || tr.pid != getpid())
        return;
    int saved = errno;
    mtr_enter();
    if (lock_writer() == 0) {
        if (tr.state == ACTIVE)
            pump(1);
        pthread_mutex_unlock(&tr.wlock);
    }
    mtr_leave();
    errno = saved;
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
    __atomic_store_n(&mtr_ready, 1, __ATOMIC_RELEASE);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    memtrace_trace_if_requested();
}

__attribute__((destructor)) static void memtrace_fini(void)
{
    at_exit_handler();
}
