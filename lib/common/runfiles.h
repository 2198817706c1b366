/*
 * runfiles.h - the names of a run's files, made and recognised in one
 * place (docs/recorder.md describes them). A run of 'memtrace run -o FILE'
 * (or MEMTRACE=FILE) writes, beside FILE:
 *   FILE                  the first process's trace
 *   FILE-NNNN             a recording started on request (period NNNN,
 *                         at least four digits; 'memtrace ctl', signals)
 *   BASE.PID, BASE.PID.K  a later process's trace (BASE: FILE or FILE-NNNN;
 *                         K from 1 when BASE.PID was taken: a reused pid)
 *   TRACE.partNNNN        piece NNNN of a rotated recording (TRACE: any of
 *                         the above)
 *   TRACE.rss             the resident-memory sidecar of a trace
 *   TRACE.mtidx           the viewer's allocation index of a trace (or, when
 *                         that cannot be written, CACHE/NAME-HASH.mtidx in the
 *                         user's cache directory: mt_runname_index_cached)
 *   TRACE.leaks           the leak verdicts of a trace (docs/leaks.md)
 *   FILE.push             while a memtrace process pushes profiles of the
 *                         run (--push): its counts, for 'memtrace ctl
 *                         PID status' (docs/fleet.md)
 * mt_runname_make() writes a name from its parts, mt_runname_parse() reads
 * the parts back from a name; what one makes the other reads. The few
 * names of other files a run makes (the default FILE, pprof snapshots)
 * are made here too.
 * Header only: the recorder names its files with it and links nothing
 * else from here.
 */
#ifndef MEMTRACE_COMMON_RUNFILES_H
#define MEMTRACE_COMMON_RUNFILES_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "hash.h"

/* What a file of a run holds. */
typedef enum mt_runfile_kind {
    MT_RUNFILE_TRACE = 0,
    MT_RUNFILE_RSS,     /* TRACE.rss */
    MT_RUNFILE_INDEX,   /* TRACE.mtidx */
    MT_RUNFILE_LEAKS,   /* TRACE.leaks */
} mt_runfile_kind;

#define MT_RUNFILE_RSS_SUFFIX ".rss"
#define MT_RUNFILE_INDEX_SUFFIX ".mtidx"
#define MT_RUNFILE_LEAKS_SUFFIX ".leaks"

/* The parts of a name after the run's FILE; 0 is "absent" for each. */
typedef struct mt_runname {
    unsigned period;       /* FILE-NNNN */
    long pid;              /* .PID */
    unsigned again;        /* .PID.K (only with pid) */
    unsigned piece;        /* .partNNNN */
    mt_runfile_kind kind;  /* the sidecar suffix, if any */
} mt_runname;

/* out = base followed by the parts of n present, in the order above.
 * Returns the length, or -1 if it does not fit in cap (out is then cut). */
static inline int mt_runname_make(char *out, size_t cap, const char *base, const mt_runname *n)
{
    char period[16] = "", pid[48] = "", piece[24] = "";
    if (n->period)
        snprintf(period, sizeof period, "-%04u", n->period);
    if (n->pid && n->again)
        snprintf(pid, sizeof pid, ".%ld.%u", n->pid, n->again);
    else if (n->pid)
        snprintf(pid, sizeof pid, ".%ld", n->pid);
    if (n->piece)
        snprintf(piece, sizeof piece, ".part%04u", n->piece);
    const char *side = n->kind == MT_RUNFILE_RSS     ? MT_RUNFILE_RSS_SUFFIX
                       : n->kind == MT_RUNFILE_INDEX ? MT_RUNFILE_INDEX_SUFFIX
                       : n->kind == MT_RUNFILE_LEAKS ? MT_RUNFILE_LEAKS_SUFFIX
                                                     : "";
    int len = snprintf(out, cap, "%s%s%s%s%s", base, period, pid, piece, side);
    return len < 0 || (size_t)len >= cap ? -1 : len;
}

/* The file of kind beside the trace at trace (TRACE.rss, TRACE.mtidx,
 * TRACE.leaks); returns as mt_runname_make. Every writer and reader of a
 * sidecar names it with this. */
static inline int mt_runname_side(char *out, size_t cap, const char *trace, mt_runfile_kind kind)
{
    const mt_runname n = { .kind = kind };
    return mt_runname_make(out, cap, trace, &n);
}

/* The allocation index of the trace whose full path (symbolic links
 * resolved) is full, kept in the cache directory dir: DIR/NAME-HASH.mtidx,
 * NAME the trace's file name (at most 100 bytes of it), HASH the unkeyed
 * FNV-1a of full (the same in every process). Returns as mt_runname_make. */
static inline int mt_runname_index_cached(char *out, size_t cap, const char *dir, const char *full)
{
    const char *name = strrchr(full, '/');
    name = name ? name + 1 : full;
    int len = snprintf(out, cap, "%s/%.100s-%016llx%s", dir, name,
                       (unsigned long long)mt_fnv1a(MT_FNV_OFFSET, full), MT_RUNFILE_INDEX_SUFFIX);
    return len < 0 || (size_t)len >= cap ? -1 : len;
}

