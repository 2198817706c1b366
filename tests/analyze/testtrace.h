/*
 * testtrace.h - what the analysis unit tests share: CHECK (tests/check.h:
 * a "PASS: " or "FAIL: " line per check, as tests/run.sh reads them), a writer of test
 * traces on a new file, the functions their stacks go through, and a small
 * deterministic random generator.
 * Header-only: each test is one .c file.
 */
#ifndef MT_TESTS_TESTTRACE_H
#define MT_TESTS_TESTTRACE_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "analyze/load.h"
#include "memtrace/analyze.h"
#include "memtrace/trace.h"

/* CHECK, CHECK_QUIET and the count of failed checks (main returns
 * failures != 0). */
#include "../check.h"

/* The start time of every test trace. */
#define TT_START ((mt_timestamp)1000000000)

/* The trace info of a test trace of executable exe sampled at rate per
 * word of word_size bits: host h, pid 1, started at TT_START. */
static inline mt_trace_info tt_info(const char *exe, double rate, unsigned word_size)
{
    mt_trace_info info = {0};
    info.sample_rate = rate;
    info.word_size = word_size;
    info.executable_name = exe;
    info.host_name = "h";
    info.ocaml_runtime_params = "";
    info.pid = 1;
    info.start_time = TT_START;
    return info;
}

/* A writer on a new file at path for a trace of tt_info(exe, rate,
 * word_size), location codes named by resolve. *fd is to be closed after
 * mt_writer_close. NULL (the reason on stderr) when it cannot be made. */
static inline mt_writer *tt_writer_open_words(const char *path, const char *exe, double rate,
                                              unsigned word_size, mt_location_resolver resolve,
                                              int *fd)
{
    *fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (*fd < 0) {
        perror(path);
        return NULL;
    }
    mt_trace_info info = tt_info(exe, rate, word_size);
    mt_writer_options o = {0};
    o.resolve = resolve;
    char *err = NULL;
    mt_writer *w = mt_writer_open(*fd, &info, &o, &err);
    if (!w) {
        fprintf(stderr, "%s: %s\n", path, err ? err : "cannot write");
        free(err);
        close(*fd);
    }
    return w;
}

/* A new empty file for a test's trace in the scratch directory of
 * tests/run.sh ($MT_TMP, else /tmp), its path in buf: 0, or -1 (the reason
 * on stderr). */
static inline int tt_scratch_file(char *buf, size_t cap, const char *name)
{
    const char *dir = getenv("MT_TMP") ? getenv("MT_TMP") : "/tmp";
    snprintf(buf, cap, "%s/%s-XXXXXX", dir, name);
    int fd = mkstemp(buf);
    if (fd < 0) {
        perror("mkstemp");
        return -1;
    }
    close(fd);
    return 0;
}

/* The same with 64-bit words. */
static inline mt_writer *tt_writer_open(const char *path, const char *exe, double rate,
                                        mt_location_resolver resolve, int *fd)
{
    return tt_writer_open_words(path, exe, rate, 64, resolve, fd);
}

/* The functions of the test traces' stacks, by location code. */
enum {
    TT_MAIN = 0x100, TT_PARSE, TT_LOAD, TT_CACHE_PUT, TT_GROW, TT_XMALLOC, TT_TMP, TT_LEAK,
    TT_END
};

/* The writer's resolver of those codes: a.c main, parse, load; b.c
 * cache_put, grow, xmalloc; c.c tmp, leak, on lines 1 to 8. */
static inline int tt_resolve(void *ctx, mt_location_code code, const mt_location **l, size_t *n)
{
    static const mt_location locs[TT_END - TT_MAIN] = {
        {"a.c", "main", 1, 0, 0},      {"a.c", "parse", 2, 0, 0}, {"a.c", "load", 3, 0, 0},
        {"b.c", "cache_put", 4, 0, 0}, {"b.c", "grow", 5, 0, 0},  {"b.c", "xmalloc", 6, 0, 0},
        {"c.c", "tmp", 7, 0, 0},       {"c.c", "leak", 8, 0, 0},
    };
    (void)ctx;
    if (code < TT_MAIN || code >= TT_END)
        return -1;
    *l = &locs[code - TT_MAIN];
    *n = 1;
    return 0;
}

/* A resolver that names nothing: frames are named by their address. */
static inline int tt_resolve_none(void *ctx, mt_location_code code, const mt_location **l, size_t *n)
{
    (void)ctx;
    (void)code;
    (void)l;
    (void)n;
    return -1;
}

/* The model of the test trace at path, whole (fold 0) or folded with live
 * measured at the end (fold 1); NULL after a FAIL line saying why. */
static inline mt_model *tt_load(const char *path, int fold)
{
    mt_model_options mo = {0};
    mo.fold = fold;
    mo.fold_live_at = MT_TIME_END;
    char *err = NULL;
    mt_model *m = mt_model_load(path, &mo, &err);
    if (!m)
        CHECK(0, "load %s%s: %s", path, fold ? " folded" : "", err ? err : "?");
    free(err);
    return m;
}

/* xorshift64: the same numbers on every run, from the seed in *state. */
static inline uint64_t tt_rnd(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

#endif
