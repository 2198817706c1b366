/*
 * allocidx.c - the allocation index of a big trace, found or written (see
 * allocidx.h). Places, in order: beside the trace (TRACE.mtidx), then the
 * user's cache directory ($XDG_CACHE_HOME/memtrace or ~/.cache/memtrace,
 * NAME-HASH.mtidx with HASH of the trace's full path), then, when neither
 * can be written, a temporary file removed as soon as it is made (it lasts
 * as long as the viewer). A new index is written under a temporary name
 * and renamed once whole, so another viewer never opens half of one; a
 * viewer stopped while writing removes that file as it exits, and files
 * left by viewers that died are removed by the next one.
 */
#include "allocidx.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safefile.h"
#include "runfiles.h"

struct vidx {
    char *path;                  /* the index file; NULL: a removed temporary one */
    char *tmp;                   /* while written: its temporary name, or NULL */
    mt_alloc_index_id id;        /* the trace, as the read began */
    char *trace;
    mt_alloc_index_writer *w;    /* writing, or NULL */
    int fd;                      /* the file being written */
    mt_alloc_index *ix;          /* found, or written and reopened */
    int usable;                  /* vidx_end said yes */
    int broken;                  /* atomic: vidx_broken was called */
    char *note;                  /* for vidx_report, or NULL */
};

static void say(const char *path, const char *what)
{
    fprintf(stderr, "memtrace view: allocation index %s: %s\n", path ? path : "(temporary)", what);
}

/* What vidx_end has to say, kept for vidx_report (while a trace loads,
 * stderr shows the progress on one line). */
static void say_later(vidx *x, const char *what)
{
    free(x->note);
    if (asprintf(&x->note, "memtrace view: allocation index %s: %s\n",
                 x->path ? x->path : "(temporary)", what) < 0)
        x->note = NULL;
}

void vidx_report(vidx *x)
{
    if (x && x->note) {
        fputs(x->note, stderr);
        free(x->note);
        x->note = NULL;
    }
}

/* The names come from runfiles.h. */
static char *beside(const char *trace)
{
    size_t cap = strlen(trace) + sizeof MT_RUNFILE_INDEX_SUFFIX;
    char *p = malloc(cap);
    if (p && mt_runname_side(p, cap, trace, MT_RUNFILE_INDEX) < 0) {
        free(p);
        p = NULL;
    }
    return p;
}

/* The cache directory (made when make is set), or NULL. */
static char *cache_dir(int make)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char *base = NULL, *dir = NULL;
    if (xdg && xdg[0] == '/')
        base = strdup(xdg);
    else if (home && home[0] == '/' && asprintf(&base, "%s/.cache", home) < 0)
        base = NULL;
    if (!base)
        return NULL;
    if (asprintf(&dir, "%s/memtrace", base) < 0)
        dir = NULL;
    if (dir && make) {
        mkdir(base, 0700);
        if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
            free(dir);
            dir = NULL;
        }
    }
    free(base);
    return dir;
}

static char *in_cache(const char *trace, int make)
{
    char *dir = cache_dir(make), *full = realpath(trace, NULL), *p = NULL;
    size_t cap = dir && full ? strlen(dir) + 100 + 32 + sizeof MT_RUNFILE_INDEX_SUFFIX : 0;
    if (cap && (p = malloc(cap)) && mt_runname_index_cached(p, cap, dir, full) < 0) {
        free(p);
        p = NULL;
    }
    free(dir);
    free(full);
    return p;
}

/* An index at path whose header names the trace, or NULL (logged when
 * there is a file). The index is trusted only as far as the trace is: it
 * must be a regular file (not a link, not a FIFO) of the trace's owner or
 * of ours that no one else may write (mt_sidecar_open), so that someone who
 * can read the trace and write beside it, but not write the trace, cannot
 * make the viewer's answers lie (docs/viewer.md, "What the viewer defends
 * against"). */
static mt_alloc_index *try_open(const char *path, const char *trace,
                                const mt_alloc_index_id *id)
{
    const char *refused = NULL;
    int fd = mt_sidecar_open(path, trace, &refused);
    if (fd < 0) {
        if (errno != ENOENT) {
            char *msg = NULL;
            if (asprintf(&msg, "ignored (%s); writing a new one", refused) >= 0)
                say(path, msg);
            free(msg);
        }
        return NULL;
    }
    char *why = NULL;
    mt_alloc_index *ix = mt_alloc_index_open_fd(fd, id, &why);
    if (!ix) {
        char *msg = NULL;
        if (asprintf(&msg, "ignored (%s); writing a new one", why ? why : "out of memory") >= 0)
            say(path, msg);
        free(msg);
    }
    free(why);
    return ix;
}

