/*
 * report.h - what the report commands (top, stats, lifetimes, folded,
 * pprof, plot) share: loading the model, compiling --filter, the
 * options they all take (entries of their option tables, options.h), and
 * printing errors in the CLI's style.
 */
#ifndef MEMTRACE_REPORT_H
#define MEMTRACE_REPORT_H

#include "memtrace/analyze.h"
#include "memtrace/present.h"

/* Options every report shares, as entries of an option table (options.h):
 * where allocation sites are (--raw, --plumbing FILE) and how functions are
 * named (--full-names). */
#define REPORT_SITE_OPTS                                                             \
    OPT("raw", 0, OPT_FLAG, &report_sites.raw, NULL,                                    \
     "sites are the innermost frames, allocation plumbing\n"                          \
     "included (default: the first frame outside operator\n"                          \
     "new, std::, xmalloc, g_malloc, ...; docs/names.md)"),                           \
    OPT("plumbing", 0, OPT_STRING, &report_sites.plumbing, "FILE",                      \
     "more plumbing patterns, one per line (also\n$MEMTRACE_PLUMBING)"),              \
    OPT("full-names", 0, OPT_FLAG, &report_sites.full_names, NULL,                      \
     "function names as recorded (default: shortened C++\n"                           \
     "names: std::string, no default template arguments)")
#define REPORT_BY_PROCESS_HELP                                                       \
    "several FILEs (app.ctf app.ctf.*, runs) are aggregated;\n"                       \
    "this adds an outermost frame per process"
typedef struct report_sites_cfg {
    int raw;                 /* --raw */
    int full_names;          /* --full-names */
    const char *plumbing;    /* --plumbing FILE (NULL: none) */
    int used;                /* set by reports that show stacks: report_open applies them */
} report_sites_cfg;
extern report_sites_cfg report_sites;

/* Set by reports built only from per-stack costs (top, folded, pprof):
 * report_open then asks the read for those alone, and mt_read plans how
 * (folded while read: memory for the live blocks and the distinct stacks,
 * not for every allocation, when the input allows). */
extern int report_stacks_only;
/* A per-allocation hook for reports that fold (diff, check: sums per
 * stack that per-stack costs cannot give): report_open_sides folds when it
 * can (regular files, or no peak needed) and calls fn for every allocation
 * folded, after reset (called before each read of the trace). need_peak:
 * the hook needs the trace's peak time (the model's fold_peak). Whether the
 * hook saw every allocation: the side's fed (mt_read plans it; else the
 * model keeps every allocation: the route whole, forced with --route,
 * turns folding off, and tests compare both). */
typedef struct report_hook {
    int (*fn)(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq);
    void (*reset)(void *ctx);
    void *ctx;
    int need_peak;
} report_hook;
/* The plumbing list the options ask for (NULL with --raw); on error prints
 * "memtrace CMD: ..." and sets *failed. */
mt_plumbing *report_plumbing(const char *cmd, int *failed);

/* Loads FILE, compiles filter (may be NULL) and selects with live_at.
 * shallow > 0: the report needs only that many innermost backtrace codes
 * per allocation, so when the filter looks at no stacks a shallow model
 * (faster, smaller) is loaded. On error prints "memtrace CMD: ..." and
 * returns 1 (input) or 2 (usage: a bad filter); on success 0 with *m, *f,
 * *s set. */
int report_open(const char *cmd, const char *path, const char *filter, mt_timedelta live_at,
                size_t shallow, mt_model **m, mt_filter **f, mt_selection **s);
/* Same over n traces aggregated into one model (a process tree, repeated
 * runs: one mt_read of them all); by_process adds a frame per process. */
int report_open_many(const char *cmd, const char *const *paths, size_t n, int by_process,
                     const char *filter, mt_timedelta live_at, size_t shallow, mt_model **m,
                     mt_filter **f, mt_selection **s);
void report_close(mt_model *m, mt_filter *f, mt_selection *s);
/* A command that needs times or allocations refuses a pprof profile with
 * one line ("FILE is a pprof profile: ..."); returns the exit status 1. */
int report_not_profile(const char *cmd, const char *path);
/* 1 after saying so on stderr when m is a pprof profile without the values
 * metric needs (an inuse-only profile and --by alloc, ...); else 0. */
/* 'memtrace stats' on a pprof profile (info_profile.c): its totals under
 * filter (inside:, hide:); exit status. */
int stats_profile(const char *path, const char *filter, mt_timedelta at, int json);
int report_profile_measure(const char *cmd, const char *path, const mt_model *m, mt_metric metric);
/* One of the traces (or sets of traces, aggregated) a comparison reads:
 * the files and the hook in, the model, filter and selection out. */
typedef struct report_side {
    const char *const *paths;
    size_t n;
    int by_process;
    report_hook hook;           /* fn NULL: none */
    mt_model *m;
    mt_filter *f;
    mt_selection *s;
    int fed;                    /* out: the hook saw every allocation (else query m) */
} report_side;
#define REPORT_MAX_SIDES 4
/* Opens up to REPORT_MAX_SIDES sides as report_open_many would, one after
 * the other: 0 with every side's m, f and s set, or the exit status of the
 * first side that failed, after its messages (and those of the sides
 * before it), with every side closed. The sides are read at once, one
 * thread each, their messages held and written in side order, and one
 * progress line for all; the route one-thread (--route) reads them one after the
 * other. */
int report_open_sides(const char *cmd, report_side *sides, size_t n, const char *filter,
                      mt_timedelta live_at, size_t shallow);
/* Compiles --filter TEXT (may be NULL); on error prints it with a caret
 * under the place and returns NULL. */
mt_filter *report_filter(const char *cmd, const char *text);
/* The notes report_open_many prints about the trace(s) loaded: no
 * samples at all (one file), frames not symbolized. */
void report_notes(const char *cmd, const char *const *paths, size_t n, const mt_model *m);

#endif
