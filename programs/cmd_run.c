/*
 * cmd_run.c - 'memtrace run': check that FILE can be written, run a command
 * with the recorder preloaded (LD_PRELOAD=libmemtrace.so, MEMTRACE=FILE
 * made absolute, MEMTRACE_RATE=...), wait for it, summarize every trace
 * the run wrote (largest first) and exit with the command's status.
 *
 * On request (--paused, --signal, --duration) the recorder is told to start
 * dormant or to stop by itself (MEMTRACE_PAUSED, MEMTRACE_SIGNAL,
 * MEMTRACE_DURATION); --pprof-every writes pprof snapshots while the
 * command runs (run_snapshots.c), from this process, not the program.
 *
 * The CLI never links the recorder: the launcher (lib/launch) finds
 * libmemtrace.so (next to the memtrace binary in a build tree, in ../lib
 * when installed, or $MEMTRACE_LIB), sets the environment, starts the
 * command and waits for it; this file holds the options and the reports.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "control_proto.h"
#include "recconf.h"
#include "commands.h"
#include "memtrace/present.h"
#include "run_snapshots.h"
#include "record_opts.h"
#include "run_push.h"
#include "run_traces.h"
#include "runfiles.h"
#include "../lib/launch/launch.h"
#include "trace_names.h"

static const char run_head[] =
    "usage: memtrace run [-o FILE] [--interval BYTES | --rate R] [--depth N]\n"
    "                    [--unwind MODE] [--no-follow] [--paused] [--signal SIG]\n"
    "                    [--duration T] [--pprof-every T --pprof-dir DIR] [--leaks]\n"
    "                    [--rotate-size SIZE] [--rotate-time T] [--keep N]\n"
    "                    [--push URL [--push-every T] [--push-format F] [--label K=V]...\n"
    "                     [--push-tenant ID] [--push-auth-file FILE]]\n"
    "                    [--] CMD [ARGS...]\n"
    "\n"
    "Run CMD with the memtrace recorder preloaded and write a memtrace trace of\n"
    "its heap allocations (sampled, with call stacks) to FILE.\n"
    "\n";

static const char run_tail[] =
    "\n"
    "Processes CMD starts (fork, exec) that sample something are traced into\n"
    "FILE.PID files of their own, beside FILE. At the end every trace of the\n"
    "run is listed on stderr, largest first (pid, samples, estimated bytes\n"
    "allocated, command, file): the regular files of this user under those\n"
    "names modified since the run started (another user's are left alone).\n"
    "FILE is checked before CMD starts: a directory,\n"
    "a missing directory, a symbolic link or an unwritable place exits with 2.\n"
    "When CMD ends, every trace is symbolized (see 'memtrace symbolize --help'),\n"
    "from the name cache where a binary was named before (--no-name-cache: not).\n"
    "The exit status is CMD's (128+N if it was killed by signal N, which is named).\n"
    "Environment: MEMTRACE_LIB overrides the path of libmemtrace.so.\n";

/* What the command line asks for. */
typedef struct run_args {
    record_opts rec;
    run_push_opts push;
    const char *output, *signame, *duration, *pprof_dir;
    const char *rotate_size, *rotate_time, *keep;   /* as given: the recorder reads them */
    double pprof_every;                             /* seconds; 0: no snapshots */
    int no_follow, leaks, paused, no_trace, no_name_cache;
    char **cmd;                                     /* the command, never parsed */
} run_args;

/* The option values the recorder is handed as text: checked here, kept
 * as given (ctx: where the text goes). 0, or 2 after the message. */
static int take_signal(void *ctx, const char *arg, const char *opt)
{
    if (!mt_ctl_signal_number(arg)) {
        fprintf(stderr, "memtrace run: %s %s: not a signal the recorder can use (USR1, USR2, "
                        "HUP, PROF, URG, WINCH, PWR, VTALRM, TTIN, TTOU, RTMIN+N)\n", opt, arg);
        return 2;
    }
    *(const char **)ctx = arg;
    return 0;
}

