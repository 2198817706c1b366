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
#include <getopt.h>
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
#include "run_push.h"
#include "run_traces.h"
#include "runfiles.h"
#include "../lib/launch/launch.h"
#include "trace_names.h"

static void usage(FILE *f)
{
    fprintf(f,
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
        "\n"
        "  -o, --output FILE     trace file (default: CMD.PID.ctf in the current directory)\n"
        "  -i, --interval BYTES  mean bytes between samples (512k, 1MiB: docs/units.md)\n"
        "                        (default 512k)\n"
        "  -r, --rate R          sampling probability per byte (= 1 / interval)\n"
        "  -d, --depth N         at most N frames per call stack (default 128); a\n"
        "                        deeper stack ends with a [truncated] frame\n"
        "  -u, --unwind MODE     how call stacks are captured: dwarf (default; follows\n"
        "                        code built without frame pointers, e.g. distro\n"
        "                        libraries), fp (frame pointers only, cheapest), auto\n"
        "                        (frame pointers when the chain reaches the stack's\n"
        "                        base, else dwarf)\n"
        "      --no-follow       trace only CMD itself, not the processes it starts\n"
        "      --no-name-cache   name frames from the debug information alone, without\n"
        "                        reading or writing the name cache (memtrace symbolize)\n"
        "      --leaks           when the program exits, tell which sampled blocks\n"
        "                        still live nothing reachable points to (lost) from\n"
        "                        the others (reachable): FILE.leaks, read by top --by\n"
        "                        lost, stats, check --max-lost (docs/leaks.md)\n"
        "      --paused          start dormant (interposed, not sampling); start and\n"
        "                        stop recordings with 'memtrace ctl PID start|stop';\n"
        "                        each recording is a trace of its own, FILE-0001,\n"
        "                        FILE-0002, ...\n"
        "      --signal SIG      the signal a plain kill toggles recording with (default\n"
        "                        USR2; 'memtrace ctl' needs none; choose one the\n"
        "                        program does not use: USR1, RTMIN+3, ...);\n"
        "                        without --paused, recording starts at once in FILE-0001\n"
        "      --duration T      end each recording after T (90s, 10m, 1h)\n"
        "      --pprof-every T   write a pprof heap profile of the recording under way\n"
        "                        every T (60s, 5m) and at the end, into --pprof-dir as\n"
        "                        NAME.PID.UNIXTIME.pb.gz (mode 0600), for Pyroscope\n"
        "                        or Parca; local debug information only\n"
        "      --pprof-dir DIR   where the snapshots go (an existing directory)\n"
        "      --push URL        send a heap profile every --push-every and at the end\n"
        "                        to Pyroscope, Parca or an OpenTelemetry collector, from\n"
        "                        this process (queue of 16, retries; drops counted in\n"
        "                        the summary; docs/fleet.md)\n"
        "      --push-every T    how often (at least 100ms; default 60s)\n"
        "      --push-format F   pyroscope, parca, otlp or pyroscope-ingest (guessed\n"
        "                        from a URL ending /push.v1.PusherService/Push,\n"
        "                        /profiles/writeraw, /v1development/profiles or\n"
        "                        /ingest)\n"
        "      --label K=V       a label on every profile (repeatable; service_name\n"
        "                        defaults to the program's name)\n"
        "      --push-tenant ID  send X-Scope-OrgID: ID\n"
        "      --push-auth-file FILE  one line, 'Bearer TOKEN' or 'USER:PASSWORD';\n"
        "                        refused unless only its owner may read it\n"
        "      --no-trace        with --push or --pprof-every: keep no trace; the\n"
        "                        recording goes to a private temporary directory\n"
        "                        ($TMPDIR or /tmp) in pieces of 64m, the 2 latest\n"
        "                        kept (unless --rotate-size/--rotate-time/--keep say\n"
        "                        otherwise), removed at the end\n"
        "      --rotate-size SIZE  write the trace in pieces of about SIZE each (64k or\n"
        "                        more: 100m, 1g): FILE.part0001, FILE.part0002, ...;\n"
        "                        each piece is a trace of its own that starts with the\n"
        "                        blocks still live, carried over from the one before\n"
        "      --rotate-time T   a new piece every T (1s or more: 10m, 1h, 1d)\n"
        "      --keep N          keep only the N latest pieces (older ones are deleted),\n"
        "                        so that a long run's traces take bounded disk space\n"
        "  -h, --help            this help\n"
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
        "Environment: MEMTRACE_LIB overrides the path of libmemtrace.so.\n");
}