/* The temporary file being written, removed at exit when still there (a
 * viewer stopped while loading exits with the loading thread still
 * writing). The lock is held from the creation of a temporary file until
 * it is named here, and once exit has begun no new one is made: a file
 * the loading thread creates while exit runs is never left behind. */
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static char *pending;
static int exiting;

static void remove_pending(void)
{
    pthread_mutex_lock(&pending_lock);
    exiting = 1;
    if (pending)
        unlink(pending);
    pthread_mutex_unlock(&pending_lock);
}

/* Called with pending_lock held. */
static void set_pending_locked(const char *tmp)
{
    free(pending);
    pending = tmp ? strdup(tmp) : NULL;
}

static void set_pending(const char *tmp)
{
    pthread_mutex_lock(&pending_lock);
    set_pending_locked(tmp);
    pthread_mutex_unlock(&pending_lock);
}

/* Temporary files of path left by viewers that are gone. */
static void remove_stale(const char *path)
{
    char *pat = NULL;
    glob_t g;
    if (asprintf(&pat, "%s.tmp.*", path) < 0)
        return;
    if (glob(pat, GLOB_NOSORT | GLOB_NOESCAPE, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++) {
            char *end = NULL;
            const char *num = g.gl_pathv[i] + strlen(path) + 5;
            long pid = strtol(num, &end, 10);
            if (end != num && !*end && pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH)
                unlink(g.gl_pathv[i]);
        }
        globfree(&g);
    }
    free(pat);
}

/* A new file to write at path (under path.tmp.PID); the descriptor, or -1.
 * Its mode: the trace's read permissions, written by its owner only (an
 * index tells what the trace holds: no one who may not read the trace
 * reads it; no one else may change it). */
static int create_at(vidx *x, char *path)
{
    if (!path)
        return -1;
    char *tmp = NULL;
    remove_stale(path);
    if (asprintf(&tmp, "%s.tmp.%ld", path, (long)getpid()) < 0) {
        free(path);
        return -1;
    }
    /* (O_EXCL: never through a link someone else left there) */
    struct stat st;
    mode_t mode = stat(x->trace, &st) == 0 ? (st.st_mode & 0444) | 0200 : 0600;
    static int registered;
    int fd = -1;
    pthread_mutex_lock(&pending_lock);
    if (!registered)
        registered = atexit(remove_pending) == 0;
    if (registered && !exiting) {
        fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 && fchmod(fd, mode) != 0) {
            close(fd);
            unlink(tmp);
            fd = -1;
        }
        if (fd >= 0)
            set_pending_locked(tmp);
    }
    pthread_mutex_unlock(&pending_lock);
    if (fd < 0) {
        free(tmp);
        free(path);
        return -1;
    }
    x->path = path;
    x->tmp = tmp;
    return fd;
}

static int create_temporary(void)
{
    const char *dir = getenv("TMPDIR");
    char *t = NULL;
    if (!dir || dir[0] != '/')
        dir = P_tmpdir;
    if (asprintf(&t, "%s/memtrace-XXXXXX", dir) < 0)
        return -1;
    int fd = mkostemp(t, O_CLOEXEC);
    if (fd >= 0)
        unlink(t);
    free(t);
    return fd;
}

