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
#include <getopt.h>
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

static void usage(FILE *f)
{
    fprintf(f,
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
        "                      is paused for the scan alone, with ptrace (docs/leaks.md)\n"
        "  -s, --signal SIG    accepted for compatibility, not used: requests go\n"
        "                      through the recorder's control channel, never as a\n"
        "                      signal (a plain kill -SIG toggles recording)\n"
        "  -w, --wait TIME     wait at most this long for the change (default 5s; 0:\n"
        "                      send and return)\n"
        "      --push URL      with start: stay, and send a heap profile of the\n"
        "                      recording every --push-every and at its end to\n"
        "                      Pyroscope, Parca or an OTLP collector, until the\n"
        "                      recording ends ('ctl PID stop', the process's end);\n"
        "                      Ctrl-C or SIGTERM here stops it (docs/fleet.md)\n"
        "      --push-every T, --push-format F, --label K=V, --push-tenant ID,\n"
        "      --push-auth-file FILE  as for 'memtrace run --push'\n"
        "  -h, --help          this help\n"
        "\n"
        "Exit status: 0 done (or already so), 1 the process cannot be controlled or\n"
        "did not react in time, 2 usage.\n"
        "\n"
        "Example: memtrace run --paused -o svc.ctf -- ./svc &   (prints PID)\n"
        "         memtrace ctl PID start; sleep 60; memtrace ctl PID stop\n"
        "         memtrace top svc.ctf-0001\n");
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

int cmd_ctl(int argc, char **argv)
{
    static const struct option opts[] = {
        { "signal", required_argument, NULL, 's' },
        { "wait", required_argument, NULL, 'w' },
        RUN_PUSH_LONGOPTS,
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *signame = NULL;
    double wait_s = 5;
    run_push_opts push_opts = { 0 };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+s:w:h", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            signame = optarg;
            if (!mt_ctl_signal_number(optarg)) {
                fprintf(stderr, "memtrace ctl: --signal %s: not a signal the recorder can "
                                "use (USR1, USR2, RTMIN+N, ...)\n", optarg);
                return 2;
            }
            break;
        case 'w': {
            uint64_t us;
            if (mt_units_duration(optarg, MT_US_PER_S, &us) != MT_UNITS_OK ||
                us > 3600 * MT_US_PER_S) {
                fprintf(stderr, "memtrace ctl: --wait %s: expected a time from 0 to 1h "
                                "(a bare number: seconds)\n", optarg);
                return 2;
            }
            wait_s = (double)us / 1e6;
            break;
        }
        case 'h':
            usage(stdout);
            return 0;
        default: {
            int r = run_push_option(&push_opts, "ctl", c, optarg);
            if (r > 0)
                break;
            if (r == 0)
                usage(stderr);
            return 2;
        }
        }
    }
    if (argc - optind > 2) {
        /* say which: a second PID, a second action, an option after them */
        fprintf(stderr, "memtrace ctl: unexpected argument '%s' after '%s %s' (one process, "
                        "one action; options come first)\n"
                        "memtrace ctl: see 'memtrace ctl --help'\n",
                argv[optind + 2], argv[optind], argv[optind + 1]);
        return 2;
    }
    if (argc - optind < 2) {
        fprintf(stderr, "memtrace ctl: expected %s (start, stop, status or scan)\n"
                        "memtrace ctl: see 'memtrace ctl --help'\n",
                argc == optind ? "a process id and an action" : "an action after the process id");
        return 2;
    }
    char *end;
    long pid = strtol(argv[optind], &end, 10);
    if (*end || pid <= 0 || pid > INT_MAX) {
        fprintf(stderr, "memtrace ctl: '%s' is not a process id\n", argv[optind]);
        return 2;
    }
    const char *action = argv[optind + 1];
    int req = !strcmp(action, "start") ? MT_CTL_START : !strcmp(action, "stop") ? MT_CTL_STOP
            : !strcmp(action, "scan") ? MT_CTL_SCAN : !strcmp(action, "status") ? -1 : -2;
    if (req == -2) {
        fprintf(stderr, "memtrace ctl: unknown action '%s' (start, stop, status or scan)\n", action);
        return 2;
    }
    if (req != MT_CTL_START && (push_opts.url || push_opts.every_s || push_opts.format ||
                                push_opts.tenant || push_opts.auth_file || push_opts.n_labels)) {
        fprintf(stderr, "memtrace ctl: the push options go with start only\n");
        return 2;
    }
    /* the sender starts first: its errors stop here, nothing sent */
    int push_bad;
    run_push *push = run_push_begin(&push_opts, "ctl", &push_bad);
    if (push_bad)
        return 2;

    char path[64];
    size_t len;
    snprintf(path, sizeof path, "/proc/%ld/environ", pid);
    char *env = proc_read_file(path, &len);
    if (!env) {
        fprintf(stderr, "memtrace ctl: process %ld: %s\n", pid,
                errno == ENOENT ? "no such process" : strerror(errno));
        return 1;
    }
    char *file = proc_environ_value(env, len, "MEMTRACE");
    char *esig = proc_environ_value(env, len, "MEMTRACE_SIGNAL");
    char *paused = proc_environ_value(env, len, "MEMTRACE_PAUSED");
    free(env);
    int rc = 1;
    mt_ctl_channel *ch = NULL;
    if (!file || !*file) {
        fprintf(stderr, "memtrace ctl: process %ld was not started with the recorder (no "
                        "MEMTRACE in its environment)\n", pid);
        goto out;
    }
    if (!signame && !(esig && *esig) && !(paused && !strcmp(paused, "1")) && req != -1) {
        fprintf(stderr, "memtrace ctl: process %ld was not started for control: run it "
                        "with 'memtrace run --paused' or MEMTRACE_SIGNAL\n", pid);
        goto out;
    }
    char cur[PATH_MAX * 4];
    int on = open_trace_shown(pid, file, cur, sizeof cur);
    if (req == -1) {
        if (on)
            printf("%ld: recording into %s\n", pid, cur);
        else
            printf("%ld: dormant\n", pid);
        char pushing[4096];   /* a memtrace process pushing profiles of it: its counts */
        run_push_status_read(file, pushing, sizeof pushing);
        if (pushing[0])
            printf("%ld: %s\n", pid, pushing);
        rc = 0;
        goto out;
    }
    if (req == MT_CTL_SCAN && !on) {
        fprintf(stderr, "memtrace ctl: process %ld is dormant: no recording to scan (start one "
                        "first)\n", pid);
        goto out;
    }
    if (req != MT_CTL_SCAN && (req == MT_CTL_START) == on) {
        if (on)
            printf("%ld: already recording into %s\n", pid, cur);
        else
            printf("%ld: already dormant\n", pid);
        rc = 0;
        goto out;   /* (pushes the recording under way with --push) */
    }
    /* never a signal: the recorder's own channel, which the program cannot
     * see (a process without the recorder has none: nothing is sent) */
    const char *why = NULL;
    ch = open_channel(pid, &why);
    if (!ch) {
        fprintf(stderr, "memtrace ctl: process %ld: %s; nothing sent\n", pid, why);
        goto out;
    }
    uint64_t seq = send_request(ch, req);
    char was[sizeof cur];
    snprintf(was, sizeof was, "%s", cur);
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (wait_s == 0) {
        printf("%ld: %s sent\n", pid, action);
        rc = 0;
        goto out;
    }
    for (;;) {
        on = open_trace_shown(pid, file, cur, sizeof cur);
        int acted = __atomic_load_n(&ch->done, __ATOMIC_ACQUIRE) >= seq;
        if (req == MT_CTL_SCAN && acted) {
            if (__atomic_load_n(&ch->scanned, __ATOMIC_ACQUIRE) == seq) {
                printf("%ld: scanned; verdicts in %s.leaks\n", pid, was);
                rc = 0;
            } else {
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
            }
            break;
        }
        if (req != MT_CTL_SCAN && (req == MT_CTL_START) == on) {
            if (on)
                printf("%ld: recording into %s\n", pid, cur);
            else
                printf("%ld: stopped; %s is complete\n", pid, was);
            rc = 0;
            break;
        }
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
            fprintf(stderr, "memtrace ctl: process %ld ended\n", pid);
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9 > wait_s) {
            fprintf(stderr, "memtrace ctl: process %ld did not %s within %gs (%s; see its "
                            "stderr)\n", pid, req == MT_CTL_START ? "start recording"
                            : req == MT_CTL_SCAN ? "scan" : "stop",
                    wait_s, acted ? "its recorder took the request" : "its recorder did not "
                    "take the request");
            break;
        }
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
out:
    if (push && rc == 0) {
        fflush(stdout);
        struct ctl_stopper st = { pid, ch };
        run_push_status_at(push, file);
        ctl_push_follow(pid, file, push, stop_recording, &st, wait_s > 0 ? wait_s : 5);
        ch = st.ch;
    } else if (push) {
        run_push_end(push, "ctl");
    }
    if (ch)
        munmap(ch, MT_CTL_CHANNEL_SIZE);
    free(file);
    free(esig);
    free(paused);
    return rc;
}
