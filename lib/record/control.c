/*
 * control.c - switching the recorder on and off while the program runs:
 * a dormant start (MEMTRACE_PAUSED=1: interposed, not sampling), on/off
 * requests through a control channel ('memtrace ctl PID start|stop') or by
 * a signal (MEMTRACE_SIGNAL, default USR2: a plain kill toggles), and a time
 * limit per recording (MEMTRACE_DURATION).
 *
 * When the user asked for control (MEMTRACE_PAUSED or MEMTRACE_SIGNAL
 * set), the recorder creates its control channel (control_proto.h): a
 * memfd mapped shared, which 'memtrace ctl' opens through /proc/PID/fd and
 * writes its request into. Nothing of it reaches the program: a signal
 * would run whatever handler the program installed for it since (nginx and
 * gunicorn upgrade their binary on SIGUSR2), and SigCgt cannot tell whose
 * handler catches it. A forked child gets a channel of its own. If the
 * program closes the channel's descriptor (daemons close them all), the
 * control thread notices within a second and makes a new one.
 *
 * The signal handler, for a plain kill, is installed with SA_RESTART and
 * never over a handler the program already has. It only stores the
 * request in a flag. A control thread (all signals blocked, never sampled)
 * looks at the flag and the channel every 100 ms and starts or stops a
 * recording with the tracer's ordinary start and stop, so no tracing work
 * ever runs in the handler.
 *
 * Each recording (period) is a complete trace of its own: FILE-0001,
 * FILE-0002, ... for the first process; processes it starts write
 * FILE-NNNN.<pid> as usual (tracer.c). A forked child gets a control
 * thread of its own (it is switched by its own pid). Without a signal or a pause,
 * MEMTRACE_DURATION just ends the one recording, FILE, after that time.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "memtrace/record.h"
#include "control.h"
#include "leaks.h"
#include "control_proto.h"
#include "runfiles.h"
#include "thread_start.h"
#include "thread.h"
#include "tracer.h"

#define POLL_MS 100
#define CHECK_HANDLER_MS 1000

static struct {
    int enabled;          /* a control thread runs (or should) */
    int periods;          /* recordings are numbered FILE-NNNN */
    int paused;           /* start dormant */
    int sig;              /* 0: no signal control */
    long long duration_ms;   /* 0: no limit */
    char base[PATH_MAX - 80];   /* FILE, absolute */
    mt_recconf conf;      /* the recordings' configuration (its file: base) */
    int first;            /* the first process of the tree */
    unsigned period;      /* number of the last period started */
    pid_t pid;            /* process the control thread belongs to */
    int warned_handler;
    mt_ctl_channel *chan; /* the control channel (NULL: none) */
    int chan_fd;
    dev_t chan_dev;       /* its identity: the program may close the fd */
    ino_t chan_ino;
    uint64_t chan_seen;   /* the sequence of the last request taken */
} ctl;

/* A new control channel (the old one, if any, given up: closed only if the
 * descriptor is still ours). 0, or -1 (then there is none). */
