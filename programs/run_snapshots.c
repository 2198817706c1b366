/*
 * run_snapshots.c - 'memtrace run --pprof-every T --pprof-dir DIR': while
 * the program runs, the memtrace process (never the program) reads the
 * trace being written and writes a pprof heap profile of it every T
 * seconds, in the form Pyroscope's /ingest and Parca's WriteRaw take (Go's
 * heap profile: alloc_objects, alloc_space, inuse_objects, inuse_space).
 * inuse_* is what is live at the snapshot; alloc_* is cumulative since the
 * recording started, as in Go's heap profiles (the backends compute the
 * deltas). Each file appears complete under its final name (written to a
 * temporary name, then renamed), so an uploader never reads half a file.
 * The trace under way names its frames module+0xoffset (the recorder does
 * not symbolize): each snapshot symbolizes a copy of it first, so the
 * profiles carry function names, files and lines. The trace snapshotted is
 * the one the command's process has open: after a wrapper (env, a pyenv
 * shim) exec'd the real program, that program's FILE.PID, and the files
 * are named after the program running (/proc/PID/comm).
 */
#include "run_snapshots.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "memtrace/analyze.h"
#include "trace_names.h"
#include "memtrace/present.h"
#include "memtrace/symbolize.h"
#include "safefile.h"
#include "fdsink.h"
#include "../lib/inject/proc_trace.h"
#include "runfiles.h"
#include "run_push.h"

/* The last packet of a trace being written may be incomplete: expected
 * here, so not reported. */
static void quiet(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Copies what src holds now to a new temporary file beside dst (an
 * unpredictable name, created exclusively, mode 0600: safefile.h), whose
 * name is left in dst->tmp (removed with mt_outfile_abort). 0 or -1. */
static int copy_file(const char *src, mt_outfile *dst, const char *dst_path)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    const char *why;
    if (mt_outfile_open(dst, dst_path, 0600, &why) != 0) {
        close(in);
        return -1;
    }
    int out = dst->fd;
    char buf[1 << 16];
    ssize_t n;
    int rc = 0;
    while ((n = read(in, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = -1;
            break;
        }
        if (mt_write_full(out, buf, (size_t)n, NULL) < 0) {
            rc = -1;
            break;
        }
    }
    close(in);
    dst->fd = -1;
    if (close(out) < 0)
        rc = -1;
    if (rc != 0)
        mt_outfile_abort(dst);
    return rc;
}

/* One snapshot of trace into dir (if not NULL) and to push (if not NULL;
 * whole: the trace is finished, run_push_profile). 0 or -1 (message
 * given). */
static int snapshot(const char *cmd, const char *trace, const char *copy_dir, const char *dir,
                    run_push *push, const char *name, int pid, int whole)
{
    char *err = NULL;
    char copy_path[2 * PATH_MAX], tdir[PATH_MAX];
    if (!dir && copy_dir) {   /* pushing only, the copy where the caller says */
        snprintf(tdir, sizeof tdir, "%s", copy_dir);
    } else if (!dir) {   /* pushing only: the symbolized copy goes beside the trace */
        snprintf(tdir, sizeof tdir, "%s", trace);
        char *slash = strrchr(tdir, '/');
        if (slash && slash != tdir)
            *slash = '\0';
        else
            snprintf(tdir, sizeof tdir, "%s", slash ? "/" : ".");
    }
    mt_runname_snapshot_copy(copy_path, sizeof copy_path, dir ? dir : tdir, name, pid);
    mt_outfile copy = { .fd = -1 };
    const char *load = trace;
    if (copy_file(trace, &copy, copy_path) == 0) {
        /* names for the raw frames; a failure leaves them raw, still counted */
        mt_symbolize_options so = { .on_warning = quiet,
                                    .debug_root = trace_names_debug_root() };
        if (mt_symbolize_file(copy.tmp, &so, NULL, &err) == 0)
            load = copy.tmp;
        free(err);
        err = NULL;
    }
    mt_read_request rq = { .paths = &load, .n = 1, .on_warning = quiet };  /* every allocation */
    mt_model *m = mt_read(&rq, &err);
    if (copy.path)
        mt_outfile_abort(&copy);   /* (the copy is never renamed: removed) */
    if (!m) {
        fprintf(stderr, "memtrace %s: snapshot of %s: %s\n", cmd, trace, err ? err : "unreadable");
        free(err);
        return -1;
    }
    mt_filter *f = mt_filter_parse("", &err, NULL);
    /* sites in the user's code, as 'memtrace pprof' makes them */
    mt_plumbing *pl = mt_plumbing_new(1);
    mt_selection *s = f ? mt_select_sites(m, f, MT_TIME_END, pl, NULL) : NULL;
    mt_plumbing_free(pl);
    int rc = -1;
    if (s && push)
        run_push_profile(push, s, name, pid, whole);
    if (s && !dir) {
        rc = 0;
    } else if (s) {
        char out[PATH_MAX];
        long long t = (long long)time(NULL);
        mt_runname_pprof(out, sizeof out, dir, name, pid, t);
        mt_pprof_options po = { .level = 6 };
        /* Written under an unpredictable name created exclusively, then
         * renamed: never through a link another user planted in dir; mode
         * 0600, as the trace it comes from. */
        mt_outfile of;
        const char *why = NULL;
        if (mt_outfile_open(&of, out, 0600, &why) == 0) {
            if (mt_write_pprof_fd(of.fd, s, &po, &err) == 0)
                rc = mt_outfile_commit(&of, &why);
            else
                mt_outfile_abort(&of);
        }
        if (rc != 0)
            fprintf(stderr, "memtrace %s: snapshot %s: %s\n", cmd, out,
                    err ? err : why ? why : "cannot write it");
    } else {
        fprintf(stderr, "memtrace %s: snapshot of %s: %s\n", cmd, trace, err ? err : "out of memory");
    }
    free(err);
    mt_selection_free(s);
    mt_filter_free(f);
    mt_model_free(m);
    return rc;
}

/* The program process pid runs now (/proc/PID/comm: after a wrapper such
 * as env exec'd it, not the wrapper), else fallback. */
static const char *running_name(pid_t pid, const char *fallback, char *buf, size_t cap)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/comm", (int)pid);
    FILE *f = fopen(p, "re");
    if (!f)
        return fallback;
    const char *r = fallback;
    if (fgets(buf, (int)cap, f)) {
        buf[strcspn(buf, "\n")] = '\0';
        if (buf[0] && !strchr(buf, '/') && buf[0] != '.')
            r = buf;
    }
    fclose(f);
    return r;
}

