/*
 * options.c - the option driver (options.h): getopt_long over a command's
 * table, each value typed and checked by its kind, --help from the table.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/present.h"
#include "options.h"
#include "units.h"

#define OPT_VAL_BASE 0x1000  /* getopt values of long-only options: base + index */

int opt_usage(const char *cmd)
{
    fprintf(stderr, "memtrace %s: see 'memtrace %s --help'\n", cmd, cmd);
    return 2;
}

int opt_parse_rate(const char *text, double *bytes_per_s)
{
    const char *slash = strchr(text, '/');
    uint64_t bytes, per_us;
    if (!slash || mt_units_parse_n(text, (size_t)(slash - text), mt_size_units, 1, &bytes, NULL) ||
        bytes == 0)
        return -1;
    /* the unit alone, as one of it: "h" is "1h" */
    char one[16];
    if (!slash[1] || strlen(slash + 1) + 2 > sizeof one)
        return -1;
    snprintf(one, sizeof one, "1%s", slash + 1);
    if (mt_units_duration(one, 0, &per_us) || per_us == 0)
        return -1;
    *bytes_per_s = (double)bytes * 1e6 / (double)per_us;
    return 0;
}

/* A decimal number, all of text: 0 with *v set, or -1. */
static int parse_decimal(const char *text, double *v)
{
    char *end;
    if (!*text || !((*text >= '0' && *text <= '9') || *text == '-'))
        return -1;
    *v = strtod(text, &end);
    return *end || !isfinite(*v) || floor(*v) != *v ? -1 : 0;
}

static void print_choices(const char *const *c)
{
    for (size_t i = 0; c[i]; i++)
        fprintf(stderr, "%s%s", i == 0 ? "" : c[i + 1] ? ", " : " or ", c[i]);
}

static int take_size(const char *cmd, const char *opt, const opt_spec *o, const char *arg)
{
    uint64_t bytes;
    if (mt_units_size(arg, &bytes) != MT_UNITS_OK || (double)bytes < o->lo) {
        char lo[32] = "";
        if (o->lo > 0)
            mt_format_bytes(lo, sizeof lo, o->lo);
        fprintf(stderr, "memtrace %s: %s %s: expected a size%s%s, e.g. 200MiB, 512k, 1g\n", cmd,
                opt, arg, o->lo > 0 ? " of at least " : "", lo);
        return 2;
    }
    *(uint64_t *)o->dest = bytes;
    return 0;
}

/* OPT_TIME and OPT_DURATION: the time grammar of mt_parse_time. */
static int take_time(const char *cmd, const char *opt, const opt_spec *o, const char *arg)
{
    char *err = NULL;
    mt_timedelta t;
    if (mt_parse_time(arg, &t, &err) < 0) {
        fprintf(stderr, "memtrace %s: %s %s: %s\n", cmd, opt, arg, err ? err : "bad time");
        free(err);
        return 2;
    }
    if (o->kind == OPT_DURATION &&
        (t <= 0 || t == MT_TIME_END || t == MT_TIME_PEAK || t == MT_TIME_NEVER)) {
        fprintf(stderr, "memtrace %s: %s %s: expected a duration such as 30s, 5min or 1h\n", cmd,
                opt, arg);
        return 2;
    }
    *(mt_timedelta *)o->dest = t;
    return 0;
}

/* OPT_SECONDS: the duration grammar of units.h, a bare number seconds. */
static int take_seconds(const char *cmd, const char *opt, const opt_spec *o, const char *arg)
{
    uint64_t us;
    if (mt_units_duration(arg, MT_US_PER_S, &us) != MT_UNITS_OK || (double)us > o->hi * 1e6) {
        char most[32];
        if (fmod(o->hi, 3600) == 0)
            snprintf(most, sizeof most, "%gh", o->hi / 3600);
        else
            snprintf(most, sizeof most, "%gs", o->hi);
        fprintf(stderr, "memtrace %s: %s %s: expected a time from 0 to %s (a bare number: "
                        "seconds)\n", cmd, opt, arg, most);
        return 2;
    }
    *(double *)o->dest = (double)us / 1e6;
    return 0;
}

