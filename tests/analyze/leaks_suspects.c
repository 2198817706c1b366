/*
 * leaks_suspects.c - who `memtrace leaks` (mt_query_leaks, lib/analyze/
 * leaks.c) calls a suspect, on traces written here:
 * - false alarms: among 20 leak-free sites (stationary churn) the runs with
 *   any suspect stay at most alpha (Holm's correction over the family),
 *   while each site alone falls under alpha 3 to 5 % of the time, so
 *   without the correction about half the runs would name a suspect;
 * - growth given back is no leak: a site that grew significantly but holds
 *   a quarter of its highest at the end is not a suspect, a steady leak that
 *   holds all of it is, and one holding half its highest still is.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyze/load.h"
#include "memtrace/analyze.h"
#include "memtrace/leaks.h"
#include "testtrace.h"

#define SEC 1000000LL
#define SITES 20

/* Site i is function site<i> at s.c line i + 1, location code 0x1000 + i. */
static int resolve(void *ctx, mt_location_code code, const mt_location **l, size_t *n)
{
    static char names[SITES][16];
    static mt_location locs[SITES];
    (void)ctx;
    if (code < 0x1000 || code >= 0x1000 + SITES)
        return -1;
    int i = (int)(code - 0x1000);
    snprintf(names[i], sizeof names[i], "site%d", i);
    locs[i] = (mt_location){"s.c", names[i], i + 1, 0, 0};
    *l = &locs[i];
    *n = 1;
    return 0;
}

/* One event of a test trace: block b allocated (free = 0) or freed. */
typedef struct event {
    mt_timedelta t;
    int free;
    size_t b;
} event;

typedef struct block {
    mt_timedelta alloc, free; /* free MT_TIME_NEVER: live at the end */
    int site;
    mt_obj_id id;
} block;

static int by_time(const void *x, const void *y)
{
    const event *a = x, *b = y;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    if (a->free != b->free)
        return a->free - b->free;
    return a->b < b->b ? -1 : a->b > b->b;
}

/* Writes the blocks (one sample each: 800 bytes at rate 0.01 per 8-byte
 * word) as a trace ending at end, loads it and returns its leak report
 * (NULL on failure, said by a FAIL). */
static mt_leak_report *report_of(const char *path, block *bl, size_t n, mt_timedelta end)
{
    event *ev = malloc((2 * n + 1) * sizeof *ev);
    size_t ne = 0;
    for (size_t i = 0; ev && i < n; i++) {
        ev[ne++] = (event){bl[i].alloc, 0, i};
        if (bl[i].free != MT_TIME_NEVER)
            ev[ne++] = (event){bl[i].free, 1, i};
    }
    int fd, rc = ev ? 0 : -1;
    mt_writer *w = ev ? tt_writer_open(path, "leaks-test", 0.01, resolve, &fd) : NULL;
    if (!w)
        rc = -1;
    else {
        qsort(ev, ne, sizeof *ev, by_time);
        for (size_t i = 0; i < ne && rc == 0; i++) {
            block *b = &bl[ev[i].b];
            if (ev[i].free)
                rc = mt_writer_put_collect(w, TT_START + (mt_timestamp)ev[i].t, b->id);
            else {
                mt_location_code code = 0x1000 + (mt_location_code)b->site;
                rc = mt_writer_put_alloc(w, TT_START + (mt_timestamp)ev[i].t, 8, 1,
                                         MT_SOURCE_EXTERNAL, &code, 1, &b->id);
            }
        }
        /* the trace's end: one short-lived block of the last site */
        mt_location_code code = 0x1000 + SITES - 1;
        mt_obj_id id;
        rc |= mt_writer_put_alloc(w, TT_START + (mt_timestamp)end, 8, 1, MT_SOURCE_EXTERNAL,
                                  &code, 1, &id);
        rc |= mt_writer_put_collect(w, TT_START + (mt_timestamp)end, id);
        rc |= mt_writer_close(w);
        close(fd);
    }
    free(ev);
    if (rc) {
        CHECK(0, "writing the test trace %s", path);
        return NULL;
    }
    char *err = NULL;
    mt_model *m = mt_model_load(path, NULL, &err);
    if (!m) {
        CHECK(0, "loading %s: %s", path, err ? err : "?");
        free(err);
        return NULL;
    }
    mt_selection *s = mt_select(m, NULL, MT_TIME_END);
    mt_leak_options o = {0.05, MT_TIME_NEVER};
    mt_leak_report *r = s ? mt_query_leaks(s, &o) : NULL;
    mt_selection_free(s);
    mt_model_free(m);
    CHECK_QUIET(r != NULL, "the leak report of %s", path);
    return r;
}

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static double uniform(void)
{
    return ((tt_rnd(&rng) >> 11) + 0.5) / 9007199254740992.0;
}