static int take_duration(void *ctx, const char *arg, const char *opt)
{
    if (mt_ctl_time_ms_at_least(arg, 1) < 0) {
        fprintf(stderr, "memtrace run: %s %s: expected a time such as 90s, 10m, 1h\n", opt, arg);
        return 2;
    }
    *(const char **)ctx = arg;
    return 0;
}

static int take_rotate_size(void *ctx, const char *arg, const char *opt)
{
    if (mt_ctl_size_at_least(arg, MT_ROTATE_MIN_SIZE) < 0) {
        fprintf(stderr, "memtrace run: %s %s: expected a size from 64k to 1e18 bytes, such as "
                        "100m or 1g\n", opt, arg);
        return 2;
    }
    *(const char **)ctx = arg;
    return 0;
}

/* --rotate-time and --pprof-every: at least 1s (the snapshots are named
 * by the second); ctx NULL: --rotate-time's text, else the seconds */
static int take_every(void *ctx, const char *arg, const char *opt, const char **text)
{
    long long ms = mt_ctl_time_ms_at_least(arg, text ? MT_ROTATE_MIN_MS : 1000);
    if (ms < 0) {
        fprintf(stderr, "memtrace run: %s %s: expected a time of at least 1s, such as %s\n", opt,
                arg, text ? "10m, 1h or 1d" : "60s or 5m");
        return 2;
    }
    if (text)
        *text = arg;
    else
        *(double *)ctx = ms / 1000.0;
    return 0;
}

static int take_rotate_time(void *ctx, const char *arg, const char *opt)
{
    return take_every(NULL, arg, opt, ctx);
}

static int take_pprof_every(void *ctx, const char *arg, const char *opt)
{
    return take_every(ctx, arg, opt, NULL);
}

static int take_keep(void *ctx, const char *arg, const char *opt)
{
    char *end;
    long k = strtol(arg, &end, 10);
    if (*end || end == arg || k < 1 || k > 1000000) {
        fprintf(stderr, "memtrace run: %s %s: expected a number of pieces in [1, 1000000]\n", opt,
                arg);
        return 2;
    }
    *(const char **)ctx = arg;
    return 0;
}

/* The options that go together or not at all: 2 after the message, or 0. */
static int run_check(const run_args *a)
{
    const char *why = NULL;
    if (a->leaks && (a->rotate_size || a->rotate_time))
        why = "--leaks: not with --rotate-size or --rotate-time (verdicts name the blocks of "
              "one trace)";
    else if (a->keep && !a->rotate_size && !a->rotate_time)
        why = "--keep needs --rotate-size or --rotate-time";
    else if (!a->pprof_every != !a->pprof_dir)
        why = "give --pprof-every and --pprof-dir together";
    else if (a->no_trace && a->output)
        why = "--no-trace and -o: choose one";
    else if (a->no_trace && a->leaks)
        why = "--no-trace and --leaks: the verdicts would go with the trace";
    else if (a->no_trace && !a->push.url && !a->pprof_every)
        why = "--no-trace needs --push URL or --pprof-every (else nothing would be kept)";
    if (why) {
        fprintf(stderr, "memtrace run: %s\n", why);
        return 2;
    }
    return record_opts_check(&a->rec);
}

/* --no-trace: the private directory and every file in it (the run's
 * traces, pieces and side files; no subdirectory is made there) */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        int fd = dirfd(d);
        struct dirent *e;
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                unlinkat(fd, e->d_name, 0);
        closedir(d);
    }
    rmdir(dir);
}

/* The trace files this run wrote: FILE and FILE.PID[.K] beside it,
 * regular files (not links) of the user memtrace runs as, modified since
 * the run started. Everything done with the run's traces after the command
 * ended (summary, symbolization) starts from this list: files another user
 * left beside FILE under such names (a shared directory such as /tmp) are
 * never read, symbolized or listed, only counted in one line. */
static size_t traces_of_run(const char *file, const struct timespec *start, char ***paths)
{
    size_t foreign = 0;
    size_t n = run_trace_files(file, start, geteuid(), &foreign, paths);
    if (foreign)
        fprintf(stderr, "memtrace run: %zu file%s beside %s under the run's names belong%s to "
                        "another user: not the run's, left alone\n", foreign,
                foreign == 1 ? "" : "s", file, foreign == 1 ? "s" : "");
    return n;
}

