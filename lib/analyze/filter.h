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
    MTA_KIND,           /* kind in the mask (1 << MTA_KIND_*) */
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

/* Kinds of memory (kind: clause; kind.c): malloc blocks (source External),
 * anonymous mappings (source Major in C traces). */
enum { MTA_KIND_MALLOC = 0, MTA_KIND_MMAP = 1, MTA_NKINDS = 2 };
extern const char *const mta_kind_names[MTA_NKINDS];
int mta_kind_of(const mt_model *m, const mt_alloc *a);   /* MTA_KIND_*, or -1 (OCaml heap) */

int mta_pattern_match(const mta_pattern *p, const char *name);

#endif