void run_snapshots_init(run_snapshots *s, const char *cmd, double every_s, const char *dir,
                        run_push *push, const char *name)
{
    memset(s, 0, sizeof *s);
    s->cmd = cmd;
    s->every_s = every_s;
    s->dir = dir;
    s->push = push;
    snprintf(s->name, sizeof s->name, "%s", name);
    /* two clocks: the files' (every_s, dir) and the pushes' */
    s->next = dir ? now_s() + every_s : 1e300;
    s->next_push = push ? now_s() + run_push_every(push) : 1e300;
    /* Local debug information only, as after the run (symbolize_run_traces):
     * no build-id leaves the machine, no snapshot waits on a server. (The
     * program was started already: its environment is its own.) */
    unsetenv("DEBUGINFOD_URLS");
}

int run_snapshots_due(run_snapshots *s)
{
    double t = now_s();
    s->to_dir = t >= s->next;
    s->to_push = t >= s->next_push;
    if (s->to_dir) {
        s->next += s->every_s;
        if (s->next < now_s())
            s->next = now_s() + s->every_s;   /* a slow snapshot: skip, don't pile up */
    }
    if (s->to_push) {
        double e = run_push_every(s->push);
        s->next_push += e;
        if (s->next_push < now_s())
            s->next_push = now_s() + e;
    }
    return s->to_dir || s->to_push;
}

void run_snapshots_take(run_snapshots *s, const char *trace, const char *shown,
                        const char *copy_dir, const char *name, int pid)
{
    if (name)
        snprintf(s->name, sizeof s->name, "%s", name);
    snapshot(s->cmd, trace, copy_dir, s->to_dir ? s->dir : NULL, s->to_push ? s->push : NULL,
             s->name, pid, 0);
    snprintf(s->last, sizeof s->last, "%s", shown ? shown : trace);
}

void run_snapshots_final(run_snapshots *s, const char *trace, const char *copy_dir, int pid)
{
    snapshot(s->cmd, trace, copy_dir, s->dir, s->push, s->name, pid, 1);
}

int run_snapshots_open(const char *path, uid_t owner, char *out, size_t cap)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (st.st_uid != owner && st.st_uid != geteuid())) {
        close(fd);
        return -1;
    }
    snprintf(out, cap, "/proc/self/fd/%d", fd);
    return fd;
}

/* The piece after trace (a piece of a rotated recording of the run
 * named after file), if it is there: 1 and its path in out. */
static int next_piece(const char *file, const char *trace, char *out, size_t cap)
{
    mt_runname n;
    if (!mt_runname_parse(file, trace, &n) || !n.piece || n.kind != MT_RUNFILE_TRACE)
        return 0;
    char base[PATH_MAX];
    const char *slash = strrchr(trace, '/'), *name = strrchr(file, '/');
    name = name ? name + 1 : file;
    if (snprintf(base, sizeof base, "%.*s%s", slash ? (int)(slash - trace + 1) : 0, trace,
                 name) >= (int)sizeof base)
        return 0;
    n.piece++;
    return mt_runname_make(out, cap, base, &n) > 0 && access(out, R_OK) == 0;
}