int run_sampling_option(const char *cmd, int c, const char *arg, double *rate, int *given)
{
    if (c == 'i') {
        uint64_t v;
        if (mt_units_size(arg, &v) != MT_UNITS_OK || v < 1) {
            fprintf(stderr, "memtrace %s: bad interval '%s' (a size of at least 1 byte, "
                            "such as 512k or 1MiB)\n", cmd, arg);
            return 2;
        }
        *rate = 1.0 / (double)v;
        *given |= 1;
        return 0;
    }
    if (mt_recconf_rate(arg, rate) != 0) {
        fprintf(stderr, "memtrace %s: bad rate '%s' (probability per byte, (0, 1])\n", cmd, arg);
        return 2;
    }
    *given |= 2;
    return 0;
}

int run_depth_option(const char *cmd, const char *arg, int *depth)
{
    if (mt_recconf_depth(arg, depth) != 0) {
        fprintf(stderr, "memtrace %s: bad depth '%s' (1..1024)\n", cmd, arg);
        return 2;
    }
    return 0;
}

int run_unwind_option(const char *cmd, const char *arg, int *mode)
{
    if ((*mode = mt_recconf_unwind(arg)) < 0) {
        fprintf(stderr, "memtrace %s: bad unwind mode '%s' (fp, dwarf or auto)\n", cmd, arg);
        return 2;
    }
    return 0;
}

