/*
 * rewrite.c - mt_symbolize_file: reads a trace, replaces its raw frames
 * (rawframe.h) with what the namer (names.c, over dwarf.c) finds, and
 * writes it again beside the original, then renames it over the original.
 *
 * Events are copied as they are; only location events change. The writer
 * asks for a code's locations whenever the code enters its backtrace
 * cache, so results are kept per code, in the codec's code -> locations
 * table (lib/common/loctab.h: keyed hash, each list stored at its length,
 * each distinct name once). Codes whose description is not a raw frame
 * (already symbolized, OCaml traces) pass through unchanged: they are kept
 * as an empty list, which stands for the reader's own description.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memtrace/symbolize.h"
#include "loctab.h"
#include "rawframe.h"
#include "fdsink.h"
#include "namecache.h"

#define MAX_CHAIN 255   /* locations per code the format allows */

struct rewriter {
    mt_reader *r;
    mt_namer *namer;
    int own_namer;           /* made here (not the caller's) */
    mt_loctab codes;         /* code -> its new locations (empty: the reader's) */
    mt_location scratch[MAX_CHAIN];
    mt_symbolize_stats st;
    const mt_symbolize_options *opts;
    const char *path;
};

static void warn(struct rewriter *rw, const char *fmt, ...)
{
    char msg[PATH_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (rw->opts && rw->opts->on_warning)
        rw->opts->on_warning(rw->opts->warning_ctx, msg);
    else
        fprintf(stderr, "%s\n", msg);
}

/* One warning per module the namer could not use. */
static void warn_modules(struct rewriter *rw)
{
    mt_namer_problem p;
    while (mt_namer_next_problem(rw->namer, &p)) {
        if (p.why == MT_NAMER_CHANGED)
            warn(rw, "%s: %s has changed since the trace was recorded (build-id or size "
                     "differs): its frames stay module+offset", rw->path, p.module);
        else if (p.why == MT_NAMER_NO_DEBUG)
            warn(rw, "%s: %s has no debug information here: some of its frames stay "
                     "module+offset; install its debug symbols (Debian: the -dbgsym package "
                     "that find-dbgsym-packages %s names) or name a server with "
                     "'memtrace symbolize --debuginfod URL'", rw->path, p.module, p.module);
        else
            warn(rw, "%s: cannot read %s: its frames stay module+offset", rw->path, p.module);
    }
}

/* A code's new locations into *out (rw->scratch): each raw location of the
 * reader's description becomes what the module says (a chain when
 * inlined), others stay (the namer, names.c). 0 when the code has no raw
 * location or none got a name. */
static size_t symbolize_code(struct rewriter *rw, const mt_location *in, size_t n,
                             const mt_location **out)
{
    int any_raw = 0;
    uint64_t off;
    for (size_t i = 0; i < n && !any_raw; i++)
        any_raw = mt_raw_parse(in[i].filename, in[i].defname, in[i].line, &off);
    if (!any_raw)
        return 0;
    rw->st.raw++;
    size_t k = mt_namer_name(rw->namer, rw->path, in, n, rw->scratch, MAX_CHAIN);
    warn_modules(rw);
    if (k > 0)
        rw->st.resolved++;
    else
        rw->st.unresolved++;
    *out = rw->scratch;
    return k;
}

static int resolve(void *ctx, mt_location_code code, const mt_location **locs, size_t *n)
{
    struct rewriter *rw = ctx;
    const mt_location *in;
    size_t nin;
    if (mt_reader_lookup(rw->r, code, &in, &nin) < 0)
        return -1;
    const mt_location *mine;
    size_t k;
    if (mt_loctab_find(&rw->codes, code, &mine, &k) != 0) {
        rw->st.codes++;
        k = symbolize_code(rw, in, nin, &mine);
        if (mt_loctab_add(&rw->codes, code, mine, k, 0) < 0 ||
            mt_loctab_find(&rw->codes, code, &mine, &k) != 0)
            return -1;
    }
    if (k > 0) {
        *locs = mine;
        *n = k;
    } else {
        *locs = in;
        *n = nin;
    }
    return 0;
}

static void free_rewriter(struct rewriter *rw)
{
    mt_loctab_free(&rw->codes);
    if (rw->own_namer)
        mt_namer_free(rw->namer);
}

/* Is the file (dev, ino) open in process pid? 1 yes, 0 no, -1 cannot tell
 * (the process exists but its descriptors cannot be read). */
static int open_in(pid_t pid, dev_t dev, ino_t ino)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(dir, sizeof dir, "/proc/%d", (int)pid);
        return access(dir, F_OK) == 0 ? -1 : 0;
    }
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d)) != NULL) {
        char p[64 + sizeof e->d_name];
        struct stat st;
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "/proc/%d/fd/%s", (int)pid, e->d_name);
        found = stat(p, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
    }
    closedir(d);
    return found;
}

