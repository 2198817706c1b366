/*
 * filter.h - the compiled form of a filter (see analyze.h and
 * docs/filters.md for the language). Internal to lib/analyze.
 */
#ifndef MTA_FILTER_H
#define MTA_FILTER_H

#include <regex.h>

#include "memtrace/analyze.h"

typedef enum mta_clause_kind {
    MTA_ALLOC,          /* alloc time in [lo, hi] */
    MTA_LIVE_AT,        /* live at lo (lo may be MT_TIME_PEAK / MT_TIME_END) */
    MTA_LIVE_RANGE,     /* live at some time of [lo, hi] */
    MTA_COLLECT,        /* collected in [lo, hi] */
    MTA_COLLECT_NEVER,
    MTA_SIZE,           /* size in [lo, hi] bytes */
    MTA_LIFETIME,       /* lifetime in [lo, hi] microseconds */
    MTA_SOURCE,         /* source in the mask (1 << mt_source) */
    MTA_INSIDE,         /* a frame's function matches pat */
    MTA_HIDE            /* frames whose function matches pat are removed */
} mta_clause_kind;

typedef struct mta_pattern {
    char *text;         /* the substring, or the regex source */
    int is_regex;
    regex_t re;
} mta_pattern;

typedef struct mta_clause {
    mta_clause_kind kind;
    int neg;
    int64_t lo, hi;
    unsigned sources;
    mta_pattern pat;
} mta_clause;

struct mt_filter {
    mta_clause *c;
    size_t n;
};

int mta_pattern_match(const mta_pattern *p, const char *name);

#endif
