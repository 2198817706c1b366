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
 *
 * The process is named by a pidfd held from the first look at it to the
 * end (attach_target.h), checked after every borrow: a PID another process
 * took over is never touched. Whatever the process supplies (names in its
 * maps, descriptor numbers, files in its root) is never opened as
 * ourselves (attach_files.h); the only library loaded is ours.
 *
 * The ptrace work is done by a child of 'memtrace attach' (in_tracer): a
 * thread borrowed with its registers changed must not be left behind by a
 * tracer that dies (its call would return to address 0), so 'memtrace
 * attach' killed, even with SIGKILL, leaves the child to finish the call
 * under way, put the thread back and end the recording (it gets SIGTERM
 * when its parent dies, as for Ctrl-C). The parent forwards Ctrl-C,
 * SIGTERM and SIGHUP and exits with the child's status. The child has a
 * process group of its own, so that a SIGKILL sent to attach's group
 * spares it too.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "control_proto.h"
#include "recconf.h"
#include "runfiles.h"
#include "units.h"
#include "memtrace/present.h"
#include "../lib/inject/attach_call.h"
#include "../lib/inject/attach_files.h"
#include "../lib/inject/attach_target.h"
#include "commands.h"
#include "../lib/launch/launch.h"
#include "record_opts.h"
#include "run_push.h"
#include "run_snapshots.h"

#define CALL_TIMEOUT_MS 10000
#define EXIT_DENIED 2

static const char attach_head[] =
    "usage: memtrace attach [-o FILE] [--interval BYTES | --rate R] [--depth N]\n"
    "                       [--unwind MODE] [--duration T] [--leaks] [--no-trace]\n"
    "                       [--push URL [--push-every T] [--push-format F]\n"
    "                       [--label K=V]... [--push-tenant ID] [--push-auth-file FILE]] PID\n"
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
    "\n";

static const char attach_tail[] =
    "\n"
    "Needs the right to ptrace the process: the same user (and Yama's\n"
    "ptrace_scope 0) or CAP_SYS_PTRACE (root, or a container started with\n"
    "--cap-add SYS_PTRACE). x86-64, glibc processes only, Linux 5.6 or later.\n"
    "The ptrace work is done by a child: memtrace attach killed, even with\n"
    "SIGKILL, leaves it to put the process back and end the recording.\n"
    "\n"
    "Exit status: 0 recorded and detached, 1 could not attach or record\n"
    "(nothing changed in the process), 2 usage or ptrace not permitted.\n"
    "\n"
    "Example: memtrace attach --duration 60s -o svc.ctf $(pidof svc)\n"
    "         memtrace top svc.ctf\n";

/* What the command line asks for. */
typedef struct attach_args {
    record_opts rec;
    run_push_opts push;
    const char *output;      /* NULL: NAME.PID.ctf */
    long long duration_ms;   /* 0: until Ctrl-C or the process's end */
    int detach_only, leaks, no_trace;
    pid_t pid;
} attach_args;

static int take_duration(void *ctx, const char *arg, const char *opt)
{
    long long ms = mt_ctl_time_ms_at_least(arg, 1);
    if (ms <= 0) {
        fprintf(stderr, "memtrace attach: %s %s: expected a time such as 90s, 10m, 1h or 500ms\n",
                opt, arg);
        return 2;
    }
    *(long long *)ctx = ms;
    return 0;
}

/* The PID and the options that go together or not at all: 2 after the
 * message, or 0. */
static int attach_check(attach_args *a, const char *word)
{
    char *end;
    long lpid = strtol(word, &end, 10);
    if (*end || lpid <= 0 || lpid > 0x3fffffff) {
        fprintf(stderr, "memtrace attach: '%s' is not a process id\n", word);
        return 2;
    }
    a->pid = (pid_t)lpid;
    if (a->pid == getpid()) {
        fprintf(stderr, "memtrace attach: cannot attach to itself\n");
        return 2;
    }
    if ((a->detach_only || a->no_trace) && (a->detach_only ? a->push.url != NULL || a->no_trace
                                                           : !a->push.url)) {
        fprintf(stderr, "memtrace attach: %s\n", a->detach_only ? "--detach takes no --push or "
                "--no-trace" : "--no-trace needs --push URL (else nothing would be kept)");
        return 2;
    }
    return record_opts_check(&a->rec);
}

