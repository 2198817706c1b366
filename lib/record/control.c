/*
 * control.c - switching the recorder on and off while the program runs:
 * a dormant start (MEMTRACE_PAUSED=1: interposed, not sampling), on/off
 * requests by a signal (MEMTRACE_SIGNAL, default USR2; sent by 'memtrace
 * ctl PID start|stop') and a time limit per recording (MEMTRACE_DURATION).
 *
 * The signal handler is installed only when the user asked for control
 * (MEMTRACE_PAUSED or MEMTRACE_SIGNAL set), with SA_RESTART, and never
 * over a handler the program already has. It only stores the request in a
 * flag. A control thread (all signals blocked, never sampled) looks at the
 * flag every 100 ms and starts or stops a recording with the tracer's
 * ordinary start and stop, so no tracing work ever runs in the handler.
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
#include <time.h>
#include <unistd.h>

#include "memtrace/record.h"
#include "control.h"
#include "control_proto.h"
#include "thread.h"

#define POLL_MS 100
#define CHECK_HANDLER_MS 1000

static struct {
    int enabled;          /* a control thread runs (or should) */
    int periods;          /* recordings are numbered FILE-NNNN */
    int paused;           /* start dormant */
    int sig;              /* 0: no signal control */
    long long duration_ms;   /* 0: no limit */
    char base[PATH_MAX - 80];   /* FILE, absolute */
    double rate;
    int first;            /* the first process of the tree */
    unsigned period;      /* number of the last period started */
    pid_t pid;            /* process the control thread belongs to */
    int warned_handler;
} ctl;

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
        return mtr_tracer_begin(file, ctl.rate, ctl.first, 0);
    }
    for (int tries = 0; tries < 100000; tries++) {
        ctl.period++;
        snprintf(file, sizeof file, "%s-%04u", ctl.base, ctl.period);
        int rc = mtr_tracer_begin(file, ctl.rate, ctl.first, 1);
        if (rc != -2)
            return rc;
    }
    mtr_tracer_message("%s-%04u: cannot create trace: every number up to it is taken",
                       ctl.base, ctl.period);
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
        if (ctl.sig && !ctl.warned_handler && t - checked >= CHECK_HANDLER_MS) {
            checked = t;
            if (!handler_in_place()) {
                ctl.warned_handler = 1;
                mtr_tracer_message("the program replaced the handler of signal %d: "
                                   "'memtrace ctl' cannot reach this process; choose "
                                   "another with MEMTRACE_SIGNAL", ctl.sig);
            }
        }
        if (!ctl.sig && !mtr_tracer_active())
            return NULL;   /* a time limit only: nothing more to do */
    }
}

static int start_control_thread(void)
{
    pthread_attr_t attr;
    pthread_t th;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);   /* the thread takes no signals */
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &attr, control_thread, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc == 0 ? 0 : -1;
}

int mtr_control_setup(const char *file, double rate, int first)
{
    const char *p = secure_getenv("MEMTRACE_PAUSED");
    const char *s = secure_getenv("MEMTRACE_SIGNAL");
    const char *d = secure_getenv("MEMTRACE_DURATION");
    if (ctl.enabled && ctl.pid == getpid())
        return 2;   /* a linked-in program asking again */
    memset(&ctl, 0, sizeof ctl);
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
        ctl.duration_ms = mt_ctl_duration_ms(d);
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
    }
    ctl.rate = rate;
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
        ctl.enabled = 0;
        return;
    }
    /* This process is switched by its own pid; its recordings are
     * FILE-NNNN.<pid>. glibc has reset its thread and loader locks in the
     * child before the atfork handlers run, so a thread may be started. */
    ctl.pid = getpid();
    ctl.first = 0;
    ctl.warned_handler = 0;
    if (start_control_thread() != 0)
        ctl.enabled = 0;
}

const char *mtr_control_base(void)
{
    return ctl.enabled ? ctl.base : NULL;
}
