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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* One snapshot of trace into dir (if not NULL) and to push (if not NULL).
 * 0 or -1 (message given). */
static int snapshot(const char *trace, const char *dir, run_push *push, const char *name, int pid)
{
    char *err = NULL;
    char copy_path[2 * PATH_MAX], tdir[PATH_MAX];
    if (!dir) {   /* pushing only: the symbolized copy goes beside the trace */
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
    mt_model_options mo = { .on_warning = quiet };
    mt_model *m = mt_model_load(load, &mo, &err);
    if (copy.path)
        mt_outfile_abort(&copy);   /* (the copy is never renamed: removed) */
    if (!m) {
        fprintf(stderr, "memtrace run: snapshot of %s: %s\n", trace, err ? err : "unreadable");
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
        run_push_profile(push, s, name, pid);
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
            fprintf(stderr, "memtrace run: snapshot %s: %s\n", out,
                    err ? err : why ? why : "cannot write it");
    } else {
        fprintf(stderr, "memtrace run: snapshot of %s: %s\n", trace, err ? err : "out of memory");
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

int run_wait_with_snapshots(pid_t pid, const char *file, double every_s, const char *dir,
                            run_push *push, const char *name, int *status)
{
    char comm[64], last_name[64];
    snprintf(last_name, sizeof last_name, "%s", name);
    char cur[PATH_MAX], last[PATH_MAX] = "";
    /* two clocks: the files' (every_s, dir) and the pushes' */
    double push_every = push ? run_push_every(push) : 0;
    double next = dir ? now_s() + every_s : 1e300;
    double next_push = push ? now_s() + push_every : 1e300;
    /* Local debug information only, as after the run (symbolize_run_traces):
     * no build-id leaves the machine, no snapshot waits on a server. (The
     * program was started already: its environment is its own.) */
    unsetenv("DEBUGINFOD_URLS");
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return -1;
        double t = now_s();
        int to_dir = t >= next, to_push = t >= next_push;
        if (to_dir || to_push) {
            if (to_dir) {
                next += every_s;
                if (next < now_s())
                    next = now_s() + every_s;   /* a slow snapshot: skip, don't pile up */
            }
            if (to_push) {
                next_push += push_every;
                if (next_push < now_s())
                    next_push = now_s() + push_every;
            }
            if (proc_open_trace((int)pid, file, cur, sizeof cur)) {
                /* named after the program running now (a wrapper's exec'd
                 * program, not the wrapper) */
                snprintf(last_name, sizeof last_name, "%s",
                         running_name(pid, name, comm, sizeof comm));
                snapshot(cur, to_dir ? dir : NULL, to_push ? push : NULL, last_name, (int)pid);
                snprintf(last, sizeof last, "%s", cur);
            }
        }
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    /* The end of the last recording seen (or of FILE): its final state. */
    if (!last[0] && access(file, R_OK) == 0)
        snprintf(last, sizeof last, "%s", file);
    if (last[0])
        snapshot(last, dir, push, last_name, (int)pid);
    return 0;
}