/* OPT_COUNT and OPT_INT: a whole decimal number within the bounds. */
static int take_whole(const char *cmd, const char *opt, const opt_spec *o, const char *arg)
{
    double v;
    if (parse_decimal(arg, &v) < 0 || v < o->lo || (o->kind == OPT_INT && v > o->hi) || v >= 1e18) {
        if (o->kind == OPT_INT)
            fprintf(stderr, "memtrace %s: %s %s: expected a number %g..%g\n", cmd, opt, arg, o->lo,
                    o->hi);
        else
            fprintf(stderr, "memtrace %s: %s %s: not a %snumber\n", cmd, opt, arg,
                    o->lo > 0 ? "positive " : "");
        return 2;
    }
    if (o->kind == OPT_INT)
        *(int *)o->dest = (int)v;
    else
        *(size_t *)o->dest = (size_t)v;
    return 0;
}

/* OPT_REAL (strictly between the bounds) and OPT_PERCENT. */
static int take_real(const char *cmd, const char *opt, const opt_spec *o, const char *arg)
{
    char *end;
    double v = strtod(arg, &end);
    if (o->kind == OPT_PERCENT) {
        if (end != arg && *end == '%')
            end++;
        if (end == arg || *end || !(v >= 0) || !isfinite(v)) {
            fprintf(stderr, "memtrace %s: %s %s: expected a percentage, e.g. 10%%\n", cmd, opt, arg);
            return 2;
        }
    } else if (!*arg || *end || !(v > o->lo && v < o->hi)) {
        fprintf(stderr, "memtrace %s: %s %s: expected a number between %g and %g, e.g. 0.01\n", cmd,
                opt, arg, o->lo, o->hi);
        return 2;
    }
    *(double *)o->dest = v;
    return 0;
}

/* OPT_CHOICE, OPT_PAIR, OPT_LIST: words kept as given, or their index. */
static int take_word(const char *cmd, const char *opt, const opt_spec *o, const char *arg,
                     char **argv, int argc)
{
    if (o->kind == OPT_CHOICE) {
        for (int i = 0; o->choices[i]; i++)
            if (!strcmp(o->choices[i], arg)) {
                *(int *)o->dest = i;
                return 0;
            }
        fprintf(stderr, "memtrace %s: %s %s: use ", cmd, opt, arg);
        print_choices(o->choices);
        fputc('\n', stderr);
        return 2;
    }
    if (o->kind == OPT_PAIR) {
        if (!argv || optind >= argc) {
            fprintf(stderr, "memtrace %s: %s takes two values: %s %s\n", cmd, opt, opt,
                    o->meta ? o->meta : "A B");
            return 2;
        }
        ((const char **)o->dest)[0] = arg;
        ((const char **)o->dest)[1] = argv[optind++];
        return 0;
    }
    opt_list *l = o->dest;
    if (l->n >= l->cap) {
        fprintf(stderr, "memtrace %s: %s: at most %zu values\n", cmd, opt, l->cap);
        return 2;
    }
    l->v[l->n++] = arg;
    return 0;
}

/* Types and stores one value; 0, or 2 after the message. */
static int take(const char *cmd, const opt_spec *o, const char *arg, char **argv, int argc)
{
    char opt[64];
    snprintf(opt, sizeof opt, "--%s", o->name);
    switch (o->kind) {
    case OPT_FLAG: *(int *)o->dest = 1; return 0;
    case OPT_STRING:
    case OPT_FILTER: *(const char **)o->dest = arg; return 0;
    case OPT_SIZE: return take_size(cmd, opt, o, arg);
    case OPT_TIME:
    case OPT_DURATION: return take_time(cmd, opt, o, arg);
    case OPT_SECONDS: return take_seconds(cmd, opt, o, arg);
    case OPT_RATE:
        if (opt_parse_rate(arg, (double *)o->dest) < 0) {
            fprintf(stderr, "memtrace %s: %s %s: expected a rate such as 1MiB/h, 200KiB/min, 50B/s\n",
                    cmd, opt, arg);
            return 2;
        }
        return 0;
    case OPT_MEASURE: {
        int m = mt_metric_parse(arg);
        if (m < 0) {
            fprintf(stderr, "memtrace %s: %s %s: unknown measure (use alloc, count, live, "
                    "live_count, temporary, temp_bytes, samples)\n", cmd, opt, arg);
            return 2;
        }
        *(mt_metric *)o->dest = (mt_metric)m;
        return 0;
    }
    case OPT_COUNT:
    case OPT_INT: return take_whole(cmd, opt, o, arg);
    case OPT_REAL:
    case OPT_PERCENT: return take_real(cmd, opt, o, arg);
    case OPT_CHOICE:
    case OPT_PAIR:
    case OPT_LIST: return take_word(cmd, opt, o, arg, argv, argc);
    case OPT_CALL: return o->fn(o->ctx, arg, opt);
    }
    return 2;
}

