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
 */
#include "run_snapshots.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "memtrace/analyze.h"
#include "memtrace/present.h"
#include "proc_trace.h"

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

/* One snapshot of trace into dir. 0 or -1 (message given). */
static int snapshot(const char *trace, const char *dir, const char *name, int pid)
{
    char *err = NULL;
    mt_model_options mo = { .on_warning = quiet };
    mt_model *m = mt_model_load(trace, &mo, &err);
    if (!m) {
        fprintf(stderr, "memtrace run: snapshot of %s: %s\n", trace, err ? err : "unreadable");
        free(err);
        return -1;
    }
    mt_filter *f = mt_filter_parse("", &err, NULL);
    mt_selection *s = f ? mt_select(m, f, MT_TIME_END) : NULL;
    int rc = -1;
    if (s) {
        char tmp[PATH_MAX], out[PATH_MAX];
        long long t = (long long)time(NULL);
        snprintf(tmp, sizeof tmp, "%s/.%s.%d.%lld.pb.gz.tmp", dir, name, pid, t);
        snprintf(out, sizeof out, "%s/%s.%d.%lld.pb.gz", dir, name, pid, t);
        mt_pprof_options po = { 6, 0 };
        if (mt_write_pprof(tmp, s, &po, &err) == 0 && rename(tmp, out) == 0)
            rc = 0;
        else {
            fprintf(stderr, "memtrace run: snapshot %s: %s\n", out,
                    err ? err : strerror(errno));
            unlink(tmp);
        }
    } else {
        fprintf(stderr, "memtrace run: snapshot of %s: %s\n", trace, err ? err : "out of memory");
    }
    free(err);
    mt_selection_free(s);
    mt_filter_free(f);
    mt_model_free(m);
    return rc;
}

int run_wait_with_snapshots(pid_t pid, const char *file, double every_s, const char *dir,
                            const char *name, int *status)
{
    char cur[PATH_MAX], last[PATH_MAX] = "";
    double next = now_s() + every_s;
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return -1;
        if (now_s() >= next) {
            next += every_s;
            if (next < now_s())
                next = now_s() + every_s;   /* a slow snapshot: skip, don't pile up */
            if (proc_open_trace((int)pid, file, cur, sizeof cur)) {
                snapshot(cur, dir, name, (int)pid);
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
        snapshot(last, dir, name, (int)pid);
    return 0;
}
