/*
 * filter.h - the compiled form of a filter (see analyze.h and
 * docs/filters.md for the language). Internal to lib/analyze.
 */
#ifndef MTA_FILTER_H
#define MTA_FILTER_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

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
    MTA_HIDE,           /* frames whose function matches pat are removed */
    MTA_VERDICT,        /* leak verdict in the mask (1 << MT_VERDICT_*) */
    MTA_DOMAIN          /* allocated by OCaml 5 domain number lo */
} mta_clause_kind;

typedef struct mta_pattern {
    char *text;         /* the substring, or the regex source */
    int is_regex;
    pcre2_code *re;     /* compiled regex (is_regex) */
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

/* Bounds on one regex (docs/filters.md, "Regular expressions"). */
#define MTA_RE_MAX_PATTERN 1000        /* bytes of regex source */
#define MTA_RE_MAX_COMPILED 65536      /* bytes of compiled pattern */
#define MTA_RE_MATCH_LIMIT 1000000     /* backtracking steps per name */
#define MTA_RE_DEPTH_LIMIT 10000       /* nested backtracking per name */
#define MTA_RE_HEAP_KIB 8192           /* heap per match, KiB */
#define MTA_RE_TOTAL_SECONDS 5         /* all the names of one selection */

/* Matches p against each of the n functions' names: out[i] = 1 or 0.
 * Returns 0, or -1 when a regex went over a limit (or out of memory) with
 * a malloc'd message in *err (when err is not NULL). */
int mta_pattern_match_funcs(const mta_pattern *p, const mt_func *funcs, size_t n,
                            uint8_t *out, char **err);

/* Kinds of memory (kind: clause; kind.c): malloc blocks (source External),
 * anonymous mappings (source Major in C traces). */
enum { MTA_KIND_MALLOC = 0, MTA_KIND_MMAP = 1, MTA_NKINDS = 2 };
extern const char *const mta_kind_names[MTA_NKINDS];
int mta_kind_of(const mt_model *m, const mt_alloc *a);
/* Does allocation a pass the alloc-level clauses (all but inside: and
 * hide:) of f, with the times of live: clauses resolved in live_t (one per
 * clause)? (filter.c, by clause.h) */
int mta_alloc_passes(const mt_model *m, const mt_filter *f, const mt_alloc *a,
                     const mt_timedelta *live_t);   /* MTA_KIND_*, or -1 (OCaml heap) */


#endif
