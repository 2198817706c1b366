/*
 * run_traces.h - the trace files of one recorded run: FILE, written by the
 * first process, and FILE.<pid> / FILE.<pid>.<k>, written beside it by the
 * processes it started (docs/recorder.md); and what a summary says of each.
 * Used by 'memtrace run' (its end-of-run summary) and by the reports (an
 * empty trace points at its siblings).
 */
#ifndef MEMTRACE_RUN_TRACES_H
#define MEMTRACE_RUN_TRACES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* FILE if it exists, then every FILE.<n> and FILE.<n>.<k> in FILE's
 * directory, sorted by name; with since, only files modified at or after
 * it. Only regular files (a symbolic link is not followed) that belong to
 * owner: in a directory others may write to (/tmp), files another user
 * left there under these names are never read, rewritten or listed as the
 * run's; *foreign (if not NULL) counts those left out. Paths are spelled
 * as FILE is (relative stays relative). Returns the number of paths and
 * sets *out (free with run_trace_files_free); 0 with *out = NULL when
 * there are none or memory ran out. */
size_t run_trace_files(const char *file, const struct timespec *since, uid_t owner,
                       size_t *foreign, char ***out);
void run_trace_files_free(char **paths, size_t n);

typedef struct run_trace {
    const char *path;
    int readable;            /* 0: not a trace at all (why says so) */
    int complete;            /* read to its end with no error or warning */
    int ended;               /* the recorder marked the end (exit, exec) */
    char why[512];           /* the first error or warning, if any */
    uint64_t pid;
    char command[256];       /* the command line (context), else the executable;
                                escaped for a terminal (mt_text_escape) */
    uint64_t allocs;         /* sampled blocks */
    uint64_t samples;        /* sample points */
    double bytes;            /* estimated bytes allocated */
} run_trace;

/* Reads the trace at path (regular files only) into *t; never fails:
 * what went wrong is in t->readable, t->complete and t->why. */
void run_trace_read(const char *path, run_trace *t);

/* Orders by estimated bytes, largest first (for qsort). */
int run_trace_cmp_bytes(const void *a, const void *b);

#endif
