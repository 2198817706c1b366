/*
 * run_traces.c - finds the trace files of one recorded run (FILE and the
 * FILE.<pid>[.<k>] files beside it; FILE-NNNN[.<pid>[.<k>]] for recordings
 * started on request; each of these with .partNNNN for the pieces of a
 * rotated recording) and reads each once for a summary:
 * pid, command, samples, estimated bytes, and whether it ended cleanly.
 * Only files of the given owner count (docs/recorder.md, "Privileged
 * programs and the trace file"): another user's file under one of these
 * names, in a directory both may write to, is not the run's.
 */
#include "run_traces.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "memtrace/analyze.h"
#include "memtrace/present.h"
#include "memtrace/trace.h"
#include "runfiles.h"
#include "vec.h"

/* A trace of the run beside FILE (name: base followed by more): a period,
 * a pid, a piece (runfiles.h); not a sidecar. */
static int trace_of_run(const char *base, const char *name)
{
    mt_runname n;
    return mt_runname_parse(base, name, &n) && n.kind == MT_RUNFILE_TRACE;
}

static int newer(const struct stat *st, const struct timespec *since)
{
    if (!since)
        return 1;
    return st->st_mtim.tv_sec > since->tv_sec ||
           (st->st_mtim.tv_sec == since->tv_sec && st->st_mtim.tv_nsec >= since->tv_nsec);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int push(char ***v, size_t *n, size_t *cap, const char *s)
{
    if (MT_VEC_ROOM(*v, *n, *cap, 16) < 0)
        return -1;
    if (!((*v)[*n] = strdup(s)))
        return -1;
    (*n)++;
    return 0;
}

/* One of the run's files: regular (lstat: not through a link), owner's,
 * new enough. Others of the right kind but another user's are counted. */
static int ours(const char *path, const struct timespec *since, uid_t owner, size_t *foreign)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || !newer(&st, since))
        return 0;
    if (st.st_uid != owner) {
        if (foreign)
            (*foreign)++;
        return 0;
    }
    return 1;
}

size_t run_trace_files(const char *file, const struct timespec *since, uid_t owner,
                       size_t *foreign, char ***out)
{
    char **v = NULL;
    size_t n = 0, cap = 0;
    *out = NULL;
    if (foreign)
        *foreign = 0;
    if (ours(file, since, owner, foreign) && push(&v, &n, &cap, file) < 0)
        goto oom;

    char dir[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s", file) >= (int)sizeof dir)
        goto done;
    char *slash = strrchr(dir, '/');
    const char *base = slash ? file + (slash - dir) + 1 : file;
    if (slash)
        slash[1] = '\0';   /* dir keeps its '/': the prefix of every path */
    size_t blen = strlen(base);
    DIR *d = opendir(slash ? dir : ".");
    if (!d)
        goto done;
    size_t first_child = n;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, base, blen) != 0 || !e->d_name[blen] ||
            !trace_of_run(base, e->d_name))
            continue;
        char path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s%s", slash ? dir : "", e->d_name);
        if (!ours(path, since, owner, foreign))
            continue;
        if (push(&v, &n, &cap, path) < 0) {
            closedir(d);
            goto oom;
        }
    }
    closedir(d);
    if (n > first_child)   /* (v may be NULL: nothing found) */
        qsort(v + first_child, n - first_child, sizeof *v, by_name);
done:
    *out = v;
    return n;
oom:
    run_trace_files_free(v, n);
    return 0;
}

void run_trace_files_free(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

static void first_warning(void *ctx, const char *msg)
{
    run_trace *t = ctx;
    if (t->complete) {
        t->complete = 0;
        snprintf(t->why, sizeof t->why, "%s", msg);
    }
}

void run_trace_read(const char *path, run_trace *t)
{
    memset(t, 0, sizeof *t);
    t->path = path;
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(t->why, sizeof t->why, "%s: not a regular file", path);
        return;
    }
    t->complete = 1;
    mt_reader_options ro = { .on_warning = first_warning, .warning_ctx = t,
                             .skip_backtraces = 1 };
    char *err = NULL;
    mt_reader *r = mt_reader_open(path, &ro, &err);
    if (!r) {
        t->complete = 0;
        snprintf(t->why, sizeof t->why, "%s", err ? err : "cannot read");
        free(err);
        return;
    }
    t->readable = 1;
    const mt_trace_info *info = mt_reader_info(r);
    t->pid = info->pid;
    /* The program's name without its directory, then its arguments. */
    const char *cmd = info->context && *info->context ? info->context : info->executable_name;
    if (!cmd)
        cmd = "";
    const char *sp = strchr(cmd, ' ');
    const char *name = cmd;
    for (const char *c = cmd; *c && (!sp || c < sp); c++)
        if (*c == '/' && c[1] && c[1] != ' ')
            name = c + 1;
    mt_text_escape(t->command, sizeof t->command, name);   /* (any bytes: the trace's) */
    mt_event ev;
    int rc;
    while ((rc = mt_reader_next(r, &ev)) == 1) {
        if (ev.kind == MT_EVENT_ALLOC && !ev.carried) {   /* (carried: the piece before's) */
            t->allocs++;
            t->samples += ev.n_samples;
        }
    }
    if (rc < 0 && t->complete) {
        t->complete = 0;
        snprintf(t->why, sizeof t->why, "%s", mt_reader_error(r));
    }
    t->ended = mt_reader_ended(r);
    t->bytes = (double)t->samples * mt_scale_of(info).bytes_per_sample;
    mt_reader_close(r);
}

int run_trace_cmp_bytes(const void *a, const void *b)
{
    const run_trace *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return strcmp(x->path, y->path);
}