void run_snapshots_checked(run_snapshots *s, uid_t owner)
{
    s->checked = 1;
    s->owner = owner;
}

/* A snapshot of path: to the files (to_dir) and the push (to_push;
 * whole: path is a finished piece or the recording's end); opened as
 * run_snapshots_open does when s is checked, the copy beside it. */
static void shot(run_snapshots *s, const char *path, int to_dir, int to_push, int pid, int whole)
{
    if (!s->checked) {
        snapshot(s->cmd, path, NULL, to_dir ? s->dir : NULL, to_push ? s->push : NULL, s->name,
                 pid, whole);
        return;
    }
    char name[64], dir[PATH_MAX];
    int fd = run_snapshots_open(path, s->owner, name, sizeof name);
    if (fd < 0)
        return;
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, "%s", slash ? "/" : ".");
    snapshot(s->cmd, name, dir, to_dir ? s->dir : NULL, to_push ? s->push : NULL, s->name, pid,
             whole);
    close(fd);
}

static int readable(const run_snapshots *s, const char *path)
{
    struct stat st;
    return s->checked ? lstat(path, &st) == 0 && S_ISREG(st.st_mode) : access(path, R_OK) == 0;
}

void run_snapshots_follow(run_snapshots *s, const char *base, const char *cur, const char *name,
                          int pid)
{
    /* A recording that went on in another file (the next piece of a
     * rotated one, the trace of an exec'd program): what the previous one
     * allocated since its last push is pushed first, if it is still there
     * (--keep may have removed it), one interval later, once the recorder
     * has finished writing it (this interval's push waits that long: the
     * next push of the same recording always starts where the one before
     * ended, nothing counted twice or skipped). */
    if (s->to_push && s->last[0] && strcmp(s->last, cur) != 0 && !s->rest_due) {
        s->rest_due = 1;
        snprintf(s->next_trace, sizeof s->next_trace, "%s", cur);
        return;
    }
    if (s->rest_due && s->to_push && readable(s, s->last)) {
        shot(s, s->last, 0, 1, pid, 1);
        /* pieces that came and went since: each whole */
        char piece[PATH_MAX];
        while (next_piece(base, s->last, piece, sizeof piece) && strcmp(piece, cur) != 0) {
            shot(s, piece, 0, 1, pid, 1);
            snprintf(s->last, sizeof s->last, "%s", piece);
        }
    }
    s->rest_due = 0;
    if (name)
        snprintf(s->name, sizeof s->name, "%s", name);
    shot(s, cur, s->to_dir, s->to_push, pid, 0);
    snprintf(s->last, sizeof s->last, "%s", cur);
}

void run_snapshots_end(run_snapshots *s, const char *base, const char *fallback, int pid)
{
    if (!s->last[0] && fallback && readable(s, fallback))
        snprintf(s->last, sizeof s->last, "%s", fallback);
    if (s->rest_due && s->push && readable(s, s->last)) {   /* (see above) */
        shot(s, s->last, 0, 1, pid, 1);
        snprintf(s->last, sizeof s->last, "%s", s->next_trace);
    }
    /* pieces the recording went on into since the last push (rotations
     * after it): each one's rest pushed, the latest one's final state */
    char piece[PATH_MAX];
    while (s->push && s->last[0] && next_piece(base, s->last, piece, sizeof piece)) {
        shot(s, s->last, 0, 1, pid, 1);
        snprintf(s->last, sizeof s->last, "%s", piece);
    }
    if (s->last[0])
        shot(s, s->last, 1, 1, pid, 1);
}

int run_wait_with_snapshots(pid_t pid, const char *file, double every_s, const char *dir,
                            run_push *push, const char *name, int *status)
{
    char comm[64];
    char cur[PATH_MAX];
    run_snapshots s;
    run_snapshots_init(&s, "run", every_s, dir, push, name);
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return -1;
        if (run_snapshots_due(&s) && proc_open_trace((int)pid, file, cur, sizeof cur))
            /* named after the program running now (a wrapper's exec'd
             * program, not the wrapper) */
            run_snapshots_follow(&s, file, cur, running_name(pid, name, comm, sizeof comm),
                                 (int)pid);
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    /* The end of the last recording seen (or of FILE): its final state. */
    run_snapshots_end(&s, file, file, (int)pid);
    return 0;
}

void run_on_stop_signals(void (*fn)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}
