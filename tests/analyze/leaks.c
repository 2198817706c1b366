/*
 * leaks.c - the leak-suspect test (lib/analyze/leaks.c) on simulated
 * services: growth figures worked out by hand, no suspect among sites that
 * churn, burst, fill a bounded cache or load memory once (the rate of runs
 * with any false suspect at most alpha, within noise), and the power the
 * planning formula promises for a small leak hidden among them.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "memtrace/compare.h"
#include "memtrace/leaks.h"
#include "testtrace.h"

#define SEC 1000000LL
#define RUN (3600 * SEC)          /* one hour */
#define INTERVAL (512.0 * 1024)   /* bytes per sample */
#define SITES 40

static uint64_t rng = 88172645463325252ULL;

static double uniform(void)
{
    return ((tt_rnd(&rng) >> 11) + 0.5) / 9007199254740992.0;
}

static double expo(double mean)
{
    return -mean * log(uniform());
}

/* Poisson with a small mean (Knuth). */
static unsigned poisson(double mean)
{
    double l = exp(-mean), p = 1;
    unsigned k = 0;
    do {
        k++;
        p *= uniform();
    } while (p > l);
    return k - 1;
}

/* The blocks of one site, sampled as the recorder samples. */
typedef struct site_buf {
    mt_leak_block *b;
    size_t n, cap;
} site_buf;

static void put(site_buf *s, mt_timedelta a, mt_timedelta f, double size)
{
    unsigned k = poisson(size / INTERVAL);
    if (!k)
        return;
    if (f != MT_TIME_NEVER && f > RUN)
        f = MT_TIME_NEVER;
    if (a > RUN)
        return;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->b = realloc(s->b, s->cap * sizeof *s->b);
    }
    s->b[s->n++] = (mt_leak_block){a, f, k * INTERVAL};
}

/* Site kinds of a leak-free service; kind chosen from the site's number. */
static void simulate(site_buf *s, int kind, int idx)
{
    s->n = 0;
    switch (kind) {
    case 0: { /* churn: Poisson arrivals, exponential lifetimes 10 ms - 60 s */
        double rate = 2 + idx % 7, life = 0.01 * pow(10, idx % 4) * (1 + idx % 3);
        for (double t = expo(1 / rate); t * SEC < RUN; t += expo(1 / rate))
            put(s, (mt_timedelta)(t * SEC), (mt_timedelta)((t + expo(life)) * SEC),
                16384 + 4096 * (idx % 5));
        break;
    }
    case 1: /* bursts: a batch built at once, dropped at once 5 s later */
        for (double t = expo(10); t * SEC < RUN; t += expo(10))
            for (int i = 0; i < 200; i++)
                put(s, (mt_timedelta)(t * SEC) + i, (mt_timedelta)((t + 5) * SEC) + i, 16384);
        break;
    case 2: { /* a bounded cache: fills in the first 20 minutes, then FIFO */
        enum { N = 2000 };
        double t = 0, step = 1200.0 / N;
        static mt_timedelta born[N];
        for (int i = 0; i < N; i++, t += step)
            born[i] = (mt_timedelta)(t * SEC);
        /* then one replacement every 0.5 s; entry i lives until replaced */
        double r = 1200;
        mt_timedelta *birth = born;
        for (int i = 0; r * SEC < RUN; i = (i + 1) % N, r += 0.5) {
            put(s, birth[i], (mt_timedelta)(r * SEC), 8192);
            birth[i] = (mt_timedelta)(r * SEC);
        }
        for (int i = 0; i < N; i++)
            put(s, birth[i], MT_TIME_NEVER, 8192);
        break;
    }
    default: /* loaded once at start, kept */
        for (int i = 0; i < 3000; i++)
            put(s, (mt_timedelta)(i * 100), MT_TIME_NEVER, 32768);
        break;
    }
}

/* A leak of rate bytes per second in 4 KiB blocks, from the start on. */
static void simulate_leak(site_buf *s, double rate)
{
    s->n = 0;
    double every = 4096 / rate;
    for (double t = expo(every); t * SEC < RUN; t += expo(every))
        put(s, (mt_timedelta)(t * SEC), MT_TIME_NEVER, 4096);
}

/* Runs the family of a service (plus a leak when rate > 0) through the
 * per-site test and Holm as mt_query_leaks does: 1 when the leak site is a
 * suspect (rate > 0) or when any site is (rate == 0). */
static int one_run(site_buf *sites, double rate, int *false_suspect)
{
    mt_leak_site res[SITES + 1];
    double p[SITES + 1];
    size_t n = 0;
    for (int i = 0; i < SITES; i++) {
        simulate(&sites[i], i % 4, i);
        mt_leak_test(sites[i].b, sites[i].n, RUN / 2, RUN, &res[n]);
        p[n] = res[n].p;
        n++;
    }
    if (rate > 0) {
        simulate_leak(&sites[SITES], rate);
        mt_leak_test(sites[SITES].b, sites[SITES].n, RUN / 2, RUN, &res[n]);
        p[n] = res[n].p;
        n++;
    }
    mt_holm(p, n, p);
    *false_suspect = 0;
    for (int i = 0; i < SITES; i++)
        if (res[i].growth > 0 && p[i] < 0.05)
            *false_suspect = 1;
    return rate > 0 ? res[SITES].growth > 0 && p[SITES] < 0.05 : *false_suspect;
}