/* Reads the command line into a: -1 to go on, else the exit status. */
static int attach_parse(int argc, char **argv, attach_args *a)
{
    const opt_spec opts[] = {
        OPT("output", 'o', OPT_STRING, &a->output, "FILE",
            "trace file (default: NAME.PID.ctf in the current\n"
            "directory); the process writes it, so its user\nmust be able to create it"),
        RECORD_OPTS(&a->rec, "mean bytes between samples, suffixes k, m, g\n(default 512k)",
            "sampling probability per byte (= 1 / interval)",
            "at most N frames per call stack (default 128)",
            "how call stacks are captured: dwarf (default), fp\n"
            "or auto, as for 'memtrace run' (the first attach to\n"
            "a process decides it for later ones)"),
        OPT("duration", 0, OPT_CALL, NULL, "T", "detach after T (90s, 10m, 1h, 500ms)",
            .fn = take_duration, .ctx = &a->duration_ms),
        OPT("leaks", 0, OPT_FLAG, &a->leaks, NULL,
            "before detaching, decide for every block sampled\n"
            "since the attach and still live whether anything\n"
            "reachable points into it (FILE.leaks: top --by lost)"),
        OPT("push", 0, OPT_CALL, NULL, "URL",
            "while recording, this command (never the process)\n"
            "sends a heap profile every --push-every and at the\n"
            "end to Pyroscope, Parca or an OTLP collector; the\n"
            "options are those of 'memtrace run --push'\n"
            "(docs/fleet.md): --push-every T, --push-format F,\n"
            "--label K=V, --push-tenant ID, --push-auth-file FILE",
            .fn = run_push_take, .ctx = &a->push),
        RUN_PUSH_MORE_OPTS(&a->push),
        OPT("no-trace", 0, OPT_FLAG, &a->no_trace, NULL,
            "with --push: the trace is removed once the last\n"
            "profile is made (it grows until then: attach does\n"
            "not rotate); without -o it goes in /tmp"),
        OPT("detach", 0, OPT_FLAG, &a->detach_only, NULL,
            "only end a recording an earlier attach left running\n"
            "(its tracer was killed with SIGKILL) and detach"),
    };
    const opt_command cmd = {"attach", attach_head, attach_tail, 24, opts,
                             sizeof opts / sizeof opts[0]};
    int first, rc = opt_parse_first(&cmd, argc, argv, &first);
    if (rc >= 0)
        return rc;
    if (first != argc - 1) {
        fprintf(stderr, "memtrace attach: expected one process id\n");
        return opt_usage("attach");
    }
    return attach_check(a, argv[first]) ? 2 : -1;
}

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static volatile sig_atomic_t tracer_pid;

static void forward(int sig)
{
    if (tracer_pid > 0)
        kill((pid_t)tracer_pid, sig);
}

/* Forks the tracer (see the top): returns 0 in the child (or when there
 * is no child: the work is then done here), 1 in the parent once the child
 * has ended, *code its exit status. */
