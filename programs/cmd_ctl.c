/*
 * cmd_ctl.c - 'memtrace ctl PID start|stop|status|scan': switches the
 * recorder of a running process on and off, or has it scan for leaks now.
 * The process must have been started for control ('memtrace run
 * --paused', MEMTRACE_PAUSED=1 or MEMTRACE_SIGNAL);
 * the request is written into the recorder's control channel, a memfd
 * found among /proc/PID/fd and mapped here (lib/common/control_proto.h).
 * The process is never signalled: a signal would run whatever handler the
 * program installed for it (SigCgt cannot tell whose), and a process
 * without the recorder has no channel to write into. Whether a recording
 * is under way is read from /proc/PID/fd: an open FILE-NNNN.
 *
 * The channel is never opened again by the name /proc/PID/fd/N, which the
 * process could point at any file between our look and the open (as root,
 * a root file opened read-write): its descriptor is taken with
 * pidfd_getfd (the very open file the process holds) and used only if it
 * is a memfd open read-write. Names the process chose (its trace's) are
 * printed escaped.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "control_proto.h"
#include "commands.h"
#include "units.h"
#include "memtrace/present.h"
#include "../lib/inject/proc_trace.h"
#include "ctl_push.h"

#ifndef F_GET_SEALS
#define F_GET_SEALS 1034
#endif

static const char ctl_head[] =
    "usage: memtrace ctl [--signal SIG] [--wait TIME] PID start|stop|status|scan\n"
    "       memtrace ctl --push URL [--push-every T] [--push-format F]\n"
    "                    [--label K=V]... [--push-tenant ID] [--push-auth-file FILE]\n"
    "                    PID start\n"
    "\n"
    "Switch the recorder of a running process on and off. The process must\n"
    "have been started for it: 'memtrace run --paused' (or MEMTRACE_PAUSED=1),\n"
    "or with MEMTRACE_SIGNAL set. Each start opens a new trace, FILE-0001,\n"
    "FILE-0002, ...; each stop completes it.\n"
    "\n"
    "  start               start a recording (nothing to do if one is under way)\n"
    "  stop                end the recording under way\n"
    "  status              say whether the process is recording, and where\n"
    "  scan                leak verdicts for the sampled blocks live now (lost:\n"
    "                      nothing reachable points to them, or reachable), into\n"
    "                      TRACE.leaks beside the recording's trace; the program\n"
    "                      is paused for the scan alone, with ptrace (docs/leaks.md)\n";

static const char ctl_tail[] =
    "\n"
    "Exit status: 0 done (or already so), 1 the process cannot be controlled or\n"
    "did not react in time, 2 usage.\n"
    "\n"
    "Example: memtrace run --paused -o svc.ctf -- ./svc &   (prints PID)\n"
    "         memtrace ctl PID start; sleep 60; memtrace ctl PID stop\n"
    "         memtrace top svc.ctf-0001\n";

#define CTL_STATUS (-1)   /* the action that sends no request */

/* What the command line asks for. */
typedef struct ctl_args {
    const char *signame;   /* --signal (checked, otherwise unused) */
    double wait_s;         /* --wait; 0: send and return */
    run_push_opts push;
    long pid;
    const char *action;
    int req;               /* MT_CTL_START, _STOP, _SCAN or CTL_STATUS */
} ctl_args;

static int take_signal(void *ctx, const char *arg, const char *opt)
{
    if (!mt_ctl_signal_number(arg)) {
        fprintf(stderr, "memtrace ctl: %s %s: not a signal the recorder can use (USR1, USR2, "
                        "RTMIN+N, ...)\n", opt, arg);
        return 2;
    }
    *(const char **)ctx = arg;
    return 0;
}

