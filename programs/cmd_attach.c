/*
 * cmd_attach.c - 'memtrace attach [-o FILE] [--interval BYTES | --rate R]
 * [--duration T] PID': records a running process that was not started
 * under the recorder, for a while, then leaves it as it was.
 *
 * The steps (docs/attach.md): refuse what cannot be done safely (a traced
 * process, a static one, one running the recorder already); borrow one of
 * its threads that waits in a system
 * call (attach_call.c) to dlopen libmemtrace.so and call
 * memtrace_attach_start (lib/record/attach.c: start the recording, redirect
 * the malloc family; a process that does not see our libmemtrace.so gets
 * it through a memfd); let go of the thread; wait for Ctrl-C, SIGTERM,
 * --duration or the process's end; borrow a thread again to call
 * memtrace_attach_stop (entries restored, trace completed, the library
 * left dormant); symbolize the trace here.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control_proto.h"
#include "units.h"
#include "attach_call.h"
#include "attach_target.h"
#include "commands.h"

#define CALL_TIMEOUT_MS 10000
#define EXIT_DENIED 2

static void usage(FILE *f)
{
    fprintf(f,
        "usage: memtrace attach [-o FILE] [--interval BYTES | --rate R] [--duration T]\n"
        "                       [--leaks] PID\n"
        "       memtrace attach --detach PID\n"
        "\n"
        "Record the heap of a running process that was not started under memtrace,\n"
        "then leave it running as it was. The recorder is loaded into the process\n"
        "(ptrace, no debugger needed), the process's calls to the malloc family and\n"
        "to mmap/munmap/mremap are redirected to it, and the recording goes on\n"
        "until Ctrl-C, SIGTERM, --duration or the process's end. Then the original\n"
        "entries are restored and the recorder stays in the process, dormant;\n"
        "attaching again reuses it. Memory allocated before the attach is not in\n"
        "the trace (reports say the recording started mid-run).\n"
        "\n"
        "  -o, --output FILE     trace file (default: NAME.PID.ctf in the current\n"
        "                        directory); the process writes it, so its user\n"
        "                        must be able to create it\n"
        "  -i, --interval BYTES  mean bytes between samples, suffixes k, m, g\n"
        "                        (default 512k)\n"
        "  -r, --rate R          sampling probability per byte (= 1 / interval)\n"
        "      --duration T      detach after T (90s, 10m, 1h, 500ms)\n"
        "      --leaks           before detaching, decide for every block sampled\n"
        "                        since the attach and still live whether anything\n"
        "                        reachable points into it (FILE.leaks: top --by lost)\n"
        "      --detach          only end a recording an earlier attach left running\n"
        "                        (that memtrace attach was killed) and detach\n"
        "  -h, --help            this help\n"
        "\n"
        "Needs the right to ptrace the process: the same user (and Yama's\n"
        "ptrace_scope 0) or CAP_SYS_PTRACE (root, or a container started with\n"
        "--cap-add SYS_PTRACE). x86-64, glibc processes only.\n"
        "\n"
        "Exit status: 0 recorded and detached, 1 could not attach or record\n"
        "(nothing changed in the process), 2 usage or ptrace not permitted.\n"
        "\n"
        "Example: memtrace attach --duration 60s -o svc.ctf $(pidof svc)\n"
        "         memtrace top svc.ctf\n");
}

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* One line on why ptrace was refused, and what to do. */
static void explain_denied(const attach_target *t)
{
    int scope = -1;
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
    if (f) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = -1;
        fclose(f);
    }
    if (t->uid != getuid() && geteuid() != 0)
        fprintf(stderr, "memtrace attach: %d belongs to uid %u: run as that user or as root "
                        "(ptrace needs the same user or CAP_SYS_PTRACE)\n",
                (int)t->pid, (unsigned)t->uid);
    else if (scope >= 1 && geteuid() != 0)
        fprintf(stderr, "memtrace attach: ptrace of %d refused by Yama (ptrace_scope=%d): run as "
                        "root, or 'sysctl kernel.yama.ptrace_scope=0'\n", (int)t->pid, scope);
    else
        fprintf(stderr, "memtrace attach: ptrace of %d not permitted (no CAP_SYS_PTRACE here%s): "
                        "in a container, start it with --cap-add SYS_PTRACE\n",
                (int)t->pid, scope >= 2 ? ", or Yama ptrace_scope>=2" : "");
}

/* Borrows a thread of t (its errno kept); on failure says why and returns
 * NULL with *code the exit status. */