/* The command died of a signal: say which, before the summary, so that
 * the state of its traces is read for what it is. */
static void say_killed(int status)
{
    int sig = WTERMSIG(status);
    const char *abbrev = sigabbrev_np(sig);
    char name[32];
    if (abbrev)
        snprintf(name, sizeof name, "SIG%s", abbrev);
    else
        snprintf(name, sizeof name, "an unnamed signal");
    fprintf(stderr, "memtrace run: the program was killed by %s (signal %d)%s\n", name, sig,
            WCOREDUMP(status) ? ", core dumped" : "");
}

static void describe(const run_trace *t, char *note, size_t cap)
{
    if (!t->readable)
        snprintf(note, cap, "not a readable trace: %s", t->why);
    else if (!t->complete)
        snprintf(note, cap, "cut short: %s", t->why);
    else if (!t->ended)
        snprintf(note, cap, "not finished by its process: still running, killed or "
                            "crashed; holds what was written until then");
    else if (t->allocs == 0)
        snprintf(note, cap, "no samples");
    else
        note[0] = '\0';
}

/* The end-of-run summary on stderr: every trace, largest first, so that a
 * wrapper that allocates nothing (env, a shell) does not hide the program
 * it started. Returns the number of traces. */
static size_t summarize(const char *file, char **paths, size_t n, double rate)
{
    struct stat st;
    if (stat(file, &st) == 0 && !S_ISREG(st.st_mode)) {
        fprintf(stderr, "memtrace run: %s is not a regular file: the trace was not read "
                        "back\n", file);
        return 1;
    }
    if (n == 0) {
        fprintf(stderr, "memtrace run: no trace was written (a statically linked program, "
                        "or the recorder could not start: see its message above)\n");
        return 0;
    }
    run_trace *t = calloc(n, sizeof *t);
    if (!t) {
        fprintf(stderr, "memtrace run: out of memory\n");
        return n;
    }
    for (size_t i = 0; i < n; i++)
        run_trace_read(paths[i], &t[i]);
    qsort(t, n, sizeof *t, run_trace_cmp_bytes);
    char bytes[32], note[600];
    /* paths, command lines and reasons as the one escaper writes them
     * (lib/present/escape.c): they come from the traces and the file system */
    char path[4 * 1024], why[sizeof t->why];
    if (n == 1) {
        describe(&t[0], note, sizeof note);
        mt_format_bytes(bytes, sizeof bytes, t[0].bytes);
        mt_text_escape(path, sizeof path, t[0].path);
        mt_text_escape(why, sizeof why, t[0].why);
        if (!t[0].readable)
            fprintf(stderr, "memtrace run: no usable trace in %s: %s\n", path, why);
        else if (!t[0].complete)
            fprintf(stderr, "memtrace run: trace %s is cut short (%s); %llu samples, %s "
                            "allocated up to there\n", path, why,
                    (unsigned long long)t[0].samples, bytes);
        else if (t[0].allocs == 0 && t[0].ended) {
            /* Only a trace its process finished says how much it allocated. */
            char interval[32];
            mt_format_bytes(interval, sizeof interval, 1 / rate);
            fprintf(stderr, "memtrace run: trace written to %s, with no samples: the "
                            "program allocated less than about one sampling interval "
                            "(%s) in all; try a smaller --interval\n", path, interval);
        } else if (t[0].allocs == 0)
            fprintf(stderr, "memtrace run: trace written to %s, with no samples (%s)\n",
                    path, note);
        else
            fprintf(stderr, "memtrace run: trace written to %s: %llu samples, %s allocated "
                            "(estimated)%s%s%s\n", path, (unsigned long long)t[0].samples,
                    bytes, t[0].ended ? "" : " (", t[0].ended ? "" : note,
                    t[0].ended ? "" : ")");
    } else {
        fprintf(stderr, "memtrace run: %zu traces, largest first:\n", n);
        fprintf(stderr, "  %8s %8s %10s  %-40s %s\n", "pid", "samples", "allocated",
                "command", "file");
        for (size_t i = 0; i < n; i++) {
            char cmd[44];
            if (mt_text_escape(cmd, sizeof cmd, t[i].command) > 40) {
                size_t k = mt_text_escape(cmd, 38, t[i].command);   /* (cut whole) */
                memcpy(cmd + k, "...", 4);
            }
            describe(&t[i], note, sizeof note);
            char enote[sizeof note];
            mt_text_escape(enote, sizeof enote, note);
            mt_text_escape(path, sizeof path, t[i].path);
            mt_format_bytes(bytes, sizeof bytes, t[i].bytes);
            fprintf(stderr, "  %8llu %8llu %10s  %-40s %s%s%s%s\n",
                    (unsigned long long)t[i].pid, (unsigned long long)t[i].samples, bytes, cmd,
                    path, note[0] ? " (" : "", enote, note[0] ? ")" : "");
        }
    }
    free(t);
    return n;
}