/* PID ACTION after the options: 2 after the message, or 0. */
static int ctl_operands(ctl_args *a, int n, char **w)
{
    if (n > 2) {
        /* say which: a second PID, a second action, an option after them */
        fprintf(stderr, "memtrace ctl: unexpected argument '%s' after '%s %s' (one process, "
                        "one action; options come first)\n", w[2], w[0], w[1]);
        return opt_usage("ctl");
    }
    if (n < 2) {
        fprintf(stderr, "memtrace ctl: expected %s (start, stop, status or scan)\n",
                n == 0 ? "a process id and an action" : "an action after the process id");
        return opt_usage("ctl");
    }
    char *end;
    a->pid = strtol(w[0], &end, 10);
    if (*end || a->pid <= 0 || a->pid > INT_MAX) {
        fprintf(stderr, "memtrace ctl: '%s' is not a process id\n", w[0]);
        return 2;
    }
    a->action = w[1];
    a->req = !strcmp(a->action, "start") ? MT_CTL_START : !strcmp(a->action, "stop") ? MT_CTL_STOP
           : !strcmp(a->action, "scan") ? MT_CTL_SCAN : !strcmp(a->action, "status") ? CTL_STATUS
           : -2;
    if (a->req == -2) {
        fprintf(stderr, "memtrace ctl: unknown action '%s' (start, stop, status or scan)\n",
                a->action);
        return 2;
    }
    const run_push_opts *p = &a->push;
    if (a->req != MT_CTL_START && (p->url || p->every_s || p->format || p->tenant ||
                                   p->auth_file || p->n_labels)) {
        fprintf(stderr, "memtrace ctl: the push options go with start only\n");
        return 2;
    }
    return 0;
}

/* Reads the command line into a: -1 to go on, else the exit status. */
static int ctl_parse(int argc, char **argv, ctl_args *a)
{
    const opt_spec opts[] = {
        OPT("signal", 's', OPT_CALL, NULL, "SIG",
            "accepted for compatibility, not used: requests go\n"
            "through the recorder's control channel, never as a\n"
            "signal (a plain kill -SIG toggles recording)",
            .fn = take_signal, .ctx = &a->signame),
        OPT("wait", 'w', OPT_SECONDS, &a->wait_s, "TIME",
            "wait at most this long for the change (default 5s; 0:\nsend and return)",
            .hi = 3600),
        OPT("push", 0, OPT_CALL, NULL, "URL",
            "with start: stay, and send a heap profile of the\n"
            "recording every --push-every and at its end to\n"
            "Pyroscope, Parca or an OTLP collector, until the\n"
            "recording ends ('ctl PID stop', the process's end);\n"
            "Ctrl-C or SIGTERM here stops it (docs/fleet.md);\n"
            "--push-every T, --push-format F, --label K=V,\n"
            "--push-tenant ID, --push-auth-file FILE: as for\n'memtrace run --push'",
            .fn = run_push_take, .ctx = &a->push),
        RUN_PUSH_MORE_OPTS(&a->push),
    };
    const opt_command cmd = {"ctl", ctl_head, ctl_tail, 22, opts, sizeof opts / sizeof opts[0]};
    int first, rc = opt_parse_first(&cmd, argc, argv, &first);
    if (rc >= 0)
        return rc;
    return ctl_operands(a, argc - first, argv + first) ? 2 : -1;
}

struct channel_query {
    mt_ctl_channel *ch;
    const char *why;
    int pidfd;
};