static int channel_open(void)
{
    if (ctl.chan) {
        struct stat st;
        if (fstat(ctl.chan_fd, &st) == 0 && st.st_dev == ctl.chan_dev && st.st_ino == ctl.chan_ino)
            close(ctl.chan_fd);
        munmap(ctl.chan, MT_CTL_CHANNEL_SIZE);
        ctl.chan = NULL;
    }
    int fd = memfd_create(MT_CTL_CHANNEL_NAME, MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    void *p = MAP_FAILED;
    if (ftruncate(fd, MT_CTL_CHANNEL_SIZE) == 0 && fstat(fd, &st) == 0)
        p = mmap(NULL, MT_CTL_CHANNEL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        close(fd);
        return -1;
    }
    ctl.chan = p;
    ctl.chan_fd = fd;
    ctl.chan_dev = st.st_dev;
    ctl.chan_ino = st.st_ino;
    ctl.chan_seen = 0;
    __atomic_store_n(&ctl.chan->recording, (uint64_t)mtr_tracer_active(), __ATOMIC_RELEASE);
    __atomic_store_n(&ctl.chan->magic, MT_CTL_CHANNEL_MAGIC, __ATOMIC_RELEASE);
    return 0;
}

/* The channel's descriptor is still there, ours (checked every second). */
static int channel_intact(void)
{
    struct stat st;
    return fstat(ctl.chan_fd, &st) == 0 && st.st_dev == ctl.chan_dev && st.st_ino == ctl.chan_ino;
}

/* 0, or MT_CTL_* + 1: set by the handler (a lock-free atomic store is
 * async-signal-safe), taken by the control thread. */
static int request_pending;
_Static_assert(__atomic_always_lock_free(sizeof(int), 0), "a lock-free int for the handler");
int mtr_exiting MT_HIDDEN;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    int req = MT_CTL_TOGGLE;
    if (si && si->si_code == SI_QUEUE &&
        (si->si_value.sival_int == MT_CTL_START || si->si_value.sival_int == MT_CTL_STOP))
        req = si->si_value.sival_int;
    __atomic_store_n(&request_pending, req + 1, __ATOMIC_RELEASE);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A recording on request: FILE-NNNN, created new (a number whose file
 * exists, an earlier run's, is skipped: never truncated); without periods,
 * FILE itself. */
static int begin_period(void)
{
    char file[PATH_MAX];
    if (!ctl.periods) {
        snprintf(file, sizeof file, "%s", ctl.base);
        return mtr_tracer_begin(&ctl.conf, file, ctl.first, 0);
    }
    for (int tries = 0; tries < 100000; tries++) {
        ctl.period++;
        mt_runname n = { .period = ctl.period };
        mt_runname_make(file, sizeof file, ctl.base, &n);
        int rc = mtr_tracer_begin(&ctl.conf, file, ctl.first, 1);
        if (rc != -2)
            return rc;
    }
    mtr_tracer_message("%s: cannot create trace: every number up to it is taken", file);
    return -1;
}

static int handler_in_place(void)
{
    struct sigaction cur;
    if (sigaction(ctl.sig, NULL, &cur) != 0)
        return 1;
    return (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_signal;
}

static void *control_thread(void *arg)
{
    (void)arg;
    mtr_enter();   /* for good: nothing this thread allocates is sampled */
    mtr_leaks_own_thread();
    int64_t started = mtr_tracer_active() ? now_ms() : -1;
    int64_t checked = now_ms();
    for (;;) {
        struct timespec ts = { 0, POLL_MS * 1000 * 1000 };
        nanosleep(&ts, NULL);
        if (__atomic_load_n(&mtr_exiting, __ATOMIC_ACQUIRE) || ctl.pid != getpid())
            return NULL;
        int active = mtr_tracer_active();
        if (!active)
            started = -1;
        int want = active;
        int req = __atomic_exchange_n(&request_pending, 0, __ATOMIC_ACQ_REL);
        if (req) {
            req--;
            want = req == MT_CTL_START ? 1 : req == MT_CTL_STOP ? 0 : !active;
        }
        uint64_t took = 0;   /* a request of the channel, acknowledged below */
        int scan = 0;
        if (ctl.chan) {
            uint64_t r = __atomic_load_n(&ctl.chan->request, __ATOMIC_ACQUIRE);
            if (r >> 8 != ctl.chan_seen) {
                took = ctl.chan_seen = r >> 8;
                if ((r & 0xff) == MT_CTL_START)
                    want = 1;
                else if ((r & 0xff) == MT_CTL_STOP)
                    want = 0;
                else if ((r & 0xff) == MT_CTL_SCAN)
                    scan = 1;
            }
        }
        int64_t t = now_ms();
        if (active && ctl.duration_ms && started >= 0 && t - started >= ctl.duration_ms)
            want = 0;
        if (want && !active) {
            if (begin_period() == 0)
                started = now_ms();
        } else if (!want && active) {
            memtrace_stop_tracing();
            started = -1;
        }
        if (scan) {   /* leak verdicts, now; or why not */
            if (mtr_tracer_active() && mtr_tracer_scan_now() == 0) {
                __atomic_store_n(&ctl.chan->scanned, took, __ATOMIC_RELEASE);
            } else {
                const char *why = mtr_tracer_active() ? mtr_leaks_why() : "";
                snprintf(ctl.chan->why_unscanned, sizeof ctl.chan->why_unscanned, "%s",
                         *why ? why : "the recording stopped before the scan");
                __atomic_store_n(&ctl.chan->unscanned, took, __ATOMIC_RELEASE);
            }
        }
        if (ctl.chan) {
            __atomic_store_n(&ctl.chan->recording, (uint64_t)mtr_tracer_active(), __ATOMIC_RELEASE);
            if (took)
                __atomic_store_n(&ctl.chan->done, took, __ATOMIC_RELEASE);
        }
        if (t - checked >= CHECK_HANDLER_MS) {
            checked = t;
            if (ctl.sig && !ctl.warned_handler && !handler_in_place()) {
                ctl.warned_handler = 1;
                mtr_tracer_message("the program replaced the handler of signal %d: a plain "
                                   "kill no longer switches recording ('memtrace ctl' still "
                                   "does, through its own channel)", ctl.sig);
            }
            if (ctl.chan && !channel_intact() && channel_open() != 0)
                mtr_tracer_message("the program closed the control channel and no new "
                                   "one can be made: 'memtrace ctl' cannot reach this process");
        }
        if (!ctl.sig && !mtr_tracer_active())
            return NULL;   /* a time limit only: nothing more to do */
    }
}

static int start_control_thread(void)
{
    /* detached; the thread takes no signals. The leak scan counts it as
     * the recorder's own thread (not stopped, not a root) from now on. */
    mtr_leaks_own_thread_coming(1);
    int rc = mt_thread_start(NULL, control_thread, NULL);
    if (rc != 0)
        mtr_leaks_own_thread_coming(-1);
    return rc == 0 ? 0 : -1;
}

int mtr_control_setup(const mt_recconf *c, int first)
{
    const char *file = c->file;
    const char *p = secure_getenv("MEMTRACE_PAUSED");
    const char *s = secure_getenv("MEMTRACE_SIGNAL");
    const char *d = secure_getenv("MEMTRACE_DURATION");
    if (ctl.enabled && ctl.pid == getpid())
        return 2;   /* a linked-in program asking again */
    memset(&ctl, 0, sizeof ctl);
    ctl.chan_fd = -1;
    if (p && *p) {
        if (strcmp(p, "0") && strcmp(p, "1")) {
            mtr_tracer_message("MEMTRACE_PAUSED=%s: expected 1 (start dormant) or 0", p);
            return -1;
        }
        ctl.paused = p[0] == '1';
    }
    if (s && *s) {
        ctl.sig = mt_ctl_signal_number(s);
        if (!ctl.sig) {
            mtr_tracer_message("MEMTRACE_SIGNAL=%s: expected USR1, USR2, HUP, PROF, URG, "
                               "WINCH, PWR, VTALRM, TTIN, TTOU, RTMIN+N or their number", s);
            return -1;
        }
    } else if (ctl.paused) {
        ctl.sig = MT_CTL_DEFAULT_SIGNAL;
    }
    if (d && *d) {
        ctl.duration_ms = mt_ctl_time_ms_at_least(d, 1);
        if (ctl.duration_ms < 0) {
            mtr_tracer_message("MEMTRACE_DURATION=%s: expected a time such as 90s, 10m, 1h", d);
            return -1;
        }
    }
    if (!ctl.sig && !ctl.duration_ms)
        return 0;
    char cwd[PATH_MAX];
    int rel = file[0] != '/' && getcwd(cwd, sizeof cwd) != NULL;
    if ((rel ? strlen(cwd) + 1 : 0) + strlen(file) >= sizeof ctl.base) {
        mtr_tracer_message("trace file name too long");
        return -1;
    }
    size_t at = 0;
    if (rel) {
        at = strlen(cwd);
        memcpy(ctl.base, cwd, at);
        if (strcmp(cwd, "/"))
            ctl.base[at++] = '/';
    }
    memcpy(ctl.base + at, file, strlen(file) + 1);
    if (ctl.sig) {
        struct sigaction cur, sa;
        sigaction(ctl.sig, NULL, &cur);
        int theirs = (cur.sa_flags & SA_SIGINFO) ? cur.sa_sigaction != on_signal
                                                 : cur.sa_handler != SIG_DFL &&
                                                   cur.sa_handler != SIG_IGN;
        if (theirs) {
            mtr_tracer_message("MEMTRACE_SIGNAL: the program already handles signal %d; "
                               "choose another (not started)", ctl.sig);
            return -1;
        }
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(ctl.sig, &sa, NULL);
        ctl.periods = 1;
        if (channel_open() != 0)
            mtr_tracer_message("cannot make the control channel (%s): 'memtrace ctl' cannot "
                               "reach this process; a kill -%d still toggles recording",
                               strerror(errno), ctl.sig);
    }
    ctl.conf = *c;
    ctl.conf.file = ctl.base;
    ctl.first = first;
    ctl.pid = getpid();
    ctl.enabled = 1;
    return 1;
}

int mtr_control_run(void)
{
    if (!ctl.enabled)
        return 0;
    if (!ctl.paused && begin_period() != 0 && !ctl.sig)
        return -1;
    if (start_control_thread() != 0) {
        mtr_tracer_message("cannot start the control thread; no on/off control");
        return ctl.paused ? -1 : 0;
    }
    return 0;
}

void mtr_control_fork_child(int follow)
{
    if (!ctl.enabled)
        return;
    __atomic_store_n(&request_pending, 0, __ATOMIC_RELAXED);
    if (!follow || __atomic_load_n(&mtr_exiting, __ATOMIC_ACQUIRE)) {
        /* not switched at all: the parent's channel, shared, must not be
         * reachable by this pid either */
        if (ctl.chan) {
            if (channel_intact())
                close(ctl.chan_fd);
            munmap(ctl.chan, MT_CTL_CHANNEL_SIZE);
            ctl.chan = NULL;
        }
        ctl.enabled = 0;
        return;
    }
    /* This process is switched by its own pid; its recordings are
     * FILE-NNNN.<pid>. glibc has reset its thread and loader locks in the
     * child before the atfork handlers run, so a thread may be started. */
    ctl.pid = getpid();
    ctl.first = 0;
    ctl.warned_handler = 0;
    /* the parent's channel is shared with it: a channel of its own */
    if (ctl.chan && channel_open() != 0)
        ctl.chan = NULL;
    if (start_control_thread() != 0)
        ctl.enabled = 0;
}

const char *mtr_control_base(void)
{
    return ctl.enabled ? ctl.base : NULL;
}
