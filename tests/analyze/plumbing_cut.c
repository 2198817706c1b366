/*
 * plumbing_cut.c - unit test of allocation plumbing on shallow models
 * (mt_selection_sites_complete): a stack whose innermost frames are a
 * plumbing function and a frame of the same stripped library without a
 * name ("libsqlite3.so.0+0xa7504" under sqlite3Malloc, as Debian's sqlite3
 * records) is all plumbing within a cut of 2 codes, so the shallow model is
 * not complete and the site found on the whole stack is the caller of
 * sqlite3Malloc: the same site for top (shallow first) as for folded,
 * pprof and the viewer (whole stacks). And memtrace stats (whose model
 * keeps the innermost frame only, all raw here) does not tell to run
 * memtrace symbolize on such a trace, only on one whose frames are all raw.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/load.h"
#include "memtrace/analyze.h"
#include "testtrace.h"

enum { C_MAIN = 0x100, C_STEP, C_INSERT, C_MALLOC, C_INNER, C_END };
enum { R_MAIN = 0x200, R_INNER, R_END };

static int resolve(void *ctx, mt_location_code code, const mt_location **l, size_t *n)
{
    static const mt_location locs[C_END - C_MAIN] = {
        {"a.c", "main", 1, 0, 0},
        {"/usr/lib/libsqlite3.so.0", "sqlite3_step", 0, 0, 0},
        {"/usr/lib/libsqlite3.so.0", "libsqlite3.so.0+0x3b40e", 0, 0, 0},
        {"/usr/lib/libsqlite3.so.0", "sqlite3Malloc", 0, 0, 0},
        {"/usr/lib/libsqlite3.so.0", "libsqlite3.so.0+0xa7504", 0, 0, 0},
    };
    (void)ctx;
    if (code < C_MAIN || code >= C_END)
        return -1;
    *l = &locs[code - C_MAIN];
    *n = 1;
    return 0;
}

/* A trace never symbolized: every frame raw. */
static int resolve_raw(void *ctx, mt_location_code code, const mt_location **l, size_t *n)
{
    static const mt_location locs[R_END - R_MAIN] = {
        {"/usr/bin/app", "app+0x1234", 0, 0, 0},
        {"/usr/lib/libsqlite3.so.0", "libsqlite3.so.0+0xa7504", 0, 0, 0},
    };
    (void)ctx;
    if (code < R_MAIN || code >= R_END)
        return -1;
    *l = &locs[code - R_MAIN];
    *n = 1;
    return 0;
}

static int write_trace(const char *path, mt_location_resolver resolve, const uint64_t *st,
                       size_t n)
{
    int fd;
    mt_writer *w = tt_writer_open(path, "sqlite3", 0.01, resolve, &fd);
    if (!w)
        return -1;
    mt_obj_id id;
    int rc = 0;
    for (int i = 0; i < 50; i++)
        rc |= mt_writer_put_alloc(w, TT_START + i, 100, 1, MT_SOURCE_EXTERNAL, st, n, &id);
    rc |= mt_writer_close(w);
    close(fd);
    return rc;
}

/* Does memtrace stats PATH say on stderr that the trace is not symbolized? */
static int stats_hints_symbolize(const char *path)
{
    const char *bin = getenv("MT_BIN") ? getenv("MT_BIN") : "build/memtrace";
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' stats '%s' 2>&1 >/dev/null", bin, path);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[4096];
    int hint = 0;
    while (fgets(line, sizeof line, p))
        if (strstr(line, "memtrace symbolize"))
            hint = 1;
    pclose(p);
    return hint;
}

/* The site's function of the largest site for a model cut at depth. */
static const char *top_site(const char *path, size_t depth, int *complete, char *buf, size_t cap)
{
    mt_model_options o = {0};
    o.max_depth = depth;
    char *err = NULL;
    mt_model *m = mt_model_load(path, &o, &err);
    if (!m) {
        fprintf(stderr, "%s\n", err ? err : "load failed");
        free(err);
        return NULL;
    }
    mt_plumbing *p = mt_plumbing_new(1);
    mt_selection *s = mt_select_sites(m, NULL, MT_TIME_END, p, &err);
    *complete = s && mt_selection_sites_complete(s, p, depth);
    mt_sites *t = s ? mt_query_sites(s, MT_METRIC_ALLOC_BYTES, 2) : NULL;
    snprintf(buf, cap, "%s",
             t && t->n ? mt_model_funcs(m)[mt_model_frames(m)[t->sites[0].frame].func].name
                       : "(none)");
    mt_sites_free(t);
    mt_selection_free(s);
    mt_plumbing_free(p);
    mt_model_free(m);
    return buf;
}

int main(void)
{
    const char *dir = getenv("MT_TMP") ? getenv("MT_TMP") : "/tmp";
    char path[4096];
    snprintf(path, sizeof path, "%s/plumbing_cut.ctf", dir);
    uint64_t st[5] = {C_MAIN, C_STEP, C_INSERT, C_MALLOC, C_INNER}; /* caller first */
    if (write_trace(path, resolve, st, 5) != 0)
        return 1;
    char a[256], b[256];
    int complete = 1;
    top_site(path, 2, &complete, a, sizeof a);
    CHECK(!complete, "a cut of 2 codes (sqlite3Malloc, an unnamed frame under it) is not "
                     "complete: the site lies above it");
    top_site(path, 0, &complete, b, sizeof b);
    CHECK(complete && !strcmp(b, "libsqlite3.so.0+0x3b40e"),
          "whole stacks: the site is sqlite3Malloc's caller (%s)", b);
    top_site(path, 4, &complete, a, sizeof a);
    CHECK(complete && !strcmp(a, b), "a cut of 4 codes: complete, the same site (%s)", a);

    CHECK(stats_hints_symbolize(path) == 0,
          "stats: no advice to symbolize a trace whose innermost frames only are raw");
    char raw[4096];
    snprintf(raw, sizeof raw, "%s/all_raw.ctf", dir);
    uint64_t rst[2] = {R_MAIN, R_INNER};
    if (write_trace(raw, resolve_raw, rst, 2) != 0)
        return 1;
    CHECK(stats_hints_symbolize(raw) == 1, "stats: the advice to symbolize a trace never symbolized");
    return failures != 0;
}