static int try_channel(const char *fd_path, const char *link, void *ctx)
{
    struct channel_query *q = ctx;
    if (strcmp(link, MT_CTL_CHANNEL_LINK) != 0)
        return 0;
    const char *num = strrchr(fd_path, '/');
    int fd = q->pidfd < 0 ? -1
                           : (int)syscall(SYS_pidfd_getfd, q->pidfd, atoi(num ? num + 1 : fd_path), 0);
    if (fd < 0 && (q->pidfd < 0 || errno == EPERM || errno == ENOSYS) && geteuid() != 0)
        /* pidfd_getfd needs the right to ptrace (Yama may refuse it to the
         * same user) and Linux 5.6: a user not root opens the channel by
         * name, which opens nothing that user could not open anyway. */
        fd = open(fd_path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        q->why = errno == EACCES || errno == EPERM ? "its control channel cannot be opened "
                                                     "(another user's process?)"
                                                   : "its control channel cannot be opened";
        return 0;
    }
    void *m = MAP_FAILED;
    int acc = fcntl(fd, F_GETFL);
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= MT_CTL_CHANNEL_SIZE &&
        fcntl(fd, F_GET_SEALS) >= 0 && acc >= 0 && (acc & O_ACCMODE) == O_RDWR)
        m = mmap(NULL, MT_CTL_CHANNEL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return 0;
    if (__atomic_load_n(&((mt_ctl_channel *)m)->magic, __ATOMIC_ACQUIRE) != MT_CTL_CHANNEL_MAGIC) {
        munmap(m, MT_CTL_CHANNEL_SIZE);
        return 0;
    }
    q->ch = m;
    return 1;
}

/* The recorder's control channel in process pid, mapped here: found among
 * /proc/PID/fd by its link, opened there (the process's owner or root
 * only, as for kill), checked (size, magic). NULL with *why set when there
 * is none or it cannot be opened. */
static mt_ctl_channel *open_channel(long pid, const char **why)
{
    struct channel_query q = { NULL, "it has no control channel: its recorder is not loaded "
                                     "or set up no control (see its stderr)", -1 };
    q.pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    if (q.pidfd < 0 && (errno != ENOSYS || geteuid() == 0)) {
        *why = errno == ESRCH ? "no such process"
               : errno == ENOSYS ? "this kernel has no pidfd_open (root needs Linux 5.6 or "
                                   "later to control a process safely)" : strerror(errno);
        return NULL;
    }
    if (proc_fd_each((int)pid, try_channel, &q) < 0) {
        *why = errno == EACCES ? "its descriptors cannot be read (another user's process?)"
                               : strerror(errno);
        if (q.pidfd >= 0)
            close(q.pidfd);
        return NULL;
    }
    /* The process the pidfd names still runs: the descriptors read were
     * its own, not those of another process that took its PID. */
    struct pollfd pf = { q.pidfd, POLLIN, 0 };
    if (q.ch && q.pidfd >= 0 && poll(&pf, 1, 0) != 0) {
        munmap(q.ch, MT_CTL_CHANNEL_SIZE);
        q.ch = NULL;
        q.why = "it has exited";
    }
    if (q.pidfd >= 0)
        close(q.pidfd);
    *why = q.why;
    return q.ch;
}

/* Writes request req (MT_CTL_START or MT_CTL_STOP) with the next sequence
 * number; returns that number. */
static uint64_t send_request(mt_ctl_channel *ch, int req)
{
    uint64_t cur = __atomic_load_n(&ch->request, __ATOMIC_ACQUIRE), next;
    do {
        uint64_t seq = cur >> 8, done = __atomic_load_n(&ch->done, __ATOMIC_ACQUIRE);
        next = ((seq > done ? seq : done) + 1) << 8 | (uint64_t)req;
    } while (!__atomic_compare_exchange_n(&ch->request, &cur, next, 0, __ATOMIC_ACQ_REL,
                                          __ATOMIC_ACQUIRE));
    return next >> 8;
}

/* proc_open_trace, its name escaped for the terminal (the process's
 * choice of bytes). */
static int open_trace_shown(long pid, const char *base, char *out, size_t cap)
{
    char raw[PATH_MAX];
    int on = proc_open_trace((int)pid, base, raw, sizeof raw);
    if (on)
        mt_text_escape(out, cap, raw);
    return on;
}

/* ctl --push: a signal ends the recording it pushes (the channel opened
 * now if the recording was under way already) */
struct ctl_stopper {
    long pid;
    mt_ctl_channel *ch;
};