static attach_thread *borrow(const attach_target *t, int *code)
{
    char why[256];
    int err = 0;
    attach_thread *th = attach_borrow(t->pid, &err, why, sizeof why);
    if (th) {
        attach_keep_errno(th, attach_target_libc_symbol(t, "__errno_location"));
        return th;
    }
    if (err == EPERM) {
        explain_denied(t);
        *code = EXIT_DENIED;
    } else {
        fprintf(stderr, "memtrace attach: %d: %s\n", (int)t->pid, why);
        *code = 1;
    }
    return NULL;
}

/* Calls fn(args) on the borrowed thread; says what failed. */
static int call(attach_thread *th, uint64_t fn, const uint64_t *args, int n, uint64_t *ret,
                const char *what)
{
    char why[256];
    if (attach_call(th, fn, args, n, ret, CALL_TIMEOUT_MS, why, sizeof why) != 0) {
        fprintf(stderr, "memtrace attach: %s: %s\n", what, why);
        return -1;
    }
    return 0;
}

/* A string copied into the borrowed thread's stack (0 if it could not be). */
static uint64_t str(attach_thread *th, const char *s)
{
    uint64_t a = attach_push(th, s, strlen(s) + 1);
    if (!a)
        fprintf(stderr, "memtrace attach: cannot write into the process's memory\n");
    return a;
}

static const char *start_error(uint64_t rc)
{
    switch (rc) {
    case 1: return "the process is recording already (attached by another memtrace attach?)";
    case 2: return "the recorder is linked into or preloaded in the process: use "
                   "'memtrace ctl PID start'";
    case 3: return "bad request (rate or file)";
    case 4: return "the recording could not start (the process's stderr says why: can its "
                   "user create the trace file?)";
    case 6: return "the process's allocator could not be found (its malloc resolves only "
                   "to a PLT stub): nothing was redirected";
    default: return "the recorder in the process cannot find its own entries";
    }
}

/* Loads the recorder (from a memfd: memfd) and starts recording. 0, or the
 * exit status. *stop_fn gets the address of memtrace_attach_stop in the
 * process. */
/* Copies file src into dst_fd; 0 or -1. */
static int copy_into(const char *src, int dst_fd)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    char buf[65536];
    ssize_t n;
    int rc = 0;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(dst_fd, buf, (size_t)n) != n) {
            rc = -1;
            break;
        }
    if (n < 0)
        rc = -1;
    close(in);
    return rc;
}

/* memfd: the process cannot see lib (another mount namespace): lib is
 * copied into a memfd made in the process and loaded from there. Fills
 * path with the name to dlopen and *fd with the process's descriptor
 * (-1 on failure, said). */
static void lib_in_memfd(attach_thread *th, const attach_target *t, const char *lib,
                         char *path, size_t cap, int64_t *fd)
{
    uint64_t f_memfd = attach_target_libc_symbol(t, "memfd_create"), rc = 0, a[2];
    *fd = -1;
    if (!f_memfd) {
        fprintf(stderr, "memtrace attach: %d does not see %s and its C library has no "
                        "memfd_create to load it from\n", (int)t->pid, lib);
        return;
    }
    if (!(a[0] = str(th, "libmemtrace.so")))
        return;
    a[1] = 1;   /* MFD_CLOEXEC */
    if (call(th, f_memfd, a, 2, &rc, "memfd_create") != 0)
        return;
    if ((int)rc < 0) {
        fprintf(stderr, "memtrace attach: memfd_create failed in the process\n");
        return;
    }
    *fd = (int)rc;
    char here[64];
    snprintf(here, sizeof here, "/proc/%d/fd/%d", (int)t->pid, (int)*fd);
    int w = open(here, O_WRONLY | O_CLOEXEC);
    if (w < 0 || copy_into(lib, w) != 0) {
        fprintf(stderr, "memtrace attach: cannot copy %s into the process's memfd: %s\n", lib,
                strerror(errno));
        if (w >= 0)
            close(w);
        path[0] = '\0';
        return;
    }
    close(w);
    snprintf(path, cap, "/proc/self/fd/%d", (int)*fd);
}