static int in_tracer(int *code)
{
    pid_t parent = getpid();
    fflush(stdout);
    fflush(stderr);
    pid_t c = fork();
    if (c <= 0) {
        run_on_stop_signals(on_signal);
        if (c == 0) {
            /* Its messages may go to a pipe whose reader went with the
             * parent: a write then fails, it does not end the tracer. */
            signal(SIGPIPE, SIG_IGN);
            /* Its own process group: a SIGKILL sent to attach's group
             * (timeout -s KILL, kill -9 -PGID) does not reach it; writing
             * to the terminal from there is never stopped. */
            setpgid(0, 0);
            signal(SIGTTOU, SIG_IGN);
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            if (getppid() != parent)   /* died before the line above */
                stop_requested = 1;
        }
        return 0;
    }
    tracer_pid = c;
    run_on_stop_signals(forward);
    int st;
    while (waitpid(c, &st, 0) < 0)
        if (errno != EINTR) {
            *code = 1;
            return 1;
        }
    *code = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    return 1;
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
    if (t->nondumpable && geteuid() != 0)
        fprintf(stderr, "memtrace attach: %d is not dumpable (a set-user-ID program, one that "
                        "changed its user, or prctl(PR_SET_DUMPABLE, 0)): only root may attach "
                        "to it\n", (int)t->pid);
    else if (t->uid != getuid() && geteuid() != 0)
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
        /* The thread seized is one of the process the pidfd names, still
         * running: neither the PID nor the thread id was taken over. */
        char task[64];
        snprintf(task, sizeof task, "/proc/%d/task/%d", (int)t->pid, (int)attach_tid(th));
        if (access(task, F_OK) != 0 || !attach_target_same(t)) {
            attach_release(th);
            fprintf(stderr, "memtrace attach: %d has exited (its PID now names another "
                            "process, left alone)\n", (int)t->pid);
            *code = 1;
            return NULL;
        }
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
    case 3: return "bad request (the recorder's configuration: rate, depth, unwind, leaks or file)";
    case 4: return "the recording could not start";
    case 6: return "the process's allocator could not be found (its malloc resolves only "
                   "to a PLT stub): nothing was redirected";
    default: return "the recorder in the process cannot find its own entries";
    }
}

/* memfd: the process cannot see our library (another mount namespace):
 * the process makes a memfd, we fill it with our own library (opened here,
 * never a name the process gave: attach_fill_memfd), and the process loads
 * it from there. Fills path with the name to dlopen and *fd with the
 * process's descriptor (-1 on failure, said). */
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
    char why[512];
    if (attach_fill_memfd(t, (int)*fd, lib, why, sizeof why) != 0) {
        fprintf(stderr, "memtrace attach: %s\n", why);
        path[0] = '\0';
        return;
    }
    snprintf(path, cap, "/proc/self/fd/%d", (int)*fd);
}

/* dlopen of lib in the borrowed thread (through a memfd when in_memfd):
 * the handle, or 0 (said why, when the process said). */
static uint64_t load_recorder(attach_thread *th, const attach_target *t, const char *lib,
                              int in_memfd, uint64_t f_dlopen, uint64_t f_dlerror)
{
    uint64_t handle = 0, a[2];
    char mpath[64] = "";
    int64_t mfd = -1;
    int loaded = 0;
    int memfd = in_memfd;
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
    if ((!mpath[0] && memfd) || !loaded)
        return 0;
    if (!handle) {
        char msg[512] = "";
        uint64_t m = 0;
        if (f_dlerror && call(th, f_dlerror, NULL, 0, &m, "dlerror") == 0 && m)
            attach_read_string(th, m, msg, sizeof msg);
        char e[2048], l[PATH_MAX * 4];
        mt_text_escape(e, sizeof e, msg[0] ? msg : "dlopen failed");   /* (its memory) */
        mt_text_escape(l, sizeof l, lib);
        fprintf(stderr, "memtrace attach: the process could not load %s: %s\n", l, e);
    }
    return handle;
}

/* Loads the recorder and starts recording: lib is the name the process
 * dlopens, or, with memfd_lib, our own library it gets through a memfd.
 * 0, or the exit status. *stop_fn gets the address of
 * memtrace_attach_stop in the process. */
