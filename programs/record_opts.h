/*
 * record_opts.h - the recorder's options that 'run' and 'attach' share
 * (-i/--interval, -r/--rate, -d/--depth, -u/--unwind): their values, the
 * functions that take them from an options table (options.h; recconf.h's
 * one validation) and the check of the pair --interval/--rate.
 */
#ifndef MEMTRACE_RECORD_OPTS_H
#define MEMTRACE_RECORD_OPTS_H

#include "options.h"

typedef struct record_opts {
    const char *cmd;   /* "run": messages say "memtrace run: ..." */
    double rate;       /* probability per byte; set it to the default before parsing */
    int depth;         /* frames per stack; 0: the recorder's default */
    int unwind;        /* MT_UNWIND_*; 0: the default */
    int given;         /* 1 --interval, 2 --rate (3: both, refused by record_opts_check) */
} record_opts;

/* OPT_CALL functions, ctx a record_opts: 0, or 2 after the message
 * "memtrace CMD: --OPT VALUE: what was expected". */
int record_opt_interval(void *ctx, const char *arg, const char *opt);
int record_opt_rate(void *ctx, const char *arg, const char *opt);
int record_opt_depth(void *ctx, const char *arg, const char *opt);
int record_opt_unwind(void *ctx, const char *arg, const char *opt);

/* The four entries of a table, R a record_opts *; each command says in
 * its help what the value means to it. */
#define RECORD_OPTS(R, INTERVAL_HELP, RATE_HELP, DEPTH_HELP, UNWIND_HELP)                   \
    OPT("interval", 'i', OPT_CALL, NULL, "BYTES", INTERVAL_HELP, .fn = record_opt_interval,  \
        .ctx = (R)),                                                                          \
    OPT("rate", 'r', OPT_CALL, NULL, "R", RATE_HELP, .fn = record_opt_rate, .ctx = (R)),      \
    OPT("depth", 'd', OPT_CALL, NULL, "N", DEPTH_HELP, .fn = record_opt_depth, .ctx = (R)),   \
    OPT("unwind", 'u', OPT_CALL, NULL, "MODE", UNWIND_HELP, .fn = record_opt_unwind,         \
        .ctx = (R))

/* After parsing: 2 with a message when both --interval and --rate were
 * given, else 0. */
int record_opts_check(const record_opts *r);

#endif