int run_sampling_check(const char *cmd, int given)
{
    if (given == 3) {
        fprintf(stderr, "memtrace %s: give --interval or --rate, not both\n", cmd);
        return 2;
    }
    return 0;
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

int cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {
        { "output", required_argument, NULL, 'o' },
        { "interval", required_argument, NULL, 'i' },
        { "rate", required_argument, NULL, 'r' },
        { "depth", required_argument, NULL, 'd' },
        { "unwind", required_argument, NULL, 'u' },
        { "no-follow", no_argument, NULL, 'F' },
        { "leaks", no_argument, NULL, 'L' },
        { "paused", no_argument, NULL, 'P' },
        { "signal", required_argument, NULL, 'S' },
        { "duration", required_argument, NULL, 'D' },
        { "pprof-every", required_argument, NULL, 'E' },
        { "rotate-size", required_argument, NULL, 'Z' },
        { "rotate-time", required_argument, NULL, 'T' },
        { "keep", required_argument, NULL, 'K' },
        { "pprof-dir", required_argument, NULL, 'R' },
        { "no-trace", no_argument, NULL, 'N' },
        { "no-name-cache", no_argument, NULL, 0x180 },
        RUN_PUSH_LONGOPTS,
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *output = NULL;
    double rate = MEMTRACE_DEFAULT_RATE;
    int sampling = 0, follow = 1;   /* sampling: run_sampling_option */
    int depth = 0, unwind = 0;
    int paused = 0, leaks = 0;
    const char *signame = NULL, *duration = NULL, *pprof_dir = NULL;
    const char *rotate_size = NULL, *rotate_time = NULL, *keep = NULL;
    double pprof_every = 0;
    int no_trace = 0;
    run_push_opts push_opts = { 0 };
    int c;

    optind = 1;
    while ((c = getopt_long(argc, argv, "+o:i:r:d:u:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            output = optarg;
            break;
        case 'i':
        case 'r':
            if (run_sampling_option("run", c, optarg, &rate, &sampling))
                return 2;
            break;
        case 'd':
            if (run_depth_option("run", optarg, &depth))
                return 2;
            break;
        case 'u':
            if (run_unwind_option("run", optarg, &unwind))
                return 2;
            break;
        case 'F':
            follow = 0;
            break;
        case 'L':
            leaks = 1;
            break;
        case 'P':
            paused = 1;
            break;
        case 'S':
            if (!mt_ctl_signal_number(optarg)) {
                fprintf(stderr, "memtrace run: --signal %s: not a signal the recorder can use "
                                "(USR1, USR2, HUP, PROF, URG, WINCH, PWR, VTALRM, TTIN, TTOU, "
                                "RTMIN+N)\n", optarg);
                return 2;
            }
            signame = optarg;
            break;
        case 'D':
            if (mt_ctl_time_ms_at_least(optarg, 1) < 0) {
                fprintf(stderr, "memtrace run: --duration %s: expected a time such as 90s, "
                                "10m, 1h\n", optarg);
                return 2;
            }
            duration = optarg;
            break;
        case 'E': {
            long long ms = mt_ctl_time_ms_at_least(optarg, 1000);
            if (ms < 0) {   /* the files are named by the second */
                fprintf(stderr, "memtrace run: --pprof-every %s: expected a time of at least "
                                "1s, such as 60s or 5m\n", optarg);
                return 2;
            }
            pprof_every = ms / 1000.0;
            break;
        }
        case 'R':
            pprof_dir = optarg;
            break;
        case 'N':
            no_trace = 1;
            break;
        case 'Z':
            if (mt_ctl_size_at_least(optarg, MT_ROTATE_MIN_SIZE) < 0) {
                fprintf(stderr, "memtrace run: --rotate-size %s: expected a size from 64k to "
                                "1e18 bytes, such as 100m or 1g\n", optarg);
                return 2;
            }
            rotate_size = optarg;
            break;
        case 'T':
            if (mt_ctl_time_ms_at_least(optarg, MT_ROTATE_MIN_MS) < 0) {
                fprintf(stderr, "memtrace run: --rotate-time %s: expected a time of at least "
                                "1s, such as 10m, 1h or 1d\n", optarg);
                return 2;
            }
            rotate_time = optarg;
            break;
        case 'K': {
            char *end;
            long k = strtol(optarg, &end, 10);
            if (*end || end == optarg || k < 1 || k > 1000000) {
                fprintf(stderr, "memtrace run: --keep %s: expected a number of pieces in "
                                "[1, 1000000]\n", optarg);
                return 2;
            }
            keep = optarg;
            break;
        }
        case 0x180:
            trace_names_cache_off();
            break;
        case 'h':
            usage(stdout);
            return 0;
        default: {
            int r = run_push_option(&push_opts, "run", c, optarg);
            if (r > 0)
                break;
            if (r == 0)
                usage(stderr);
            return 2;
        }
        }
    }
    if (run_sampling_check("run", sampling))
        return 2;
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    if (leaks && (rotate_size || rotate_time)) {
        fprintf(stderr, "memtrace run: --leaks: not with --rotate-size or --rotate-time (verdicts "
                "name the blocks of one trace)\n");
        return 2;
    }
    if (keep && !rotate_size && !rotate_time) {
        fprintf(stderr, "memtrace run: --keep needs --rotate-size or --rotate-time\n");
        return 2;
    }
    if (!pprof_every != !pprof_dir) {
        fprintf(stderr, "memtrace run: give --pprof-every and --pprof-dir together\n");
        return 2;
    }
    if (no_trace && (output || leaks || (!push_opts.url && !pprof_every))) {
        fprintf(stderr, "memtrace run: --no-trace %s\n", output ? "and -o: choose one"
                : leaks ? "and --leaks: the verdicts would go with the trace"
                : "needs --push URL or --pprof-every (else nothing would be kept)");
        return 2;
    }
    char **cmd = argv + optind;

    char lib[PATH_MAX];
    if (launch_find_library(lib, sizeof lib) != 0) {
        fprintf(stderr, "memtrace run: cannot find libmemtrace.so (looked next to the memtrace "
                        "binary and in ../lib; set MEMTRACE_LIB)\n");
        return 1;
    }
    if (lib[0] != '/') {
        char abs[PATH_MAX];
        if (realpath(lib, abs))
            snprintf(lib, sizeof lib, "%s", abs);
    }

    /* --no-trace: the recording in a private directory, rotated (disk
     * bounded), removed at the end */
    char tmpdir[PATH_MAX - 128] = "", tmpfile[PATH_MAX];
    if (no_trace) {
        const char *base = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/memtrace-run.XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(tmpdir)) {
            fprintf(stderr, "memtrace run: --no-trace: cannot make a directory in %s: %s\n",
                    base && *base ? base : "/tmp", strerror(errno));
            return 1;
        }
        const char *b = strrchr(cmd[0], '/');
        snprintf(tmpfile, sizeof tmpfile, "%s/%s.ctf", tmpdir, b ? b + 1 : cmd[0]);
        output = tmpfile;
        if (!rotate_size && !rotate_time)
            rotate_size = "64m";
        if (!keep)
            keep = "2";
    }
    char why[PATH_MAX + 64];
    int pieces = rotate_size || rotate_time;   /* FILE.partNNNN files beside FILE */
    const char *problem = output ? launch_output_problem(output, follow || pieces, why, sizeof why)
                                 : launch_dir_problem(".", why, sizeof why);
    if (problem) {
        if (output)
            fprintf(stderr, "memtrace run: %s: %s\n", output, problem);
        else
            fprintf(stderr, "memtrace run: cannot write the trace in the current directory: "
                            "%s (give -o FILE)\n", problem);
        return 2;
    }
    if (pprof_dir && (problem = launch_dir_problem(pprof_dir, why, sizeof why))) {
        fprintf(stderr, "memtrace run: --pprof-dir: %s\n", problem);
        if (tmpdir[0])
            rmdir(tmpdir);
        return 2;
    }
    /* the sender starts before the program: its errors stop the run here */
    int push_bad;
    run_push *push = run_push_begin(&push_opts, "run", &push_bad);
    if (push_bad) {
        if (tmpdir[0])
            rmdir(tmpdir);
        return 2;
    }
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        cwd[0] = '\0';

    struct timespec start;
    clock_gettime(CLOCK_REALTIME, &start);
    launch_spec spec = {cmd, lib, output, cwd, rate, unwind, depth, paused, signame, duration,
                        rotate_size, rotate_time, keep, leaks, follow};
    char file[PATH_MAX + 64];
    pid_t pid = launch_start(&spec, file, sizeof file);
    if (pid < 0) {
        if (tmpdir[0])
            rmdir(tmpdir);
        run_push_end(push, "run");
        return 1;
    }
    if (push && file[0]) {   /* the counts for 'memtrace ctl PID status' */
        char abs[2 * PATH_MAX + 64];
        int rel = file[0] != '/' && cwd[0];   /* as the child made MEMTRACE */
        snprintf(abs, sizeof abs, "%s%s%s", rel ? cwd : "", rel && strcmp(cwd, "/") ? "/" : "",
                 file);
        run_push_status_at(push, abs);
    }

    /* Like a shell waiting for a foreground job: ^C is for the command. */
    launch_fg fg;
    launch_fg_begin(&fg);
    if (paused)
        fprintf(stderr, "memtrace run: process %d starts dormant; record with 'memtrace ctl "
                        "%d start' (and stop)\n", (int)pid, (int)pid);
    int status = 0;
    if (pprof_every || push) {
        const char *b = strrchr(cmd[0], '/');
        run_wait_with_snapshots(pid, file, pprof_every, pprof_dir, push, b ? b + 1 : cmd[0],
                                &status);
    } else {
        launch_wait(pid, &status);
    }
    launch_fg_end(&fg);

    int rc = WIFEXITED(status) ? WEXITSTATUS(status)
           : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    if (WIFSIGNALED(status))
        say_killed(status);
    char **paths;
    size_t ntraces = traces_of_run(file, &start, &paths);
    if (ntraces == 0 && (rc == 127 || rc == 126)) {
        run_push_end(push, "run");
        return rc;   /* the command could not be run: said above */
    }
    if (ntraces == 0 && paused) {
        fprintf(stderr, "memtrace run: no recording was made: the program ran dormant "
                        "throughout ('memtrace ctl %d start' starts one)\n", (int)pid);
        run_push_end(push, "run");
        return rc;
    }
    if (no_trace) {
        fprintf(stderr, "memtrace run: no trace kept (--no-trace)\n");
        remove_dir(tmpdir);
    } else {
        symbolize_run_traces(paths, ntraces); /* names for the raw frames */
        summarize(file, paths, ntraces, rate);
    }
    run_push_end(push, "run");
    run_trace_files_free(paths, ntraces);
    return rc;
}