static int do_attach(const attach_target *t, const char *lib, const char *spec,
                     uint64_t *stop_fn, const char *memfd_lib, const char *trace)
{
    uint64_t f_dlopen = attach_target_libc_symbol(t, "dlopen");
    uint64_t f_dlsym = attach_target_libc_symbol(t, "dlsym");
    uint64_t f_dlerror = attach_target_libc_symbol(t, "dlerror");
    if (!f_dlopen || !f_dlsym) {
        f_dlopen = attach_target_libc_symbol(t, "__libc_dlopen_mode");
        f_dlsym = attach_target_libc_symbol(t, "__libc_dlsym");
    }
    if (!f_dlopen || !f_dlsym) {
        char e[PATH_MAX * 4];
        mt_text_escape(e, sizeof e, t->libc);   /* (the process's name for it) */
        fprintf(stderr, "memtrace attach: %s in %d has no dlopen: cannot load the recorder\n",
                e, (int)t->pid);
        return 1;
    }
    int code = 1;
    attach_thread *th = borrow(t, &code);
    if (!th)
        return code;
    code = 1;
    uint64_t start = 0, rc = 0, a[2];
    if (memfd_lib)
        lib = memfd_lib;
    uint64_t handle = load_recorder(th, t, lib, memfd_lib != NULL, f_dlopen, f_dlerror);
    if (!handle)
        goto out;
    a[0] = handle;
    if (!(a[1] = str(th, "memtrace_attach_start")) ||
        call(th, f_dlsym, a, 2, &start, "dlsym") != 0)
        goto out;
    if (!(a[1] = str(th, "memtrace_attach_stop")) ||
        call(th, f_dlsym, a, 2, stop_fn, "dlsym") != 0)
        goto out;
    if (!start || !*stop_fn) {
        char l[PATH_MAX * 4];
        mt_text_escape(l, sizeof l, lib);
        fprintf(stderr, "memtrace attach: %s has no attach entry (an older libmemtrace.so?)\n",
                l);
        goto out;
    }
    if (!(a[0] = str(th, spec)) || call(th, start, a, 1, &rc, "start") != 0)
        goto out;
    if ((int)rc == 0)
        code = 0;
    else if ((int)rc == 4)
        fprintf(stderr, "memtrace attach: the recording could not start: the process (uid %u, "
                        "gid %u) could not create %s (can that user write there? its stderr "
                        "says more)\n", (unsigned)t->uid, (unsigned)t->gid, trace);
    else
        fprintf(stderr, "memtrace attach: %s\n", start_error((uint64_t)(int)rc));
out:
    attach_release(th);
    return code;
}

static int do_detach(const attach_target *t, uint64_t stop_fn)
{
    int code = 1;
    if (!attach_target_same(t)) {   /* no thread of whatever has its PID now is seized */
        fprintf(stderr, "memtrace attach: %d has exited (its PID now names another process, "
                        "left alone)\n", (int)t->pid);
        return 1;
    }
    pid_t other = attach_target_tracer_now(t);
    if (other && other != getpid()) {   /* ptrace would be refused: say by whom */
        fprintf(stderr, "memtrace attach: %d is traced by process %d now (a debugger, strace?): "
                        "the recording goes on in it; once that tracer has let go, 'memtrace "
                        "attach --detach %d' ends it\n", (int)t->pid, (int)other, (int)t->pid);
        return 1;
    }
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
            fprintf(stderr, "memtrace attach: the trace could not be completed (the process, "
                            "uid %u, could not write it: its stderr says why)\n",
                    (unsigned)t->uid);
    }
    attach_release(th);
    return code;
}

/* The trace and the files beside it (.rss, .leaks) that the process wrote
 * inside its root (at inner, as it sees it), copied to where they were
 * asked for (attach_copy_out: no link followed, regular files of its user
 * only, bounded) and removed there. */
static void move_out(const attach_target *t, const char *inner, const char *abs_out)
{
    static const mt_runfile_kind side[] = { MT_RUNFILE_TRACE, MT_RUNFILE_RSS, MT_RUNFILE_LEAKS };
    for (size_t k = 0; k < sizeof side / sizeof *side; k++) {
        char from[PATH_MAX + 16], to[PATH_MAX + 16], why[PATH_MAX + 256];
        mt_runname_side(from, sizeof from, inner, side[k]);
        mt_runname_side(to, sizeof to, abs_out, side[k]);
        if (attach_copy_out(t, from, to, why, sizeof why) < 0) {
            char e[sizeof why * 4];
            mt_text_escape(e, sizeof e, why);
            fprintf(stderr, "memtrace attach: cannot copy the process's %s out: %s (left "
                            "there)\n", from, e);
        }
    }
}

/* name with only the bytes a file name and a label take well (the
 * process chose it) */
static void safe_name(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s", name[0] ? name : "process");
    for (char *p = out; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '-' || *p == '_') || (p == out && *p == '.'))
            *p = '_';
}

/* A profile for --push of the trace the process writes: at abs_out, or at
 * inner inside its root (another mount namespace), opened as a regular
 * file of its user without following links (attach_files.h); the
 * symbolized copy goes to dir, ours. final: the finished trace at
 * abs_out, the last profile. */
