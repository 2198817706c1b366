/*
 * ctl_push.c - the waiting loop of 'memtrace ctl --push URL PID start':
 * profiles of the recording under way, taken by run_snapshots.c's
 * mechanism from the trace the process has open (read as a regular file
 * of the process's user, never through a link), pushed by run_push.c,
 * until the recording ends; a signal to this command ends the recording.
 */
#include "ctl_push.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../lib/inject/proc_trace.h"
#include "run_snapshots.h"

static volatile sig_atomic_t signalled;

static void on_signal(int sig)
{
    (void)sig;
    signalled = 1;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The trace the process has open (proc_open_trace), looked at twice 50 ms
 * apart before the recording is taken for ended: a recorder older than
 * this one closed a piece of a rotated recording before it opened the next. */
static int open_still(int pid, const char *base, char *cur, size_t cap)
{
    if (proc_open_trace(pid, base, cur, cap))
        return 1;
    struct timespec ts = { 0, 50 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    return proc_open_trace(pid, base, cur, cap);
}

void ctl_push_follow(long pid, const char *base, run_push *push, void (*stop)(void *ctx),
                     void *ctx, double wait_s)
{
    run_on_stop_signals(on_signal);

    char proc[64], comm[64] = "", cur[PATH_MAX];
    struct stat st;
    snprintf(proc, sizeof proc, "/proc/%ld", pid);
    uid_t owner = stat(proc, &st) == 0 ? st.st_uid : (uid_t)-1;
    snprintf(proc, sizeof proc, "/proc/%ld/comm", pid);
    FILE *f = fopen(proc, "re");
    if (f) {
        if (!fgets(comm, sizeof comm, f))
            comm[0] = '\0';
        fclose(f);
    }
    comm[strcspn(comm, "\n")] = '\0';
    for (char *c = comm; *c; c++)   /* the process's choice of bytes */
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '-' || *c == '_') || (c == comm && *c == '.'))
            *c = '_';
    run_snapshots s;
    run_snapshots_init(&s, "ctl", 0, NULL, push, comm[0] ? comm : "process");
    run_snapshots_checked(&s, owner);
    fprintf(stderr, "memtrace ctl: pushing profiles of %ld every %gs; Ctrl-C or SIGTERM ends "
                    "the recording\n", pid, run_push_every(push));
    /* (after 'ctl --wait 0 start', the recording may not be open yet) */
    double t0 = mono_s();
    while (!signalled && !proc_open_trace((int)pid, base, cur, sizeof cur) &&
           mono_s() - t0 < wait_s) {
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    char seen[PATH_MAX] = "";
    while (!signalled && open_still((int)pid, base, cur, sizeof cur)) {
        snprintf(seen, sizeof seen, "%s", cur);
        if (run_snapshots_due(&s))
            run_snapshots_follow(&s, base, cur, NULL, (int)pid);
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    if (signalled) {
        stop(ctx);
        t0 = mono_s();
        while (proc_open_trace((int)pid, base, cur, sizeof cur) && mono_s() - t0 < wait_s) {
            struct timespec ts = { 0, 20 * 1000 * 1000 };
            nanosleep(&ts, NULL);
        }
    }
    run_snapshots_end(&s, base, seen, (int)pid);
    run_push_end(push, "ctl");
}