static int fail(char **error, const char *fmt, ...)
{
    if (error) {
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(error, fmt, ap) < 0)
            *error = NULL;
        va_end(ap);
    }
    return -1;
}

/* Copies every event of r into w; 0 or -1 with *error set. */
static int copy_events(mt_reader *r, mt_writer *w, const char *path, char **error)
{
    const mt_trace_info *info = mt_reader_info(r);
    mt_event ev;
    int rc;
    size_t prev_len = 0;
    mt_timedelta last = 0;
    while ((rc = mt_reader_next(r, &ev)) == 1) {
        last = ev.time;
        if (ev.domain != info->initial_domain)
            return fail(error, "%s: events of several domains: not a trace of this recorder",
                        path);
        mt_timestamp now = (int64_t)((uint64_t)info->start_time + (uint64_t)ev.time);
        /* blocks carried over from a previous piece stay marked as such */
        int ok;
        if (mt_writer_set_carried(w, ev.kind == MT_EVENT_ALLOC && ev.carried) != 0)
            ok = 0;
        else if (ev.kind == MT_EVENT_ALLOC && ev.id == mt_writer_next_id(w)) {
            size_t keep = ev.common_prefix < prev_len ? ev.common_prefix : prev_len;
            prev_len = ev.backtrace_length;
            ok = mt_writer_put_alloc_shared(w, now, ev.length, ev.n_samples, ev.source,
                                            ev.backtrace, ev.backtrace_length, keep, NULL) == 0;
        } else if (ev.kind == MT_EVENT_COLLECT) {
            ok = mt_writer_put_collect(w, now, ev.id) == 0;
        } else if (ev.kind == MT_EVENT_PROMOTE) {
            ok = mt_writer_put_promote(w, now, ev.id) == 0;
        } else {
            ok = mt_writer_put_event(w, info->start_time, &ev) == 0;
        }
        if (!ok)
            return fail(error, "%s: %s", path, mt_writer_error(w));
    }
    if (rc < 0)
        return fail(error, "%s", mt_reader_error(r));
    /* Keep when the recording ended (the process's exit, exec or last flush,
     * later than its last event) and whether the recorder marked the end:
     * duration, rate and live:end depend on it (docs/format.md). */
    mt_timedelta end = mt_reader_end_time(r);
    if ((mt_reader_ended(r) || end > last) &&
        mt_writer_flush_until(w, (int64_t)((uint64_t)info->start_time + (uint64_t)end),
                              mt_reader_ended(r)) < 0)
        return fail(error, "%s: %s", path, mt_writer_error(w));
    return 0;
}