static int do_attach(const attach_target *t, const char *lib, const char *spec,
                     uint64_t *stop_fn, int memfd)
{
    uint64_t f_dlopen = attach_target_libc_symbol(t, "dlopen");
    uint64_t f_dlsym = attach_target_libc_symbol(t, "dlsym");
    uint64_t f_dlerror = attach_target_libc_symbol(t, "dlerror");
    if (!f_dlopen || !f_dlsym) {
        f_dlopen = attach_target_libc_symbol(t, "__libc_dlopen_mode");
        f_dlsym = attach_target_libc_symbol(t, "__libc_dlsym");
    }
    if (!f_dlopen || !f_dlsym) {
        fprintf(stderr, "memtrace attach: %s in %d has no dlopen: cannot load the recorder\n",
                t->libc, (int)t->pid);
        return 1;
    }
    int code = 1;
    attach_thread *th = borrow(t, &code);
    if (!th)
        return code;
    code = 1;
    uint64_t handle = 0, start = 0, rc = 0, a[2];
    char mpath[64] = "";
    int64_t mfd = -1;
    int loaded = 0;
    if (memfd) {
        lib_in_memfd(th, t, lib, mpath, sizeof mpath, &mfd);
        if (!mpath[0])
            goto close_memfd;
    }
    if (!(a[0] = str(th, memfd ? mpath : lib)))
        goto close_memfd;
    a[1] = RTLD_NOW | RTLD_LOCAL;
    loaded = call(th, f_dlopen, a, 2, &handle, "dlopen") == 0;
close_memfd:
    if (mfd >= 0) {
        uint64_t f_close = attach_target_libc_symbol(t, "close"), ignored;
        a[0] = (uint64_t)mfd;
        if (f_close)
            call(th, f_close, a, 1, &ignored, "close");
    }
    if (!mpath[0] && memfd)
        goto out;
    if (!loaded)
        goto out;
    if (!handle) {
        char msg[512] = "";
        uint64_t m = 0;
        if (f_dlerror && call(th, f_dlerror, NULL, 0, &m, "dlerror") == 0 && m)
            attach_read_string(th, m, msg, sizeof msg);
        fprintf(stderr, "memtrace attach: the process could not load %s: %s\n", lib,
                msg[0] ? msg : "dlopen failed");
        goto out;
    }
    a[0] = handle;
    if (!(a[1] = str(th, "memtrace_attach_start")) ||
        call(th, f_dlsym, a, 2, &start, "dlsym") != 0)
        goto out;
    if (!(a[1] = str(th, "memtrace_attach_stop")) ||
        call(th, f_dlsym, a, 2, stop_fn, "dlsym") != 0)
        goto out;
    if (!start || !*stop_fn) {
        fprintf(stderr, "memtrace attach: %s has no attach entry (an older libmemtrace.so?)\n",
                lib);
        goto out;
    }
    if (!(a[0] = str(th, spec)) || call(th, start, a, 1, &rc, "start") != 0)
        goto out;
    if ((int)rc == 0)
        code = 0;
    else
        fprintf(stderr, "memtrace attach: %s\n", start_error((uint64_t)(int)rc));
out:
    attach_release(th);
    return code;
}

static int do_detach(const attach_target *t, uint64_t stop_fn)
{
    int code = 1;
    attach_thread *th = borrow(t, &code);
    if (!th)
        return code;
    uint64_t rc = 0;
    code = 1;
    if (call(th, stop_fn, NULL, 0, &rc, "stop") == 0) {
        if ((int)rc == 0)
            code = 0;
        else if ((int)rc == 1)
            fprintf(stderr, "memtrace attach: the recording had ended already\n");
        else
            fprintf(stderr, "memtrace attach: the trace could not be completed (the process's "
                            "stderr says why)\n");
    }
    attach_release(th);
    return code;
}

/* The trace (and its .rss) written inside the process's root, moved to
 * where it was asked for. */
static void move_out(const char *inner, const char *abs_out)
{
    for (int k = 0; k < 2; k++) {
        char from[PATH_MAX + 80], to[PATH_MAX + 16];
        snprintf(from, sizeof from, "%s%s", inner, k ? ".rss" : "");
        snprintf(to, sizeof to, "%s%s", abs_out, k ? ".rss" : "");
        if (access(from, R_OK) != 0)
            continue;
        int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (out < 0 || copy_into(from, out) != 0) {
            fprintf(stderr, "memtrace attach: cannot copy %s to %s: %s (left there)\n", from, to,
                    strerror(errno));
            if (out >= 0)
                close(out);
            continue;
        }
        close(out);
        unlink(from);
    }
}

static int alive(pid_t pid)
{
    char p[64], st = 0;
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "re");
    if (!f)
        return 0;
    if (fscanf(f, "%*d (%*[^)]) %c", &st) != 1)
        st = 0;
    fclose(f);
    return st && st != 'Z' && st != 'X';
}