static void push_snapshot(run_snapshots *s, const attach_target *t, const char *inner,
                          const char *abs_out, const char *dir, int final)
{
    char name[64], why[256];
    int fd = -1;
    if (inner) {
        int o = attach_open_in_root(t, inner, 0, why, sizeof why);
        struct stat st;
        if (o >= 0) {
            fd = attach_open_regular(o, t->uid, &st, why, sizeof why);
            close(o);
        }
        if (fd >= 0)
            snprintf(name, sizeof name, "/proc/self/fd/%d", fd);
    } else {
        fd = run_snapshots_open(abs_out, t->uid, name, sizeof name);
    }
    if (fd < 0)
        return;   /* not there yet, or not a file to read */
    if (final)
        run_snapshots_final(s, name, dir, (int)t->pid);
    else
        run_snapshots_take(s, name, abs_out, dir, NULL, (int)t->pid);
    close(fd);
}

/* --no-trace: the trace and the files beside it go once pushed */
static void remove_trace(const char *abs_out)
{
    static const char *const side[] = { "", ".rss", ".leaks" };
    for (size_t k = 0; k < sizeof side / sizeof *side; k++) {
        char f[PATH_MAX + 16];
        snprintf(f, sizeof f, "%s%s", abs_out, side[k]);
        unlink(f);
    }
}

/* Reads the process and refuses what cannot be done safely: -1 to go
 * on, else the exit status. */
static int attach_vet(pid_t pid, attach_target *t)
{
    char why[512];
    if (attach_target_read(pid, t, why, sizeof why) != 0) {
        if (errno == EACCES || errno == EPERM) {   /* its maps are not ours to read */
            explain_denied(t);
            return EXIT_DENIED;
        }
        fprintf(stderr, "memtrace attach: %d: %s\n", (int)pid, why);
        return 1;
    }
    if (!attach_target_same(t)) {   /* what was read may be another process's */
        fprintf(stderr, "memtrace attach: %d: the process has exited\n", (int)pid);
        return 1;
    }
    if (t->tracer) {
        fprintf(stderr, "memtrace attach: %d is traced by process %d already (a debugger?): "
                        "detach it first\n", (int)pid, (int)t->tracer);
        return 1;
    }
    if (t->state == 'T' || t->state == 't') {
        fprintf(stderr, "memtrace attach: %d is stopped: continue it first (kill -CONT %d)\n",
                (int)pid, (int)pid);
        return 1;
    }
    if (t->recorder[0] && t->preloaded) {
        fprintf(stderr, "memtrace attach: %d runs the recorder already (started under memtrace "
                        "run or LD_PRELOAD): use 'memtrace ctl %d start'\n", (int)pid, (int)pid);
        return 1;
    }
    if (!t->libc[0]) {
        fprintf(stderr, "memtrace attach: %d has no glibc libc.so.6 mapped (statically linked, "
                        "or another C library): the recorder cannot be loaded into it; start "
                        "it under 'memtrace run' instead\n", (int)pid);
        return 1;
    }
    return -1;
}

/* --detach: ends the recording an earlier attach left running. */
static int detach_only(const attach_target *t)
{
    int pid = (int)t->pid;
    if (!t->recorder[0]) {
        fprintf(stderr, "memtrace attach: %d has no recorder loaded: nothing to detach\n", pid);
        return 1;
    }
    /* Its entry found from the maps and its ELF symbols: no dlopen
     * (a recorder loaded from a memfd has no name to dlopen). */
    uint64_t stop_fn = attach_target_recorder_symbol(t, "memtrace_attach_stop");
    if (!stop_fn) {
        fprintf(stderr, "memtrace attach: the recorder in %d has no attach entry\n", pid);
        return 1;
    }
    int code = do_detach(t, stop_fn);
    if (code == 0)
        fprintf(stderr, "memtrace attach: %d: recording ended, entries restored\n", pid);
    return code;
}

/* Which library the process loads: load (its name for dlopen) and
 * libreal (ours, resolved), *in_memfd when it gets ours through a memfd.
 * -1 to go on, else the exit status. */
