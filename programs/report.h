/*
 * report.h - what the report commands (top, stats, lifetimes, folded,
 * pprof, plot) share: loading the model, compiling --filter, parsing
 * --at and --by, and printing errors in the CLI's style.
 */
#ifndef MEMTRACE_REPORT_H
#define MEMTRACE_REPORT_H

#include "memtrace/analyze.h"
#include "memtrace/present.h"

/* Loads FILE, compiles filter (may be NULL) and selects with live_at.
 * shallow > 0: the report needs only that many innermost backtrace codes
 * per allocation, so when the filter looks at no stacks a shallow model
 * (faster, smaller) is loaded. On error prints "memtrace CMD: ..." and
 * returns 1 (input) or 2 (usage: a bad filter); on success 0 with *m, *f,
 * *s set. */
int report_open(const char *cmd, const char *path, const char *filter, mt_timedelta live_at,
                size_t shallow, mt_model **m, mt_filter **f, mt_selection **s);
/* getopt value of the --by-process option every report command takes. */
#define REPORT_OPT_BY_PROCESS 0x150
/* Same over n traces aggregated into one model (a process tree, repeated
 * runs: mt_model_load_many); by_process adds a frame per process. */
int report_open_many(const char *cmd, const char *const *paths, size_t n, int by_process,
                     const char *filter, mt_timedelta live_at, size_t shallow, mt_model **m,
                     mt_filter **f, mt_selection **s);
void report_close(mt_model *m, mt_filter *f, mt_selection *s);
/* --at VALUE: returns 0, or prints an error and returns 2. */
int report_time(const char *cmd, const char *opt, const char *text, mt_timedelta *out);
/* --by/--weight VALUE: returns 0, or prints an error and returns 2. */
int report_metric(const char *cmd, const char *opt, const char *text, mt_metric *out);
/* "memtrace CMD: see 'memtrace CMD --help'" to stderr; returns 2. */
int report_usage(const char *cmd);

#endif