static void stop_recording(void *ctx)
{
    struct ctl_stopper *st = ctx;
    const char *why = NULL;
    if (!st->ch)
        st->ch = open_channel(st->pid, &why);
    if (st->ch)
        send_request(st->ch, MT_CTL_STOP);
    else
        fprintf(stderr, "memtrace ctl: process %ld: %s; the recording goes on\n", st->pid, why);
}

/* What the process's environment says of its recorder (the caller frees
 * the three); 0, or after the message: -1 no environment to read, 1 the
 * process cannot be controlled. */
typedef struct ctl_env {
    char *file, *esig, *paused;   /* MEMTRACE, MEMTRACE_SIGNAL, MEMTRACE_PAUSED */
} ctl_env;

static int ctl_read_env(const ctl_args *a, ctl_env *e)
{
    char path[64];
    size_t len;
    snprintf(path, sizeof path, "/proc/%ld/environ", a->pid);
    char *env = proc_read_file(path, &len);
    if (!env) {
        fprintf(stderr, "memtrace ctl: process %ld: %s\n", a->pid,
                errno == ENOENT ? "no such process" : strerror(errno));
        return -1;
    }
    e->file = proc_environ_value(env, len, "MEMTRACE");
    e->esig = proc_environ_value(env, len, "MEMTRACE_SIGNAL");
    e->paused = proc_environ_value(env, len, "MEMTRACE_PAUSED");
    free(env);
    if (!e->file || !*e->file) {
        fprintf(stderr, "memtrace ctl: process %ld was not started with the recorder (no "
                        "MEMTRACE in its environment)\n", a->pid);
        return 1;
    }
    if (!a->signame && !(e->esig && *e->esig) && !(e->paused && !strcmp(e->paused, "1")) &&
        a->req != CTL_STATUS) {
        fprintf(stderr, "memtrace ctl: process %ld was not started for control: run it "
                        "with 'memtrace run --paused' or MEMTRACE_SIGNAL\n", a->pid);
        return 1;
    }
    return 0;
}

/* 'ctl PID status': the recording under way and the pusher's counts. */
static int ctl_status(long pid, const char *file, int on, const char *cur)
{
    if (on)
        printf("%ld: recording into %s\n", pid, cur);
    else
        printf("%ld: dormant\n", pid);
    char pushing[4096];   /* a memtrace process pushing profiles of it: its counts */
    run_push_status_read(file, pushing, sizeof pushing);
    if (pushing[0])
        printf("%ld: %s\n", pid, pushing);
    return 0;
}

/* The scan request seq was acted on: its verdicts, or why there are none.
 * The exit status. */
static int say_scanned(const mt_ctl_channel *ch, uint64_t seq, long pid, const char *was)
{
    if (__atomic_load_n(&ch->scanned, __ATOMIC_ACQUIRE) == seq) {
        printf("%ld: scanned; verdicts in %s.leaks\n", pid, was);
        return 0;
    }
    /* the recorder's line, printable ASCII only (the process may not be ours) */
    char why[sizeof ch->why_unscanned];
    int said = __atomic_load_n(&ch->unscanned, __ATOMIC_ACQUIRE) == seq;
    memcpy(why, said ? ch->why_unscanned : "", said ? sizeof why : 1);
    why[sizeof why - 1] = 0;
    for (char *c = why; *c; c++)
        if (*c < 0x20 || *c > 0x7e)
            *c = '?';
    fprintf(stderr, "memtrace ctl: process %ld: the scan gave no verdicts: %s\n", pid,
            said && *why ? why : "its recorder did not say why");
    return 1;
}

/* Waits (at most --wait) until the process has done request seq, it
 * ended, or time is up; was: the trace under way when it was sent. The
 * exit status. */