/* Reads the command line into a: -1 to go on, else the exit status. */
static int run_parse(int argc, char **argv, run_args *a)
{
    const opt_spec opts[] = {
        OPT("output", 'o', OPT_STRING, &a->output, "FILE",
            "trace file (default: CMD.PID.ctf in the current directory)"),
        RECORD_OPTS(&a->rec,
            "mean bytes between samples (512k, 1MiB: docs/units.md)\n(default 512k)",
            "sampling probability per byte (= 1 / interval)",
            "at most N frames per call stack (default 128); a\n"
            "deeper stack ends with a [truncated] frame",
            "how call stacks are captured: dwarf (default; follows\n"
            "code built without frame pointers, e.g. distro\n"
            "libraries), fp (frame pointers only, cheapest), auto\n"
            "(frame pointers when the chain reaches the stack's\nbase, else dwarf)"),
        OPT("no-follow", 0, OPT_FLAG, &a->no_follow, NULL,
            "trace only CMD itself, not the processes it starts"),
        OPT("no-name-cache", 0, OPT_FLAG, &a->no_name_cache, NULL,
            "name frames from the debug information alone, without\n"
            "reading or writing the name cache (memtrace symbolize)"),
        OPT("leaks", 0, OPT_FLAG, &a->leaks, NULL,
            "when the program exits, tell which sampled blocks\n"
            "still live nothing reachable points to (lost) from\n"
            "the others (reachable): FILE.leaks, read by top --by\n"
            "lost, stats, check --max-lost (docs/leaks.md)"),
        OPT("paused", 0, OPT_FLAG, &a->paused, NULL,
            "start dormant (interposed, not sampling); start and\n"
            "stop recordings with 'memtrace ctl PID start|stop';\n"
            "each recording is a trace of its own, FILE-0001,\nFILE-0002, ..."),
        OPT("signal", 0, OPT_CALL, NULL, "SIG",
            "the signal a plain kill toggles recording with (default\n"
            "USR2; 'memtrace ctl' needs none; choose one the\n"
            "program does not use: USR1, RTMIN+3, ...);\n"
            "without --paused, recording starts at once in FILE-0001",
            .fn = take_signal, .ctx = &a->signame),
        OPT("duration", 0, OPT_CALL, NULL, "T", "end each recording after T (90s, 10m, 1h)",
            .fn = take_duration, .ctx = &a->duration),
        OPT("pprof-every", 0, OPT_CALL, NULL, "T",
            "write a pprof heap profile of the recording under way\n"
            "every T (60s, 5m) and at the end, into --pprof-dir as\n"
            "NAME.PID.UNIXTIME.pb.gz (mode 0600), for Pyroscope\n"
            "or Parca; local debug information only",
            .fn = take_pprof_every, .ctx = &a->pprof_every),
        OPT("pprof-dir", 0, OPT_STRING, &a->pprof_dir, "DIR",
            "where the snapshots go (an existing directory)"),
        RUN_PUSH_OPTS(&a->push),
        OPT("no-trace", 0, OPT_FLAG, &a->no_trace, NULL,
            "with --push or --pprof-every: keep no trace; the\n"
            "recording goes to a private temporary directory\n"
            "($TMPDIR or /tmp) in pieces of 64m, the 2 latest\n"
            "kept (unless --rotate-size/--rotate-time/--keep say\n"
            "otherwise), removed at the end"),
        OPT("rotate-size", 0, OPT_CALL, NULL, "SIZE",
            "write the trace in pieces of about SIZE each (64k or\n"
            "more: 100m, 1g): FILE.part0001, FILE.part0002, ...;\n"
            "each piece is a trace of its own that starts with the\n"
            "blocks still live, carried over from the one before",
            .fn = take_rotate_size, .ctx = &a->rotate_size),
        OPT("rotate-time", 0, OPT_CALL, NULL, "T", "a new piece every T (1s or more: 10m, 1h, 1d)",
            .fn = take_rotate_time, .ctx = &a->rotate_time),
        OPT("keep", 0, OPT_CALL, NULL, "N",
            "keep only the N latest pieces (older ones are deleted),\n"
            "so that a long run's traces take bounded disk space",
            .fn = take_keep, .ctx = &a->keep),
    };
    const opt_command cmd = {"run", run_head, run_tail, 24, opts, sizeof opts / sizeof opts[0]};
    int first, rc = opt_parse_first(&cmd, argc, argv, &first);
    if (rc >= 0)
        return rc;
    if (first >= argc) {
        fprintf(stderr, "memtrace run: expected a command to run\n");
        return opt_usage("run");
    }
    if (run_check(a))
        return 2;
    a->cmd = argv + first;
    return -1;
}

