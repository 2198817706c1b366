/*
 * options.h - the one option driver of the CLI's commands. A command
 * describes its options in a table (name, short letter, kind, where the
 * value goes, its help line); opt_parse reads argv with getopt_long, types
 * and checks each value, prints every error in the CLI's style
 * ("memtrace CMD: --OPT VALUE: what was expected", then a pointer to
 * --help) and prints --help from the same table.
 *
 * Not thread-safe (getopt's globals); called once per command from main.
 */
#ifndef MEMTRACE_OPTIONS_H
#define MEMTRACE_OPTIONS_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "memtrace/analyze.h"

typedef enum opt_kind {
    OPT_FLAG,      /* int: set to 1 */
    OPT_STRING,    /* const char *: the argument as given */
    OPT_FILTER,    /* const char *: a filter's text (compiled when the trace is read) */
    OPT_SIZE,      /* uint64_t bytes: the size grammar of units.h; at least lo */
    OPT_DURATION,  /* mt_timedelta: a length of time ("1h", "30s"), above 0 */
    OPT_TIME,      /* mt_timedelta: a point of a trace ("2.5s", "peak", "end") */
    OPT_SECONDS,   /* double seconds: a time from 0 to hi seconds ("500ms"; a bare
                      number is seconds: "2") */
    OPT_RATE,      /* double bytes per second: "1MiB/h", "50B/s" */
    OPT_MEASURE,   /* mt_metric: alloc, count, live, live_count, ... */
    OPT_COUNT,     /* size_t: a decimal number, at least lo */
    OPT_INT,       /* int: a decimal number in [lo, hi] */
    OPT_REAL,      /* double: a number strictly between lo and hi */
    OPT_PERCENT,   /* double: a percentage, "10%" or "10", at least 0 */
    OPT_CHOICE,    /* int: the index of the argument in choices (NULL-ended) */
    OPT_PAIR,      /* const char *[2]: this argument and the next word (--windows A B) */
    OPT_LIST,      /* opt_list: each time given, one more value (at most cap) */
    OPT_CALL,      /* fn(ctx, arg) takes it: 0, or 2 after its own message */
} opt_kind;

/* The values of an option that may be repeated, in the order given. */
typedef struct opt_list {
    const char **v;
    size_t n, cap;
} opt_list;

typedef struct opt_spec {
    const char *name;           /* the long name, without "--" */
    int letter;                 /* the short option, 0 for none */
    opt_kind kind;
    void *dest;                 /* where the value goes (its type: by kind) */
    const char *meta;           /* the value's name in --help (NULL: none) */
    const char *help;           /* its help; '\n' starts a line under the first */
    double lo, hi;              /* bounds of OPT_SIZE, OPT_COUNT, OPT_INT, OPT_REAL;
                                   hi of OPT_SECONDS */
    const char *const *choices; /* OPT_CHOICE */
    int (*fn)(void *ctx, const char *arg, const char *opt); /* OPT_CALL; opt: "--name" */
    void *ctx;
    int *given;                 /* set to 1 when the option is given (may be NULL) */
    const char **text;          /* the argument as given goes here too (may be NULL) */
} opt_spec;

/* One entry: OPT("by", 'b', OPT_MEASURE, &metric, "MEASURE", "help", .given = &g) */
#define OPT(NAME, LETTER, KIND, DEST, META, HELP, ...)                                   \
    {.name = NAME, .letter = LETTER, .kind = KIND, .dest = DEST, .meta = META, .help = HELP, \
     __VA_ARGS__}

typedef struct opt_command {
    const char *name;           /* "check": messages say "memtrace check: ..." */
    const char *head;           /* --help before the options (usage, what it does) */
    const char *tail;           /* --help after them (examples, exit status) */
    int col;                    /* the column where options' help starts */
    const opt_spec *opts;
    size_t n;
} opt_command;

/* Parses argv (argv[0] is the command's name) against cmd's table, adding
 * -h/--help. Returns -1 when the command should go on, with *first the
 * index of the first operand (operands are argv[*first..argc), options
 * and operands may be mixed); else the exit status: 0 after --help, 2
 * after a usage error (unknown option, missing or malformed value). */
int opt_parse(const opt_command *cmd, int argc, char **argv, int *first);
/* opt_parse with the options first: the first operand (or "--") ends
 * them, and what follows, a command's own argv, is never parsed. */
int opt_parse_first(const opt_command *cmd, int argc, char **argv, int *first);
/* Prints cmd's --help to out. */
void opt_help(const opt_command *cmd, FILE *out);
/* "memtrace CMD: see 'memtrace CMD --help'" on stderr; returns 2. */
int opt_usage(const char *cmd);

/* Types and stores one value as opt_parse would for option o (not
 * OPT_PAIR): 0, or 2 after the message. For values that need more than
 * one kind (OPT_CALL's functions). */
int opt_value(const char *cmd, const opt_spec *o, const char *arg);
/* The value parsers the kinds use, for values that arrive some other way
 * (the environment): 0 ok, -1 malformed. */
int opt_parse_rate(const char *text, double *bytes_per_s);

#endif