static int ctl_wait(const ctl_args *a, mt_ctl_channel *ch, uint64_t seq, const char *file,
                    const char *was)
{
    long pid = a->pid;
    char cur[PATH_MAX * 4];
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int on = open_trace_shown(pid, file, cur, sizeof cur);
        int acted = __atomic_load_n(&ch->done, __ATOMIC_ACQUIRE) >= seq;
        if (a->req == MT_CTL_SCAN && acted)
            return say_scanned(ch, seq, pid, was);
        if (a->req != MT_CTL_SCAN && (a->req == MT_CTL_START) == on) {
            if (on)
                printf("%ld: recording into %s\n", pid, cur);
            else
                printf("%ld: stopped; %s is complete\n", pid, was);
            return 0;
        }
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
            fprintf(stderr, "memtrace ctl: process %ld ended\n", pid);
            return 1;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9 > a->wait_s) {
            fprintf(stderr, "memtrace ctl: process %ld did not %s within %gs (%s; see its "
                            "stderr)\n", pid, a->req == MT_CTL_START ? "start recording"
                            : a->req == MT_CTL_SCAN ? "scan" : "stop",
                    a->wait_s, acted ? "its recorder took the request" : "its recorder did not "
                    "take the request");
            return 1;
        }
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

/* Does what a asks of the process with environment e: the exit status;
 * *ch: the channel, when it was opened. */
static int ctl_act(const ctl_args *a, const ctl_env *e, mt_ctl_channel **ch)
{
    long pid = a->pid;
    char cur[PATH_MAX * 4];
    int on = open_trace_shown(pid, e->file, cur, sizeof cur);
    if (a->req == CTL_STATUS)
        return ctl_status(pid, e->file, on, cur);
    if (a->req == MT_CTL_SCAN && !on) {
        fprintf(stderr, "memtrace ctl: process %ld is dormant: no recording to scan (start one "
                        "first)\n", pid);
        return 1;
    }
    if (a->req != MT_CTL_SCAN && (a->req == MT_CTL_START) == on) {
        if (on)
            printf("%ld: already recording into %s\n", pid, cur);
        else
            printf("%ld: already dormant\n", pid);
        return 0;   /* (pushes the recording under way with --push) */
    }
    /* never a signal: the recorder's own channel, which the program cannot
     * see (a process without the recorder has none: nothing is sent) */
    const char *why = NULL;
    *ch = open_channel(pid, &why);
    if (!*ch) {
        fprintf(stderr, "memtrace ctl: process %ld: %s; nothing sent\n", pid, why);
        return 1;
    }
    uint64_t seq = send_request(*ch, a->req);
    if (a->wait_s == 0) {
        printf("%ld: %s sent\n", pid, a->action);
        return 0;
    }
    return ctl_wait(a, *ch, seq, e->file, cur);
}

int cmd_ctl(int argc, char **argv)
{
    ctl_args a = {.wait_s = 5, .push = {.cmd = "ctl"}};
    int rc = ctl_parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    /* the sender starts first: its errors stop here, nothing sent */
    int push_bad;
    run_push *push = run_push_begin(&a.push, "ctl", &push_bad);
    if (push_bad)
        return 2;
    ctl_env e = {NULL, NULL, NULL};
    mt_ctl_channel *ch = NULL;
    if ((rc = ctl_read_env(&a, &e)) < 0)
        return 1;
    if (rc == 0)
        rc = ctl_act(&a, &e, &ch);
    if (push && rc == 0) {
        fflush(stdout);
        struct ctl_stopper st = { a.pid, ch };
        run_push_status_at(push, e.file);
        ctl_push_follow(a.pid, e.file, push, stop_recording, &st, a.wait_s > 0 ? a.wait_s : 5);
        ch = st.ch;
    } else if (push) {
        run_push_end(push, "ctl");
    }
    if (ch)
        munmap(ch, MT_CTL_CHANNEL_SIZE);
    free(e.file);
    free(e.esig);
    free(e.paused);
    return rc;
}