static int choose_library(const attach_target *t, char *libreal, const char **load,
                          int *in_memfd)
{
    char lib[PATH_MAX];
    if (launch_find_library(lib, sizeof lib) != 0 || !realpath(lib, libreal)) {
        fprintf(stderr, "memtrace attach: cannot find libmemtrace.so (looked next to the "
                        "memtrace binary and in ../lib; set MEMTRACE_LIB)\n");
        return 1;
    }
    /* The process dlopens libreal by name if it sees that very file there;
     * else it gets our library through a memfd. A recorder it has loaded
     * already from a file of another build is named for its own dlopen
     * (which then finds it loaded): no file of that name is ever opened
     * here. */
    *load = libreal;
    *in_memfd = !t->same_mnt && !attach_target_same_file(t, libreal);
    if (t->recorder[0] && !strncmp(t->recorder, "/memfd:", 7))
        *in_memfd = 1;   /* loaded from a memfd before: another copy, from a memfd again */
    else if (t->recorder[0] && strcmp(t->recorder, libreal) != 0 && !*in_memfd)
        *load = t->recorder;   /* attached before with another build: reuse it */
    return -1;
}

/* Where the trace goes: abs_out (absolute, no link in its directory) in
 * dir, here; as_seen, the name the process writes it under; inner, that
 * name inside its root when the process does not see dir ("" when it
 * does: it is moved here afterwards). */
typedef struct trace_place {
    char abs_out[PATH_MAX], dir[PATH_MAX];
    char inner[PATH_MAX + 64], as_seen[PATH_MAX];
} trace_place;

/* abs_out and dir from -o (or NAME.PID.ctf): -1 to go on, else 1. */
static int place_here(const attach_args *a, const attach_target *t, trace_place *p)
{
    char out[PATH_MAX];
    const char *output = a->output;
    if (!output) {
        char base[sizeof t->comm];
        safe_name(base, sizeof base, t->comm);   /* the process's choice: plain bytes only */
        /* (--no-trace: where any user may create a file for a while,
         * not the current directory, often / for a service) */
        snprintf(out, sizeof out, "%s%s.%d.ctf", a->no_trace ? "/tmp/" : "", base, (int)a->pid);
        output = out;
    }
    if (output[0] == '/') {
        snprintf(p->abs_out, sizeof p->abs_out, "%s", output);
    } else if (!getcwd(p->dir, sizeof p->dir) ||
               snprintf(p->abs_out, sizeof p->abs_out, "%s/%s", p->dir, output) >=
                   (int)sizeof p->abs_out) {
        fprintf(stderr, "memtrace attach: %s: name too long\n", output);
        return 1;
    }
    snprintf(p->dir, sizeof p->dir, "%s", p->abs_out);
    *strrchr(p->dir, '/') = '\0';
    if (!p->dir[0])
        snprintf(p->dir, sizeof p->dir, "/");
    char rdir[PATH_MAX];   /* no link in it: it is looked up in the process's root too */
    if (realpath(p->dir, rdir) && strcmp(rdir, p->dir) != 0) {
        char base[PATH_MAX];
        snprintf(base, sizeof base, "%s", strrchr(p->abs_out, '/') + 1);
        if (snprintf(p->abs_out, sizeof p->abs_out, "%s/%s", strcmp(rdir, "/") ? rdir : "",
                     base) >= (int)sizeof p->abs_out) {
            fprintf(stderr, "memtrace attach: %s: name too long\n", output);
            return 1;
        }
        snprintf(p->dir, sizeof p->dir, "%s", rdir);
    }
    struct stat st;
    if (stat(p->dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "memtrace attach: %s: no such directory\n", p->dir);
        return 1;
    }
    if (lstat(p->abs_out, &st) == 0) {
        fprintf(stderr, "memtrace attach: %s exists already: give another -o FILE\n",
                p->abs_out);
        return 1;
    }
    return -1;
}

/* as_seen and inner: where the process can create the trace. -1 to go
 * on, else 1. */