static double expo(double mean)
{
    return -mean * log(uniform());
}

/* A leak-free service: each site a stationary churn (Poisson arrivals,
 * 5 a second; exponential lifetimes, mean 20 s; the blocks live at the start
 * drawn from the steady state), over 200 s. */
#define RUN (200 * SEC)
static size_t churn(block **out, size_t *cap)
{
    size_t n = 0;
    for (int s = 0; s < SITES; s++) {
        double rate = 5, life = 20;
        /* the steady state at 0: Poisson(rate * life) blocks live, each
         * with an exponential rest of life (a Poisson count as the sum of
         * exponential gaps within rate * life) */
        for (double k = expo(1); k < rate * life; k += expo(1)) {
            if (n == *cap) {
                *cap = *cap ? 2 * *cap : 4096;
                *out = realloc(*out, *cap * sizeof **out);
            }
            double f = expo(life);
            (*out)[n++] = (block){0, f * SEC < RUN ? (mt_timedelta)(f * SEC) : MT_TIME_NEVER, s, 0};
        }
        for (double t = expo(1 / rate); t * SEC < RUN; t += expo(1 / rate)) {
            if (n == *cap) {
                *cap = *cap ? 2 * *cap : 4096;
                *out = realloc(*out, *cap * sizeof **out);
            }
            double f = t + expo(life);
            (*out)[n++] = (block){(mt_timedelta)(t * SEC),
                                  f * SEC < RUN ? (mt_timedelta)(f * SEC) : MT_TIME_NEVER, s, 0};
        }
    }
    return n;
}

static void false_alarms(const char *path)
{
    block *bl = NULL;
    size_t cap = 0;
    int runs = 100, any = 0, any_raw = 0, tests = 0, raw = 0, tested = 0;
    for (int k = 0; k < runs; k++) {
        size_t n = churn(&bl, &cap);
        mt_leak_report *r = report_of(path, bl, n, RUN);
        if (!r)
            break;
        int a = 0, ar = 0;
        for (size_t i = 0; i < r->n; i++) {
            const mt_leak_site *e = &r->sites[i];
            a |= e->suspect;
            if (e->tested) {
                tests++;
                raw += e->growth > 0 && e->p < r->alpha;
                ar |= e->growth > 0 && e->p < r->alpha;
            }
        }
        tested += r->n_tested == SITES;
        any += a;
        any_raw += ar;
        mt_leak_report_free(r);
    }
    free(bl);
    CHECK(tested == runs, "every leak-free site is tested: %d of %d runs test all %d", tested,
          runs, SITES);
    /* each site alone: p < alpha about alpha of the time (a stationary
     * churn has no trend); so the runs can tell a correction from none */
    double per = tests ? (double)raw / tests : 0;
    CHECK(per > 0.01 && per < 0.08,
          "each leak-free site alone falls under alpha 0.05 in %.3f of %d tests (at most about 0.05)",
          per, tests);
    CHECK(any_raw >= 30,
          "uncorrected, %d of %d runs of %d leak-free sites would name a suspect (1 - (1 - %.3f)^%d = %.0f %% expected)",
          any_raw, runs, SITES, per, SITES, 100 * (1 - pow(1 - per, SITES)));
    /* corrected: at most alpha = 5 % of runs, + 3 sd of 100 runs (2.2 %) */
    CHECK(any <= 12, "corrected: %d of %d runs of %d leak-free sites name a suspect (at most alpha 0.05 + 3 sd)",
          any, runs, SITES);
}

