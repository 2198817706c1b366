/*
 * fatal.c - what was sampled before a fatal signal reaches the trace.
 *
 * A program that dies of SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT gets no
 * exit handler: without this, the events queued since the writer's last
 * flush (up to MEMTRACE_FLUSH_MS, all of a short program's) are lost.
 *
 * When tracing starts, a handler is installed for each of those signals
 * whose disposition is still the default (SIG_DFL); a signal the program
 * handles or ignores is left alone, and a handler the program installs
 * later simply replaces ours. The handler changes nothing else: it asks the
 * writer thread to drain the queue and write it out (tracer_write.c,
 * mtr_tracer_fatal_flush: atomics, a futex wake and nanosleep only,
 * async-signal-safe),
 * waits for that at most FATAL_WAIT_MS, then restores SIG_DFL and raises
 * the signal again, so the process dies of the same signal, with the same
 * status and core dump, as it would have without the recorder.
 *
 * No flush is attempted when it could not be done safely: a signal taken
 * in the recorder's own code (its locks may be held), no writer thread, a
 * process that is not the one tracing. If the writer itself faults while
 * flushing, its thread waits there for the thread that took the first
 * signal to end the process with that signal.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fatal.h"
#include "sigsave.h"
#include "thread.h"
#include "tracer.h"

#define FATAL_WAIT_MS 3000

static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])
static struct mtr_sigsave saved[NFATAL];   /* each signal's disposition before ours */
static int ours[NFATAL];                     /* ours was installed */
static int installed;
static int first_sig;   /* the signal being flushed for, 0 if none */

static void nap_forever(void)
{
    for (;;) {
        struct timespec ts = { 1, 0 };
        nanosleep(&ts, NULL);
    }
}

static void die_of(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    /* Blocked while we run: delivered, with the default action, when the
     * handler returns (a fault re-executes its instruction and faults
     * again: the same either way). */
    raise(sig);
}

static void on_fatal(int sig)
{
    int saved = errno;
    int none = 0;
    if (mtr_tls.busy > 0) {
        /* In the recorder's code: its locks may be held, no flush. If a
         * flush is under way (this is the writer faulting during it), the
         * thread that asked for it ends the process. */
        if (__atomic_load_n(&first_sig, __ATOMIC_ACQUIRE) != 0)
            nap_forever();
    } else if (__atomic_compare_exchange_n(&first_sig, &none, sig, 0, __ATOMIC_ACQ_REL,
                                           __ATOMIC_ACQUIRE)) {
        mtr_tracer_fatal_flush(FATAL_WAIT_MS);
    } else {
        /* Another thread took a fatal signal first and is flushing: it ends
         * the process; if it does not in time, this one does. */
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        for (int i = 0; i < FATAL_WAIT_MS / 10 + 100; i++)
            nanosleep(&ts, NULL);
    }
    die_of(sig);
    errno = saved;
}

/* tracer.c, when a recording starts (idempotent). */
void mtr_fatal_install(void)
{
    if (__atomic_exchange_n(&installed, 1, __ATOMIC_ACQ_REL))
        return;
    for (size_t i = 0; i < NFATAL; i++) {
        struct sigaction old, sa;
        ours[i] = 0;
        if (sigaction(fatal_signals[i], NULL, &old) != 0 ||
            mtr_sig_save(fatal_signals[i], &saved[i]) != 0)
            continue;
        if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
            continue;   /* the program's own handling (or SIG_IGN) */
        ours[i] = 1;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal;
        sigemptyset(&sa.sa_mask);
        /* SA_ONSTACK: a stack overflow is handled on the program's
         * alternate stack if it has one (without one, the kernel applies
         * the default action: as without us). */
        sa.sa_flags = SA_ONSTACK | SA_RESTART;
        sigaction(fatal_signals[i], &sa, NULL);
    }
}

/* attach.c, when an attached recording ends: the process is left with the
 * dispositions it had, exactly (flags and all: sigsave.h), where the
 * handler is still ours. */
void mtr_fatal_remove(void)
{
    if (!__atomic_exchange_n(&installed, 0, __ATOMIC_ACQ_REL))
        return;
    for (size_t i = 0; i < NFATAL; i++) {
        struct sigaction old;
        if (!ours[i] || sigaction(fatal_signals[i], NULL, &old) != 0 ||
            (old.sa_flags & SA_SIGINFO) || old.sa_handler != on_fatal)
            continue;
        mtr_sig_restore(fatal_signals[i], &saved[i]);
        ours[i] = 0;
    }
}