int mt_symbolize_file(const char *path, const mt_symbolize_options *opts,
                      mt_symbolize_stats *stats, char **error)
{
    struct rewriter rw;
    memset(&rw, 0, sizeof rw);
    mt_loctab_init(&rw.codes);
    rw.opts = opts;
    rw.path = path;
    if (error)
        *error = NULL;
    struct stat st;
    if (stat(path, &st) != 0)
        return fail(error, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return fail(error, "%s: not a regular file", path);

    mt_reader_options ro = {.raw_frames = 1};
    if (opts) {
        ro.on_warning = opts->on_warning;
        ro.warning_ctx = opts->warning_ctx;
    }
    char *rerr = NULL;
    rw.r = mt_reader_open(path, &ro, &rerr);
    if (!rw.r) {
        int rc = fail(error, "%s", rerr ? rerr : "cannot read the trace");
        free(rerr);
        return rc;
    }
    /* Renaming over a trace that its process still writes would lose what
     * it writes next (into the replaced file). */
    const mt_trace_info *ti = mt_reader_info(rw.r);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    if (ti->pid > 0 && ti->pid < (uint64_t)INT_MAX && ti->host_name &&
        strcmp(ti->host_name, host) == 0 && (pid_t)ti->pid != getpid()) {
        int busy = open_in((pid_t)ti->pid, st.st_dev, st.st_ino);
        if (busy != 0) {
            mt_reader_close(rw.r);
            return fail(error, "%s: %s by process %d; symbolize it after that process has "
                        "ended", path, busy > 0 ? "still being written" : "may still be written",
                        (int)ti->pid);
        }
    }
    /* frames without a fingerprint are named too, unchecked, as ever */
    mt_namer_options no = {.unchecked = 1};
    if (opts) {
        no.debuginfod_url = opts->debuginfod_url;
        no.debug_root = opts->debug_root;
        no.name_cache = opts->name_cache;
        no.on_warning = opts->on_warning;
        no.warning_ctx = opts->warning_ctx;
    }
    rw.namer = opts && opts->namer ? opts->namer : mt_namer_new(&no);
    rw.own_namer = !(opts && opts->namer);
    if (!rw.namer) {
        mt_reader_close(rw.r);
        return fail(error, "%s: out of memory", path);
    }

    uint64_t cached_before = mts_namer_cached(rw.namer);
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.symbolize-XXXXXX", path) >= (int)sizeof tmp) {
        mt_reader_close(rw.r);
        free_rewriter(&rw);
        return fail(error, "%s: path too long", path);
    }
    /* An unnamed file (O_TMPFILE) in the trace's directory, given a name only
     * to be renamed over the trace: a symbolizer killed midway leaves
     * nothing behind. Where the file system cannot, a named one. */
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir] = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    int anon = 1, linked = 0;
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) {
        anon = 0;
        fd = mkostemp(tmp, O_CLOEXEC);
    }
    if (fd < 0) {
        int e = errno;
        mt_reader_close(rw.r);
        free_rewriter(&rw);
        return fail(error, "%s: cannot create a file beside it: %s", path, strerror(e));
    }
    mt_fdsink *sink = mt_fdsink_new(fd, 1 << 16);
    const mt_trace_info *info = mt_reader_info(rw.r);
    mt_writer_options wo = {.version = info->version >= 3 ? 3 : 2,
                            .domain = info->version >= 3 ? info->initial_domain : 0,
                            .resolve = resolve,
                            .resolve_ctx = &rw,
                            .write = mt_fdsink_write,
                            .write_ctx = sink};
    char *werr = NULL;
    mt_writer *w = NULL;
    int rc = -1;
    if (!sink) {
        fail(error, "%s: out of memory", path);
        goto out;
    }
    w = mt_writer_open(fd, info, &wo, &werr);
    if (!w) {
        fail(error, "%s: %s", tmp, werr ? werr : "cannot write");
        free(werr);
        goto out;
    }
    if (copy_events(rw.r, w, path, error) < 0)
        goto out;
    if (mt_writer_finish(w) < 0) {
        fail(error, "%s: %s", tmp, mt_writer_error(w));
        goto out;
    }
    if (rw.st.raw == 0) {
        rc = 0;   /* nothing to do: the original stays, untouched (the copy unsynced) */
        goto out;
    }
    if (mt_fdsink_flush(sink) < 0 || fsync(fd) < 0) {
        fail(error, "%s: %s", tmp, strerror(errno));
        goto out;
    }
    if (anon) {
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        for (int i = 0; i < 100 && !linked; i++) {
            snprintf(tmp, sizeof tmp, "%s.symbolize-%d-%d", path, (int)getpid(), i);
            if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0)
                linked = 1;
            else if (errno != EEXIST)
                break;
        }
        if (!linked) {
            fail(error, "%s: cannot create a file beside it: %s", path, strerror(errno));
            goto out;
        }
    }
    /* The trace keeps its owner, group and permissions (root symbolizing a
     * user's 0600 trace must not take it from them), never set-user-ID,
     * set-group-ID or sticky bits. A new owner that cannot be given back:
     * the trace stays as it was. */
    struct stat now;
    if (fstat(fd, &now) == 0 && (now.st_uid != st.st_uid || now.st_gid != st.st_gid) &&
        fchown(fd, st.st_uid, st.st_gid) != 0) {
        fail(error, "%s: cannot keep its owner (%d:%d): %s; left as it was", path,
             (int)st.st_uid, (int)st.st_gid, strerror(errno));
        goto out;
    }
    if (fchmod(fd, st.st_mode & 0777) != 0 || rename(tmp, path) != 0) {
        fail(error, "%s: cannot replace it: %s", path, strerror(errno));
        goto out;
    }
    rw.st.rewritten = 1;
    rc = 0;
    mts_namer_save_names(rw.namer);   /* (after the trace: its warnings come first) */
out:
    if (w)
        mt_writer_close(w);
    close(fd);
    if (!rw.st.rewritten && (!anon || linked))
        unlink(tmp);
    free(sink);
    mt_reader_close(rw.r);
    rw.st.cached = mts_namer_cached(rw.namer) - cached_before;
    if (stats)
        *stats = rw.st;
    free_rewriter(&rw);
    return rc;
}