/* A run of decimal digits at *s (at least one, at most 9): its value, *s
 * moved past it; or -1, *s untouched. */
static inline long mt_runname_digits_(const char **s)
{
    const char *p = *s;
    long v = 0;
    int k = 0;
    while (*p >= '0' && *p <= '9' && k < 10) {
        v = v * 10 + (*p++ - '0');
        k++;
    }
    if (k == 0 || k > 9)
        return -1;
    *s = p;
    return v;
}

/* Is name (a file name, or a path whose last part is compared) the run
 * file base would be with some parts? 1 and the parts in *n (if not
 * NULL), else 0. base is compared as a file name too (its directory is
 * not): "dir/app.ctf" and "app.ctf.123.part0001" match. */
static inline int mt_runname_parse(const char *base, const char *name, mt_runname *n)
{
    mt_runname r = {0, 0, 0, 0, MT_RUNFILE_TRACE};
    const char *b = strrchr(base, '/'), *s = strrchr(name, '/');
    b = b ? b + 1 : base;
    s = s ? s + 1 : name;
    size_t bl = strlen(b);
    if (strncmp(s, b, bl) != 0)
        return 0;
    s += bl;
    long v;
    if (*s == '-') {
        s++;
        if ((v = mt_runname_digits_(&s)) < 0)
            return 0;
        r.period = (unsigned)v;
    }
    if (*s == '.' && s[1] >= '0' && s[1] <= '9') {
        s++;
        r.pid = mt_runname_digits_(&s);
        if (r.pid < 0)
            return 0;
        if (*s == '.' && s[1] >= '0' && s[1] <= '9') {
            s++;
            if ((v = mt_runname_digits_(&s)) < 0)
                return 0;
            r.again = (unsigned)v;
        }
    }
    if (!strncmp(s, ".part", 5)) {
        s += 5;
        if ((v = mt_runname_digits_(&s)) < 0)
            return 0;
        r.piece = (unsigned)v;
    }
    if (!strcmp(s, MT_RUNFILE_RSS_SUFFIX))
        r.kind = MT_RUNFILE_RSS;
    else if (!strcmp(s, MT_RUNFILE_INDEX_SUFFIX))
        r.kind = MT_RUNFILE_INDEX;
    else if (!strcmp(s, MT_RUNFILE_LEAKS_SUFFIX))
        r.kind = MT_RUNFILE_LEAKS;
    else if (*s)
        return 0;
    if (n)
        *n = r;
    return 1;
}

/* Is name piece NNNN of a rotated recording, STEM.partNNNN? NNNN, and
 * the length of STEM in *stem_len; else 0. */
static inline unsigned mt_runname_piece(const char *name, size_t *stem_len)
{
    const char *p = NULL;
    for (const char *q = strstr(name, ".part"); q; q = strstr(q + 1, ".part"))
        p = q;
    if (!p)
        return 0;
    const char *s = p + 5;
    long v = mt_runname_digits_(&s);
    if (v <= 0 || *s)
        return 0;
    *stem_len = (size_t)(p - name);
    return (unsigned)v;
}

/* The trace 'memtrace run CMD' writes without -o: CMD.PID.ctf (cmd: the
 * program's file name). */
static inline int mt_runname_default(char *out, size_t cap, const char *cmd, long pid)
{
    int len = snprintf(out, cap, "%s.%ld.ctf", cmd, pid);
    return len < 0 || (size_t)len >= cap ? -1 : len;
}

/* 'memtrace run --pprof-every': DIR/NAME.PID.UNIXTIME.pb.gz, each snapshot
 * of the trace NAME of process PID; made from the symbolized copy
 * DIR/.NAME.PID.snapshot.ctf (a hidden file, removed after). */
static inline int mt_runname_pprof(char *out, size_t cap, const char *dir, const char *name,
                                   long pid, long long unix_time)
{
    int len = snprintf(out, cap, "%s/%s.%ld.%lld.pb.gz", dir, name, pid, unix_time);
    return len < 0 || (size_t)len >= cap ? -1 : len;
}

/* The push status of the run whose recordings are named after FILE:
 * FILE.push, two lines: "PID URL" (the pushing memtrace process, where
 * it sends) and its counts as its summary says them ("push: N sent, ..."). */
static inline int mt_runname_push_status(char *out, size_t cap, const char *file)
{
    int len = snprintf(out, cap, "%s.push", file);
    return len < 0 || (size_t)len >= cap ? -1 : len;
}

static inline int mt_runname_snapshot_copy(char *out, size_t cap, const char *dir,
                                           const char *name, long pid)
{
    int len = snprintf(out, cap, "%s/.%s.%ld.snapshot.ctf", dir, name, pid);
    return len < 0 || (size_t)len >= cap ? -1 : len;
}

#endif