vidx *vidx_begin(const char *trace)
{
    vidx *x = calloc(1, sizeof *x);
    if (!x || !(x->trace = strdup(trace))) {
        free(x);
        return NULL;
    }
    x->fd = -1;
    if (mt_alloc_index_trace_id(trace, &x->id) < 0) {
        vidx_free(x);
        return NULL;   /* (the read itself says why) */
    }
    char *cand[2] = {beside(trace), in_cache(trace, 0)};
    for (int i = 0; i < 2 && !x->ix; i++)
        if (cand[i] && (x->ix = try_open(cand[i], trace, &x->id))) {
            x->path = cand[i];
            cand[i] = NULL;
        }
    free(cand[0]);
    free(cand[1]);
    if (x->ix)
        return x;
    /* Not over a file of someone else's (refused above): in the cache. */
    char *b = beside(trace);
    struct stat st;
    if (b && lstat(b, &st) == 0 && (!S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
        free(b);
        b = NULL;
    }
    x->fd = create_at(x, b);
    if (x->fd < 0)
        x->fd = create_at(x, in_cache(trace, 1));
    if (x->fd < 0)
        x->fd = create_temporary();
    if (x->fd < 0 || !(x->w = mt_alloc_index_writer_new(x->fd))) {
        say(NULL, "cannot be written anywhere: each filter reads the trace again");
        vidx_free(x);
        return NULL;
    }
    return x;
}

mt_alloc_index_writer *vidx_writer(vidx *x)
{
    return x ? x->w : NULL;
}

static void drop_tmp(vidx *x)
{
    if (x->tmp) {
        set_pending(NULL);
        unlink(x->tmp);
        free(x->tmp);
        x->tmp = NULL;
    }
}

/* Finishes the file being written; the index, or NULL. */
static mt_alloc_index *finish(vidx *x, const mt_model *m)
{
    mt_alloc_index_writer *w = x->w;
    x->w = NULL;
    mt_alloc_index_id now;
    if (mt_alloc_index_trace_id(x->trace, &now) < 0 || memcmp(&now, &x->id, sizeof now)) {
        mt_alloc_index_writer_abort(w);
        drop_tmp(x);
        say_later(x, "not written: the trace changed while it was read");
        return NULL;
    }
    if (mt_alloc_index_writer_finish(w, m, &x->id) < 0) {
        drop_tmp(x);
        say_later(x, "cannot be written (disk full?): each filter reads the trace again");
        return NULL;
    }
    if (x->tmp && rename(x->tmp, x->path) < 0) {
        drop_tmp(x);
        say_later(x, "cannot be renamed into place: each filter reads the trace again");
        return NULL;
    }
    set_pending(NULL);
    free(x->tmp);
    x->tmp = NULL;
    char *why = NULL;
    int fd = x->fd;
    x->fd = -1;
    mt_alloc_index *ix = mt_alloc_index_open_fd(fd, &x->id, &why);
    if (!ix)
        say_later(x, why ? why : "out of memory");
    free(why);
    return ix;
}

const mt_alloc_index *vidx_end(vidx *x, const mt_model *m)
{
    if (!x)
        return NULL;
    if (!m) {
        mt_alloc_index_writer_abort(x->w);
        x->w = NULL;
        drop_tmp(x);
        return NULL;
    }
    if (x->w) {
        x->ix = finish(x, m);
        if (x->ix && x->path) {
            char *msg = NULL;
            if (asprintf(&msg, "written (%llu MB); filters are folded from it",
                         (unsigned long long)(mt_alloc_index_file_bytes(x->ix) >> 20)) >= 0)
                say_later(x, msg);
            free(msg);
        }
    } else if (x->ix) {
        char *why = NULL;
        if (!mt_alloc_index_matches(x->ix, m, &why)) {
            char *msg = NULL;
            if (asprintf(&msg, "ignored (%s); removed, the next start writes a new one",
                         why ? why : "out of memory") >= 0)
                say_later(x, msg);
            free(msg);
            free(why);
            unlink(x->path);
            mt_alloc_index_close(x->ix);
            x->ix = NULL;
        }
    }
    x->usable = x->ix != NULL;
    return x->ix;
}

void vidx_broken(vidx *x, const char *why)
{
    if (__atomic_exchange_n(&x->broken, 1, __ATOMIC_ACQ_REL))
        return;
    char *msg = NULL;
    if (asprintf(&msg, "%s; removed, filters read the trace again (the next start writes a new "
                       "index)", why) >= 0)
        say(x->path, msg);
    free(msg);
    if (x->path)
        unlink(x->path);
}

const mt_alloc_index *vidx_get(vidx *x)
{
    if (!x || !x->usable || __atomic_load_n(&x->broken, __ATOMIC_ACQUIRE))
        return NULL;
    return x->ix;
}

const char *vidx_path(const vidx *x)
{
    return x->path;
}

void vidx_free(vidx *x)
{
    if (!x)
        return;
    mt_alloc_index_writer_abort(x->w);
    drop_tmp(x);
    if (x->fd >= 0)
        close(x->fd);
    mt_alloc_index_close(x->ix);
    free(x->path);
    free(x->trace);
    free(x->note);
    free(x);
}