/* Where the run writes: the recorder's library and, with --no-trace, the
 * private directory and the trace in it. */
typedef struct run_plan {
    char lib[PATH_MAX];
    char tmpdir[PATH_MAX - 128], tmpfile[PATH_MAX];   /* "": no --no-trace */
} run_plan;

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

/* Finds the library, makes --no-trace's directory and checks that the
 * trace and the snapshots can be written: -1 to go on, else the status. */
static int run_prepare(run_args *a, run_plan *p)
{
    if (launch_find_library(p->lib, sizeof p->lib) != 0) {
        fprintf(stderr, "memtrace run: cannot find libmemtrace.so (looked next to the memtrace "
                        "binary and in ../lib; set MEMTRACE_LIB)\n");
        return 1;
    }
    char abs[PATH_MAX];
    if (p->lib[0] != '/' && realpath(p->lib, abs))
        snprintf(p->lib, sizeof p->lib, "%s", abs);
    /* --no-trace: the recording in a private directory, rotated (disk
     * bounded), removed at the end */
    if (a->no_trace) {
        const char *base = getenv("TMPDIR");
        snprintf(p->tmpdir, sizeof p->tmpdir, "%s/memtrace-run.XXXXXX",
                 base && *base ? base : "/tmp");
        if (!mkdtemp(p->tmpdir)) {
            fprintf(stderr, "memtrace run: --no-trace: cannot make a directory in %s: %s\n",
                    base && *base ? base : "/tmp", strerror(errno));
            return 1;
        }
        snprintf(p->tmpfile, sizeof p->tmpfile, "%s/%s.ctf", p->tmpdir, base_name(a->cmd[0]));
        a->output = p->tmpfile;
        if (!a->rotate_size && !a->rotate_time)
            a->rotate_size = "64m";
        if (!a->keep)
            a->keep = "2";
    }
    char why[PATH_MAX + 64];
    int pieces = a->rotate_size || a->rotate_time;   /* FILE.partNNNN files beside FILE */
    const char *problem = a->output
        ? launch_output_problem(a->output, !a->no_follow || pieces, why, sizeof why)
        : launch_dir_problem(".", why, sizeof why);
    if (problem) {
        if (a->output)
            fprintf(stderr, "memtrace run: %s: %s\n", a->output, problem);
        else
            fprintf(stderr, "memtrace run: cannot write the trace in the current directory: "
                            "%s (give -o FILE)\n", problem);
        return 2;
    }
    if (a->pprof_dir && (problem = launch_dir_problem(a->pprof_dir, why, sizeof why))) {
        fprintf(stderr, "memtrace run: --pprof-dir: %s\n", problem);
        if (p->tmpdir[0])
            rmdir(p->tmpdir);
        return 2;
    }
    return -1;
}