int opt_value(const char *cmd, const opt_spec *o, const char *arg)
{
    return take(cmd, o, arg, NULL, 0);
}

static int needs_value(opt_kind k)
{
    return k != OPT_FLAG;
}

/* One option's left column: "  -b, --by MEASURE". */
static int left_column(char *buf, size_t cap, int letter, const char *name, const char *meta)
{
    char s[8] = "    ";
    if (letter)
        snprintf(s, sizeof s, "-%c, ", letter);
    return snprintf(buf, cap, "  %s--%s%s%s", s, name, meta ? " " : "", meta ? meta : "");
}

static void help_entry(FILE *out, int col, int letter, const char *name, const char *meta,
                       const char *help)
{
    char left[128];
    int n = left_column(left, sizeof left, letter, name, meta);
    fputs(left, out);
    if (help[0] != '\n')   /* else the help starts on the next line */
        fprintf(out, "%*s", n + 2 <= col ? col - n : 2, "");
    for (const char *p = help; *p; p++) {
        fputc(*p, out);
        if (*p == '\n')
            fprintf(out, "%*s", col, "");
    }
    fputc('\n', out);
}

void opt_help(const opt_command *cmd, FILE *out)
{
    fputs(cmd->head, out);
    for (size_t i = 0; i < cmd->n; i++)
        if (cmd->opts[i].help)
            help_entry(out, cmd->col, cmd->opts[i].letter, cmd->opts[i].name, cmd->opts[i].meta,
                       cmd->opts[i].help);
    help_entry(out, cmd->col, 'h', "help", NULL, "this help");
    if (cmd->tail)
        fputs(cmd->tail, out);
}

static int parse(const opt_command *cmd, int argc, char **argv, int *first, int in_order)
{
    struct option longs[cmd->n + 2];
    char shorts[3 * cmd->n + 5];
    size_t ns = 0;
    if (in_order)
        shorts[ns++] = '+';   /* stop at the first operand */
    shorts[ns++] = ':';   /* a missing value returns ':' */
    for (size_t i = 0; i < cmd->n; i++) {
        const opt_spec *o = &cmd->opts[i];
        longs[i] = (struct option){o->name, needs_value(o->kind) ? required_argument : no_argument,
                                   NULL, o->letter ? o->letter : OPT_VAL_BASE + (int)i};
        if (o->letter) {
            shorts[ns++] = (char)o->letter;
            if (needs_value(o->kind))
                shorts[ns++] = ':';
        }
    }
    longs[cmd->n] = (struct option){"help", no_argument, NULL, 'h'};
    longs[cmd->n + 1] = (struct option){NULL, 0, NULL, 0};
    shorts[ns++] = 'h';
    shorts[ns] = 0;
    optind = 0;   /* a fresh scan (GNU getopt) */
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        if (c == 'h') {
            opt_help(cmd, stdout);
            return 0;
        }
        if (c == '?' || c == ':') {
            const char *word = argv[optind - 1];
            if (c == ':')
                fprintf(stderr, "memtrace %s: %s needs a value\n", cmd->name, word);
            else if (optopt && word[0] == '-' && word[1] != '-')
                fprintf(stderr, "memtrace %s: unknown option '-%c'\n", cmd->name, optopt);
            else
                fprintf(stderr, "memtrace %s: unknown option '%s'\n", cmd->name, word);
            return opt_usage(cmd->name);
        }
        const opt_spec *o = NULL;
        for (size_t i = 0; i < cmd->n && !o; i++)
            if (c == (cmd->opts[i].letter ? cmd->opts[i].letter : OPT_VAL_BASE + (int)i))
                o = &cmd->opts[i];
        if (!o)
            return opt_usage(cmd->name);
        if (take(cmd->name, o, optarg, argv, argc))
            return 2;
        if (o->given)
            *o->given = 1;
        if (o->text)
            *o->text = optarg;
    }
    *first = optind;
    return -1;
}

int opt_parse(const opt_command *cmd, int argc, char **argv, int *first)
{
    return parse(cmd, argc, argv, first, 0);
}

int opt_parse_first(const opt_command *cmd, int argc, char **argv, int *first)
{
    return parse(cmd, argc, argv, first, 1);
}