int main(void)
{
    /* By hand: 1000 blocks of 1000 bytes allocated evenly over the later
     * half hour and never freed grow the live memory by 1e6 bytes in
     * 1800 s: 555.6 bytes per second. */
    mt_leak_block b[2000];
    for (int i = 0; i < 1000; i++)
        b[i] = (mt_leak_block){RUN / 2 + (RUN / 2) * i / 1000, MT_TIME_NEVER, 1000};
    mt_leak_site r;
    mt_leak_test(b, 1000, RUN / 2, RUN, &r);
    CHECK(fabs(r.growth - 1e6 / 1800) < 0.01 * 1e6 / 1800, "a steady leak grows at its rate (%.1f B/s, expected 555.6)", r.growth);
    CHECK(r.z > 10 && r.p < 1e-12, "a steady leak of 1000 blocks is significant (z %.1f)", r.z);
    CHECK(fabs(r.live_end - 1e6) < 1, "its live bytes at the end are 1e6 (%.0f)", r.live_end);
    CHECK(isnan(r.kept), "no block of it was watched a whole window: kept unknown");
    /* the same blocks allocated before the window and kept: no growth */
    for (int i = 0; i < 1000; i++)
        b[i].alloc = (RUN / 2) * i / 1000;
    mt_leak_test(b, 1000, RUN / 2, RUN, &r);
    CHECK(r.growth == 0 && r.units == 0 && r.p == 1, "memory loaded before the window is no growth (%.3f B/s)", r.growth);
    CHECK(r.kept == 1, "and all of it outlives the window (kept %.2f)", r.kept);
    /* memory freed steadily over the window: negative growth */
    for (int i = 0; i < 1000; i++)
        b[i] = (mt_leak_block){0, RUN / 2 + (RUN / 2) * i / 1000, 1000};
    mt_leak_test(b, 1000, RUN / 2, RUN, &r);
    CHECK(fabs(r.growth + 1e6 / 1800) < 0.01 * 1e6 / 1800 && r.p > 0.99, "memory released over the window shrinks (%.1f B/s)", r.growth);
    CHECK(r.kept > 0.99, "each lived half an hour or more: all of it outlives the window (kept %.2f)", r.kept);
    /* churn: blocks freed a minute after they are made, all run long */
    for (int i = 0; i < 2000; i++)
        b[i] = (mt_leak_block){RUN * i / 2000, RUN * i / 2000 + 60 * SEC, 1000};
    mt_leak_test(b, 2000, RUN / 2, RUN, &r);
    CHECK(r.kept == 0 && fabs(r.z) < 4, "churn: nothing outlives the window (kept %.2f), no trend (z %.2f)", r.kept, r.z);
    /* one burst: 1000 blocks allocated together in the window and kept
     * count as one unit, not as 1000 independent witnesses */
    for (int i = 0; i < 1000; i++)
        b[i] = (mt_leak_block){RUN * 3 / 4 + i, MT_TIME_NEVER, 1000};
    mt_leak_test(b, 1000, RUN / 2, RUN, &r);
    CHECK(r.units == 1 && fabs(r.z - 1) < 1e-9, "a burst is one unit (units %llu, z %.2f)", (unsigned long long)r.units, r.z);

    /* Leak-free services: runs with any false suspect at most alpha. */
    site_buf sites[SITES + 1] = {{0}};
    int runs = 200, any = 0, fs;
    for (int k = 0; k < runs; k++)
        any += one_run(sites, 0, &fs);
    double rate = (double)any / runs, sd = sqrt(0.05 * 0.95 / runs);
    CHECK(rate <= 0.05 + 3 * sd, "leak-free services: %d of %d runs had a false suspect (at most alpha 0.05 + 3 sd)", any, runs);

    /* Power: a leak at the rate the plan says is found 80% of the time
     * among SITES + 1 sites over half an hour at this interval. */
    double plan = mt_leak_min_rate(INTERVAL, 1800, SITES + 1, 0.05, 0.8);
    CHECK(plan > 0, "plan: a leak of %.0f B/s (%.1f MiB/h) is found at 512 KiB", plan, plan * 3600 / 1048576);
    int found = 0, found3 = 0, wrong = 0;
    runs = 100;
    for (int k = 0; k < runs; k++) {
        found += one_run(sites, plan, &fs);
        wrong += fs;
        found3 += one_run(sites, 3 * plan, &fs);
        wrong += fs;
    }
    CHECK(found >= 70, "a leak at the planned rate is found in %d of %d runs (80%% promised)", found, runs);
    CHECK(found3 >= 98, "a leak at 3x the planned rate is found in %d of %d runs", found3, runs);
    CHECK(wrong <= 2 * runs * (0.05 + 3 * sd), "no more false suspects beside a leak (%d in %d runs)", wrong, 2 * runs);
    double iv = mt_leak_plan_interval(plan, 1800, SITES + 1, 0.05, 0.8);
    CHECK(fabs(iv - INTERVAL) < 1, "the planned interval and the planned rate agree (%.0f)", iv);
    for (int i = 0; i <= SITES; i++)
        free(sites[i].b);
    return failures ? 1 : 0;
}