/* Growth given back: site 0 a steady leak over the whole run (1000 blocks,
 * never freed); site 1 grows from the middle (800 blocks over [0.5, 0.9]
 * of the run) then frees 600 of them over [0.9, 0.95]: it holds 200 of its
 * highest 800 at the end; site 2 the same but frees 400: it holds half. */
static void given_back(const char *path)
{
    block bl[3000];
    size_t n = 0;
    mt_timedelta run = 1000 * SEC;
    for (int i = 0; i < 1000; i++)
        bl[n++] = (block){run * i / 1000, MT_TIME_NEVER, 0, 0};
    for (int s = 1; s <= 2; s++) {
        int freed = s == 1 ? 600 : 400;
        for (int i = 0; i < 800; i++) {
            mt_timedelta a = run / 2 + (run * 4 / 10) * i / 800;
            mt_timedelta f = i < freed ? run * 9 / 10 + (run / 20) * i / freed : MT_TIME_NEVER;
            bl[n++] = (block){a, f, s, 0};
        }
    }
    mt_leak_report *r = report_of(path, bl, n, run);
    if (!r)
        return;
    /* site 0 has 1000 samples; sites 1 and 2 800 each, told apart by what
     * they hold at the end */
    const mt_leak_site *s0 = NULL, *s1 = NULL, *s2 = NULL;
    for (size_t i = 0; i < r->n; i++)
        if (r->sites[i].samples == 1000)
            s0 = &r->sites[i];
    for (size_t i = 0; i < r->n; i++)
        if (r->sites[i].samples == 800) {
            if (r->sites[i].live_end < 0.4 * r->sites[i].live_high)
                s1 = &r->sites[i];
            else
                s2 = &r->sites[i];
        }
    if (!s0 || !s1 || !s2) {
        CHECK(0, "the three sites are in the report");
        mt_leak_report_free(r);
        return;
    }
    double bps = s0->live_end / 1000; /* bytes a block stands for */
    CHECK(s0->suspect && fabs(s0->live_end - s0->live_high) <= bps,
          "a steady leak holding all it grew at the end is a suspect (holds %.0f of %.0f blocks)",
          s0->live_end / bps, s0->live_high / bps);
    CHECK(s1->growth > 0 && s1->p_adj < 1e-6 && fabs(s1->live_end / bps - 200) < 0.5 &&
              fabs(s1->live_high / bps - 800) <= 2,
          "the site that gave back grew significantly (p_adj %.2g) and holds 200 of its highest 800 blocks (%.0f of %.0f)",
          s1->p_adj, s1->live_end / bps, s1->live_high / bps);
    CHECK(!s1->suspect, "growth given back below half its highest by the end is no suspect");
    CHECK(s2->growth > 0 && s2->p_adj < 1e-6 && fabs(s2->live_end / bps - 400) < 0.5 &&
              s2->live_high / bps <= 800.5,
          "the site holding half its highest grew significantly (p_adj %.2g; %.0f of %.0f blocks)",
          s2->p_adj, s2->live_end / bps, s2->live_high / bps);
    CHECK(s2->suspect, "a site still holding half its highest at the end is a suspect");
    CHECK(r->n_suspects == 2, "two suspects (%zu)", r->n_suspects);
    mt_leak_report_free(r);
}

int main(void)
{
    char path[4096];
    if (tt_scratch_file(path, sizeof path, "leaks-suspects") < 0)
        return 1;
    given_back(path);
    false_alarms(path);
    remove(path);
    return failures ? 1 : 0;
}