static int place_there(const attach_target *t, trace_place *p)
{
    int pid = (int)t->pid;
    /* A process in another mount namespace that does not see dir writes
     * the trace inside its own root (at the same path if that directory
     * is there, else in its /tmp); it is moved here afterwards. */
    snprintf(p->as_seen, sizeof p->as_seen, "%s", p->abs_out);
    if (!t->same_mnt && !attach_target_same_file(t, p->dir)) {
        /* Looked at inside its root only (attach_files.h). */
        char idir[PATH_MAX + 64], w[PATH_MAX + 128];
        int d = attach_open_in_root(t, p->dir, O_DIRECTORY, w, sizeof w);
        if (d < 0)
            snprintf(p->as_seen, sizeof p->as_seen, "/tmp/memtrace-attach.%d.%d.ctf", pid,
                     (int)getpid());
        else
            close(d);
        snprintf(p->inner, sizeof p->inner, "%s", p->as_seen);
        snprintf(idir, sizeof idir, "%s", p->as_seen);
        *strrchr(idir, '/') = '\0';
        d = attach_open_in_root(t, idir[0] ? idir : "/", O_DIRECTORY, w, sizeof w);
        int there = attach_open_in_root(t, p->inner, 0, w, sizeof w);
        if (d < 0 || there >= 0 || errno != ENOENT) {
            fprintf(stderr, "memtrace attach: %d runs in another mount namespace (a container) "
                            "with no directory for the trace (%s, /tmp): give -o a path valid "
                            "in both\n", pid, p->dir);
            return 1;
        }
        close(d);
    } else if (geteuid() == 0 && t->uid != 0 && attach_user_can_create(t, p->dir) == 0) {
        /* The process creates the trace as its own user. */
        fprintf(stderr, "memtrace attach: %d runs as uid %u (gid %u), which cannot create "
                        "files in %s: give -o a directory that user may write\n", pid,
                (unsigned)t->uid, (unsigned)t->gid, p->dir);
        return 1;
    }
    return -1;
}

/* Waits for Ctrl-C, SIGTERM, --duration or the process's end, pushing
 * the profiles that fall due. Returns whether the process exited;
 * *recorded: how long, in ms. */