/* Starts the command with the recorder and waits for it, as a shell waits
 * for a foreground job (^C is for the command), taking the snapshots
 * meanwhile. file: the trace's name as the recorder has it. -1 with
 * *status, or the exit status when the command could not be started. */
static int run_launch(const run_args *a, const run_plan *p, run_push *push, char *file,
                      size_t cap, pid_t *pid, int *status)
{
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        cwd[0] = '\0';
    launch_spec spec = {a->cmd, p->lib, a->output, cwd, a->rec.rate, a->rec.unwind,
                        a->rec.depth, a->paused, a->signame, a->duration, a->rotate_size,
                        a->rotate_time, a->keep, a->leaks, !a->no_follow};
    *pid = launch_start(&spec, file, cap);
    if (*pid < 0)
        return 1;
    if (push && file[0]) {   /* the counts for 'memtrace ctl PID status' */
        char abs[2 * PATH_MAX + 64];
        int rel = file[0] != '/' && cwd[0];   /* as the child made MEMTRACE */
        snprintf(abs, sizeof abs, "%s%s%s", rel ? cwd : "", rel && strcmp(cwd, "/") ? "/" : "",
                 file);
        run_push_status_at(push, abs);
    }
    launch_fg fg;
    launch_fg_begin(&fg);
    if (a->paused)
        fprintf(stderr, "memtrace run: process %d starts dormant; record with 'memtrace ctl "
                        "%d start' (and stop)\n", (int)*pid, (int)*pid);
    *status = 0;
    if (a->pprof_every || push)
        run_wait_with_snapshots(*pid, file, a->pprof_every, a->pprof_dir, push,
                                base_name(a->cmd[0]), status);
    else
        launch_wait(*pid, status);
    launch_fg_end(&fg);
    return -1;
}

/* After the command: what became of it and of its traces, on stderr.
 * Returns the run's exit status (the command's). */
static int run_report(const run_args *a, const run_plan *p, const char *file,
                      const struct timespec *start, pid_t pid, int status)
{
    int rc = WIFEXITED(status) ? WEXITSTATUS(status)
           : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    if (WIFSIGNALED(status))
        say_killed(status);
    char **paths;
    size_t ntraces = traces_of_run(file, start, &paths);
    if (ntraces == 0 && (rc == 127 || rc == 126))
        ;   /* the command could not be run: said above */
    else if (ntraces == 0 && a->paused)
        fprintf(stderr, "memtrace run: no recording was made: the program ran dormant "
                        "throughout ('memtrace ctl %d start' starts one)\n", (int)pid);
    else if (a->no_trace) {
        fprintf(stderr, "memtrace run: no trace kept (--no-trace)\n");
        remove_dir(p->tmpdir);
    } else {
        symbolize_run_traces(paths, ntraces); /* names for the raw frames */
        summarize(file, paths, ntraces, a->rec.rate);
    }
    run_trace_files_free(paths, ntraces);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    run_args a = {.rec = {.cmd = "run", .rate = MEMTRACE_DEFAULT_RATE}, .push = {.cmd = "run"}};
    int rc = run_parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (a.no_name_cache)
        trace_names_cache_off();
    static run_plan p;   /* paths: too big for the stack of a small thread */
    if ((rc = run_prepare(&a, &p)) >= 0)
        return rc;
    /* the sender starts before the program: its errors stop the run here */
    int push_bad;
    run_push *push = run_push_begin(&a.push, "run", &push_bad);
    if (push_bad) {
        if (p.tmpdir[0])
            rmdir(p.tmpdir);
        return 2;
    }
    struct timespec start;
    clock_gettime(CLOCK_REALTIME, &start);
    char file[PATH_MAX + 64];
    pid_t pid;
    int status;
    if ((rc = run_launch(&a, &p, push, file, sizeof file, &pid, &status)) >= 0) {
        if (p.tmpdir[0])
            rmdir(p.tmpdir);
        run_push_end(push, "run");
        return rc;
    }
    rc = run_report(&a, &p, file, &start, pid, status);
    run_push_end(push, "run");
    return rc;
}