int cmd_attach(int argc, char **argv)
{
    static const struct option opts[] = {
        { "output", required_argument, NULL, 'o' },
        { "interval", required_argument, NULL, 'i' },
        { "rate", required_argument, NULL, 'r' },
        { "duration", required_argument, NULL, 'D' },
        { "detach", no_argument, NULL, 'X' },
        { "leaks", no_argument, NULL, 'L' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *output = NULL;
    double rate = 1.0 / 524288;
    int sampling = 0, c;   /* sampling: run_sampling_option */
    long long duration_ms = 0;
    int detach_only = 0, leaks = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+o:i:r:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            output = optarg;
            break;
        case 'i':
        case 'r':
            if (run_sampling_option("attach", c, optarg, &rate, &sampling))
                return 2;
            break;
        case 'D':
            duration_ms = mt_ctl_time_ms_at_least(optarg, 1);
            if (duration_ms <= 0) {
                fprintf(stderr, "memtrace attach: --duration %s: expected a time such as 90s, "
                                "10m, 1h or 500ms\n", optarg);
                return 2;
            }
            break;
        case 'L':
            leaks = 1;
            break;
        case 'X':
            detach_only = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (run_sampling_check("attach", sampling))
        return 2;
    if (optind != argc - 1) {
        usage(stderr);
        return 2;
    }
    char *end;
    long lpid = strtol(argv[optind], &end, 10);
    if (*end || lpid <= 0 || lpid > 0x3fffffff) {
        fprintf(stderr, "memtrace attach: '%s' is not a process id\n", argv[optind]);
        return 2;
    }
    pid_t pid = (pid_t)lpid;
    if (pid == getpid()) {
        fprintf(stderr, "memtrace attach: cannot attach to itself\n");
        return 2;
    }

    attach_target t;
    char why[512];
    if (attach_target_read(pid, &t, why, sizeof why) != 0) {
        if (errno == EACCES || errno == EPERM) {   /* its maps are not ours to read */
            explain_denied(&t);
            return EXIT_DENIED;
        }
        fprintf(stderr, "memtrace attach: %d: %s\n", (int)pid, why);
        return 1;
    }
    if (t.tracer) {
        fprintf(stderr, "memtrace attach: %d is traced by process %d already (a debugger?): "
                        "detach it first\n", (int)pid, (int)t.tracer);
        return 1;
    }
    if (t.state == 'T' || t.state == 't') {
        fprintf(stderr, "memtrace attach: %d is stopped: continue it first (kill -CONT %d)\n",
                (int)pid, (int)pid);
        return 1;
    }
    if (t.recorder[0] && t.preloaded) {
        fprintf(stderr, "memtrace attach: %d runs the recorder already (started under memtrace "
                        "run or LD_PRELOAD): use 'memtrace ctl %d start'\n", (int)pid, (int)pid);
        return 1;
    }
    if (!t.libc[0]) {
        fprintf(stderr, "memtrace attach: %d has no glibc libc.so.6 mapped (statically linked, "
                        "or another C library): the recorder cannot be loaded into it; start "
                        "it under 'memtrace run' instead\n", (int)pid);
        return 1;
    }

    if (detach_only) {
        uint64_t stop_fn = 0;
        if (!t.recorder[0]) {
            fprintf(stderr, "memtrace attach: %d has no recorder loaded: nothing to detach\n",
                    (int)pid);
            return 1;
        }
        /* Its entry found from the maps and its ELF symbols: no dlopen
         * (a recorder loaded from a memfd has no name to dlopen). */
        stop_fn = attach_target_recorder_symbol(&t, "memtrace_attach_stop");
        if (!stop_fn) {
            fprintf(stderr, "memtrace attach: the recorder in %d has no attach entry\n",
                    (int)pid);
            return 1;
        }
        int code = do_detach(&t, stop_fn);
        if (code == 0)
            fprintf(stderr, "memtrace attach: %d: recording ended, entries restored\n", (int)pid);
        return code;
    }

    if (attach_seccomp(pid, why, sizeof why)) {
        fprintf(stderr, "memtrace attach: %d: %s\n", (int)pid, why);
        return 1;
    }

    char lib[PATH_MAX], libreal[PATH_MAX];
    if (run_find_library(lib, sizeof lib) != 0 || !realpath(lib, libreal)) {
        fprintf(stderr, "memtrace attach: cannot find libmemtrace.so (looked next to the "
                        "memtrace binary and in ../lib; set MEMTRACE_LIB)\n");
        return 1;
    }
    const char *load = libreal;
    int in_memfd = !t.same_mnt && !attach_target_same_file(&t, libreal);
    if (t.recorder[0] && !strncmp(t.recorder, "/memfd:", 7))
        in_memfd = 1;   /* loaded from a memfd before: another copy, from a memfd again */
    else if (t.recorder[0] && strcmp(t.recorder, libreal) != 0 &&
             !attach_target_same_file(&t, t.recorder))
        load = t.recorder;   /* attached before with another build: reuse it */

    /* The trace file: absolute, named as the process will see it. */
    char out[PATH_MAX], dir[PATH_MAX];
    if (!output) {
        snprintf(out, sizeof out, "%s.%d.ctf", t.comm[0] ? t.comm : "process", (int)pid);
        for (char *p = out; *p; p++)
            if (*p == '/' || *p == ' ')
                *p = '_';
        output = out;
    }
    char abs_out[PATH_MAX];
    if (output[0] == '/') {
        snprintf(abs_out, sizeof abs_out, "%s", output);
    } else {
        if (!getcwd(dir, sizeof dir) ||
            snprintf(abs_out, sizeof abs_out, "%s/%s", dir, output) >= (int)sizeof abs_out) {
            fprintf(stderr, "memtrace attach: %s: name too long\n", output);
            return 1;
        }
    }
    snprintf(dir, sizeof dir, "%s", abs_out);
    *strrchr(dir, '/') = '\0';
    if (!dir[0])
        snprintf(dir, sizeof dir, "/");
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "memtrace attach: %s: no such directory\n", dir);
        return 1;
    }
    if (lstat(abs_out, &st) == 0) {
        fprintf(stderr, "memtrace attach: %s exists already: give another -o FILE\n", abs_out);
        return 1;
    }
    /* A process in another mount namespace that does not see dir writes
     * the trace inside its own root (at the same path if that directory
     * is there, else in its /tmp); it is moved here afterwards. */
    char inner[PATH_MAX + 64] = "", as_seen[PATH_MAX];
    snprintf(as_seen, sizeof as_seen, "%s", abs_out);
    if (!t.same_mnt && !attach_target_same_file(&t, dir)) {
        char idir[PATH_MAX + 64];
        snprintf(idir, sizeof idir, "/proc/%d/root%s", (int)pid, dir);
        if (stat(idir, &st) != 0 || !S_ISDIR(st.st_mode))
            snprintf(as_seen, sizeof as_seen, "/tmp/memtrace-attach.%d.%d.ctf", (int)pid,
                     (int)getpid());
        snprintf(inner, sizeof inner, "/proc/%d/root%s", (int)pid, as_seen);
        snprintf(idir, sizeof idir, "%s", inner);
        *strrchr(idir, '/') = '\0';
        if (stat(idir, &st) != 0 || !S_ISDIR(st.st_mode) || lstat(inner, &st) == 0) {
            fprintf(stderr, "memtrace attach: %d runs in another mount namespace (a container) "
                            "with no directory for the trace (%s, /tmp): give -o a path valid "
                            "in both\n", (int)pid, dir);
            return 1;
        }
    }

    char spec[PATH_MAX + 64];
    /* "RATE [leaks ]FILE" (memtrace_attach_start, lib/record/attach.c) */
    snprintf(spec, sizeof spec, "%.17g %s%s", rate, leaks ? "leaks " : "", as_seen);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    long t0 = mono_ms();
    uint64_t stop_fn = 0;
    int code = do_attach(&t, load, spec, &stop_fn, in_memfd);
    if (code != 0)
        return code;
    long t_attach = mono_ms() - t0;
    fprintf(stderr, "memtrace attach: recording %d (%s) into %s (attached in %ld ms); %s\n",
            (int)pid, t.comm, abs_out, t_attach,
            duration_ms ? "detaching after --duration or Ctrl-C" : "Ctrl-C to detach");

    long began = mono_ms();
    int exited = 0;
    while (!stop_requested) {
        if (duration_ms && mono_ms() - began >= duration_ms)
            break;
        if (!alive(pid)) {
            exited = 1;
            break;
        }
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    long recorded = mono_ms() - began;
    long t_detach = 0;
    if (!exited) {
        long d0 = mono_ms();
        code = do_detach(&t, stop_fn);
        t_detach = mono_ms() - d0;
        if (code != 0 && !alive(pid)) {
            exited = 1;
            code = 0;
        }
    }
    if (code != 0)
        return code;
    if (inner[0])
        move_out(inner, abs_out);
    char *paths[1] = { abs_out };
    if (access(abs_out, R_OK) == 0)
        symbolize_run_traces(paths, 1);
    if (exited)
        fprintf(stderr, "memtrace attach: %d exited after %.1f s of recording; trace %s\n",
                (int)pid, recorded / 1000.0, abs_out);
    else
        fprintf(stderr, "memtrace attach: detached from %d after %.1f s (detach %ld ms); "
                        "trace %s\n", (int)pid, recorded / 1000.0, t_detach, abs_out);
    return 0;
}