static int record_until_stop(const attach_args *a, const attach_target *t,
                             const trace_place *p, run_push *push, run_snapshots *snaps,
                             long *recorded)
{
    long began = mono_ms();
    int exited = 0;
    while (!stop_requested) {
        if (a->duration_ms && mono_ms() - began >= a->duration_ms)
            break;
        if (attach_target_exited(t)) {
            exited = 1;
            break;
        }
        if (push && run_snapshots_due(snaps))
            push_snapshot(snaps, t, p->inner[0] ? p->inner : NULL, p->abs_out, p->dir, 0);
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    *recorded = mono_ms() - began;
    return exited;
}

/* Symbolizes the trace, named here only if it is a regular file of the
 * process's user (or ours, copied out), not a link it put there; one the
 * process wrote (in a directory its user may write) is named by a child
 * with that user's identity, never with ours (root's). */
static void name_trace(const attach_target *t, char *abs_out)
{
    char *paths[1] = { abs_out };
    struct stat st;
    if (lstat(abs_out, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()) {
        symbolize_run_traces(paths, 1);
    } else if (lstat(abs_out, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == t->uid) {
        fflush(stderr);
        pid_t c = fork();
        if (c == 0) {
            if ((setgroups((size_t)t->ngroups, t->groups) != 0 && geteuid() == 0) ||
                setgid(t->gid) != 0 || setuid(t->uid) != 0)
                _exit(1);
            symbolize_run_traces(paths, 1);
            fflush(NULL);
            _exit(0);
        }
        int ws;
        while (c > 0 && waitpid(c, &ws, 0) < 0 && errno == EINTR)
            ;
    }
}

/* Attaches (the configuration in the recorder's text form), records until
 * told to stop, detaches; then the trace comes out, is named and pushed.
 * The exit status. */
static int attach_record(const attach_args *a, attach_target *t, trace_place *p,
                         const char *load, const char *memfd_lib, run_push *push)
{
    char spec[PATH_MAX + 128];
    /* the recorder's configuration in its text form (recconf.h), which
     * memtrace_attach_start (lib/record/attach.c) parses */
    const mt_recconf conf = { .rate = a->rec.rate, .depth = a->rec.depth,
                              .unwind = a->rec.unwind, .leaks = a->leaks, .file = p->as_seen };
    if (mt_recconf_format(spec, sizeof spec, &conf) < 0) {
        fprintf(stderr, "memtrace attach: trace file name too long\n");
        return 2;
    }
    if (stop_requested)   /* Ctrl-C (or our parent gone) before anything was done */
        return 1;
    long t0 = mono_ms();
    uint64_t stop_fn = 0;
    int code = do_attach(t, load, spec, &stop_fn, memfd_lib, p->as_seen);
    if (code != 0)
        return code;
    long t_attach = mono_ms() - t0;
    char comm[sizeof t->comm * 4];
    mt_text_escape(comm, sizeof comm, t->comm);   /* the process's choice of bytes */
    fprintf(stderr, "memtrace attach: recording %d (%s) into %s (attached in %ld ms); %s\n",
            (int)a->pid, comm, p->abs_out, t_attach,
            a->duration_ms ? "detaching after --duration or Ctrl-C" : "Ctrl-C to detach");
    run_snapshots snaps;
    char pname[sizeof t->comm];
    safe_name(pname, sizeof pname, t->comm);
    if (push)
        run_snapshots_init(&snaps, "attach", 0, NULL, push, pname);
    long recorded, t_detach = 0;
    int exited = record_until_stop(a, t, p, push, &snaps, &recorded);
    if (!exited) {
        long d0 = mono_ms();
        code = do_detach(t, stop_fn);
        t_detach = mono_ms() - d0;
        if (code != 0 && !attach_target_same(t)) {
            exited = 1;
            code = 0;
        }
    }
    if (code != 0)
        return code;
    if (p->inner[0])
        move_out(t, p->inner, p->abs_out);
    if (!a->no_trace)   /* (not kept: no names to add) */
        name_trace(t, p->abs_out);
    if (push) {
        /* the finished trace, as the end of the recording left it */
        push_snapshot(&snaps, t, NULL, p->abs_out, p->dir, 1);
        if (a->no_trace)
            remove_trace(p->abs_out);
    }
    const char *kept = a->no_trace ? "no trace kept" : "trace ";
    const char *name = a->no_trace ? "" : p->abs_out;
    if (exited)
        fprintf(stderr, "memtrace attach: %d exited after %.1f s of recording; %s%s\n",
                (int)a->pid, recorded / 1000.0, kept, name);
    else
        fprintf(stderr, "memtrace attach: detached from %d after %.1f s (detach %ld ms); "
                        "%s%s\n", (int)a->pid, recorded / 1000.0, t_detach, kept, name);
    return 0;
}

int cmd_attach(int argc, char **argv)
{
    attach_args a = {.rec = {.cmd = "attach", .rate = MEMTRACE_DEFAULT_RATE},
                     .push = {.cmd = "attach"}};
    int rc = attach_parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (in_tracer(&rc))
        return rc;
    /* The sender runs in the tracer (this process from here on): its
     * errors end the command before anything is done to the process. */
    int push_bad;
    run_push *push = run_push_begin(&a.push, "attach", &push_bad);
    if (push_bad)
        return 2;
    static attach_target t;   /* (large: not on the stack) */
    if ((rc = attach_vet(a.pid, &t)) >= 0)
        return rc;
    if (a.detach_only)
        return detach_only(&t);
    char why[512];
    if (attach_seccomp(a.pid, why, sizeof why)) {
        fprintf(stderr, "memtrace attach: %d: %s\n", (int)a.pid, why);
        return 1;
    }
    static char libreal[PATH_MAX];
    const char *load;
    int in_memfd;
    if ((rc = choose_library(&t, libreal, &load, &in_memfd)) >= 0)
        return rc;
    static trace_place p;
    if ((rc = place_here(&a, &t, &p)) >= 0 || (rc = place_there(&t, &p)) >= 0)
        return rc;
    rc = attach_record(&a, &t, &p, load, in_memfd ? libreal : NULL, push);
    if (rc == 0)
        run_push_end(push, "attach");
    return rc;
}
