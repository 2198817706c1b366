/*
 * sampling.c - the sampling process itself, counted in-process through the
 * sampler's callbacks (linked with the recorder, which replaces malloc
 * here): every byte is sampled independently with probability `rate`, so
 * a block of b counted bytes holds Binomial(b, rate) sample points.
 *
 * For each rate (1, 0.9, 0.5, 0.1, 1e-3, 1/4096, 1/524288) and each entry
 * point (malloc of 0, 1, small, odd and huge sizes, calloc, realloc, the
 * aligned family, C++ operator new) it makes many blocks and checks
 *  - the mean: total sample points within 5 standard errors of N b rate;
 *  - the spread: a chi-square test of the per-block counts (unsampled
 *    blocks count 0) against the Binomial(b, rate) distribution;
 *  - at rate 1: every block sampled, with exactly b sample points.
 * Then the sampler's accounting by numbers: malloc(0) is 1 byte, calloc
 * n*m, pvalloc a whole number of pages, free_sized / free_aligned_sized /
 * operator delete end the tracking of their block; realloc of a sampled
 * block samples its new size on the countdown, Binomial(size, rate).
 */
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memtrace/record.h"

/* The recorder's operator new/delete (C++ mangled names). */
void *_Znwm(size_t size);
void *_ZnwmSt11align_val_t(size_t size, size_t align);
void _ZdlPv(void *p);
void _ZdlPvSt11align_val_t(void *p, size_t align);
void free_sized(void *p, size_t size);
void free_aligned_sized(void *p, size_t align, size_t size);

#include "../check.h"

static void *escape(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
    return p;
}

/* What the callbacks collect: the n_samples of every sampled block of the
 * size and kind under test. */
static size_t want_size;
static mt_alloc_kind want_kind;
static uint64_t *counts;
static size_t ncounts, cap;
static uint64_t n_tracked, n_freed;

static void *on_alloc(void *ctx, const mt_allocation *a)
{
    (void)ctx;
    if (a->size == want_size && a->kind == want_kind && ncounts < cap)
        counts[ncounts++] = a->n_samples;
    n_tracked++;
    return (void *)(uintptr_t)1;
}

static void on_free(void *ctx, void *token)
{
    (void)ctx;
    (void)token;
    n_freed++;
}

static const mt_tracker tracker = { on_alloc, on_free, NULL };

/* ---------------------------------------------------------------------- */
/* The entry points under test                                             */

enum entry { E_MALLOC, E_CALLOC, E_REALLOC, E_MEMALIGN, E_POSIX_MEMALIGN, E_ALIGNED_ALLOC,
             E_VALLOC, E_NEW, E_NEW_ALIGNED };
static const char *const entry_name[] = { "malloc", "calloc", "realloc", "memalign(4096)",
                                          "posix_memalign(64)", "aligned_alloc(256)", "valloc",
                                          "operator new", "operator new(align 64)" };

static mt_alloc_kind entry_kind(enum entry e)
{
    switch (e) {
    case E_CALLOC: return MT_ALLOC_CALLOC;
    case E_REALLOC: return MT_ALLOC_REALLOC;
    case E_MALLOC: case E_NEW: return MT_ALLOC_MALLOC;
    default: return MT_ALLOC_ALIGNED;
    }
}

static void one_block(enum entry e, size_t size)
{
    void *p = NULL;
    switch (e) {
    case E_MALLOC: free(escape(malloc(size))); break;
    case E_CALLOC: free(escape(calloc(size, 1))); break;
    case E_REALLOC:
        p = escape(malloc(8));
        free(escape(realloc(p, size)));
        break;
    case E_MEMALIGN: free(escape(memalign(4096, size))); break;
    case E_POSIX_MEMALIGN:
        if (posix_memalign(&p, 64, size) == 0)
            free(escape(p));
        break;
    case E_ALIGNED_ALLOC: free(escape(aligned_alloc(256, size))); break;
    case E_VALLOC: free(escape(valloc(size))); break;
    case E_NEW: _ZdlPv(escape(_Znwm(size))); break;
    case E_NEW_ALIGNED: _ZdlPvSt11align_val_t(escape(_ZnwmSt11align_val_t(size, 64)), 64); break;
    }
}

/* ---------------------------------------------------------------------- */
/* Statistics                                                              */

static double log_binom_pmf(double n, double p, double k)
{
    return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1) + k * log(p) + (n - k) * log1p(-p);
}

/* Upper 1 - 3e-7 point (z = 5) of chi-square with df degrees of freedom
 * (Wilson-Hilferty). */
static double chi2_limit(int df)
{
    double v = 2.0 / (9.0 * df);
    double c = 1.0 - v + 5.0 * sqrt(v);
    return df * c * c * c;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Chi-square of N per-block counts (obs, sorted; blocks not listed count
 * 0) against Binomial(b, p); bins hold at least 5 expected blocks (and
 * N/1000, so at most about 1000 bins). Sets *df (0: too few blocks). */
static double chi_square(const uint64_t *obs, size_t nobs, size_t N, uint64_t b, double p, int *df)
{
    double n = (double)b, mu = n * p, sd = sqrt(n * p * (1 - p));
    double lo = floor(mu - 12 * sd - 1), hi = ceil(mu + 12 * sd + 1);
    if (lo < 0) lo = 0;
    if (hi > n) hi = n;
    /* Expected blocks per value k in [lo, hi]; tails go to the edge bins. */
    double chi2 = 0, e_bin = 0, below = 0;
    size_t o_bin = 0, zeros = N - nobs, i = 0;
    int bins = 0;
    double bin_e[4096], min_e = N / 1000.0 > 5 ? N / 1000.0 : 5;
    size_t bin_o[4096];
    double start = lo;
    for (double k = lo; k <= hi; k++) {
        double e = (double)N * exp(log_binom_pmf(n, p, k));
        below += e;
        e_bin += e;
        /* observed blocks with count in [start, k] (or below, for the first) */
        if (k == 0)
            o_bin += zeros;
        while (i < nobs && (double)obs[i] <= k) {
            o_bin++;
            i++;
        }
        double rest = (double)N - below;
        if ((e_bin >= min_e && rest >= min_e) || k == hi) {
            if (k == hi) {       /* everything above goes to the last bin */
                e_bin += rest > 0 ? rest : 0;
                o_bin += nobs - i;
                i = nobs;
            }
            if (bins < 4096) {
                bin_e[bins] = e_bin;
                bin_o[bins] = o_bin;
                bins++;
            }
            e_bin = 0;
            o_bin = 0;
            start = k + 1;
        }
    }
    (void)start;
    /* Merge a last bin that is too small into the one before. */
    if (bins >= 2 && bin_e[bins - 1] < min_e) {
        bin_e[bins - 2] += bin_e[bins - 1];
        bin_o[bins - 2] += bin_o[bins - 1];
        bins--;
    }
    for (int j = 0; j < bins; j++)
        chi2 += (bin_o[j] - bin_e[j]) * (bin_o[j] - bin_e[j]) / bin_e[j];
    *df = bins - 1;
    return chi2;
}

/* One entry point, one size, one rate: N blocks made and freed. */
static void run(double rate, const char *rname, enum entry e, size_t size, size_t N)
{
    uint64_t b = size ? size : 1;   /* counted bytes: malloc(0) is 1 byte */
    want_size = size;
    want_kind = entry_kind(e);
    ncounts = 0;
    cap = N;
    counts = realloc(counts, N * sizeof *counts);
    if (mt_memprof_start(rate, 8, &tracker) != 0) {
        CHECK(0, "start at rate %s", rname);
        return;
    }
    for (size_t i = 0; i < N; i++)
        one_block(e, size);
    mt_memprof_stop();

    uint64_t total = 0;
    for (size_t i = 0; i < ncounts; i++)
        total += counts[i];
    double want = (double)N * (double)b * rate;
    double se = sqrt((double)N * (double)b * rate * (1 - rate));
    const char *what = entry_name[e];
    if (rate == 1.0) {
        int exact = ncounts == N;
        for (size_t i = 0; exact && i < ncounts; i++)
            exact = counts[i] == b;
        CHECK(exact && total == (uint64_t)want,
              "rate 1, %s(%zu) x %zu: every block sampled with %llu sample points "
              "(%zu sampled, %llu points)", what, size, N, (unsigned long long)b, ncounts,
              (unsigned long long)total);
        return;
    }
    double z = ((double)total - want) / se;
    CHECK(fabs(z) <= 5, "rate %s, %s(%zu) x %zu: %llu sample points, expected %.1f +- %.1f (%+.1f se)",
          rname, what, size, N, (unsigned long long)total, want, se, z);
    qsort(counts, ncounts, sizeof *counts, cmp_u64);
    int df;
    double chi2 = chi_square(counts, ncounts, N, b, rate, &df);
    if (df < 1) {
        CHECK(ncounts <= N, "rate %s, %s(%zu): %zu blocks sampled (too few for a spread test)",
              rname, what, size, ncounts);
        return;
    }
    CHECK(chi2 <= chi2_limit(df),
          "rate %s, %s(%zu) x %zu: per-block counts Binomial(%llu, %s): chi-square %.1f, %d df, limit %.1f",
          rname, what, size, N, (unsigned long long)b, rname, chi2, df, chi2_limit(df));
}

/* realloc of a block that is sampled (taken from the table of sampled
 * blocks: its free is reported, then the new size is a block of its own):
 * the new size's bytes are sampled on the countdown like any other's. The
 * blocks are made at rate 1 (all sampled), then reallocated to 1000 bytes
 * at rate 0.01: Binomial(1000, 0.01) sample points each, 10 on average
 * (not one each, nor none). */
static void test_realloc_sampled(void)
{
    enum { N = 20000, SIZE = 1000 };
    static void *blocks[N];
    const double rate = 0.01;
    n_tracked = n_freed = 0;
    mt_memprof_start(1.0, 8, &tracker);
    for (size_t i = 0; i < N; i++)
        blocks[i] = escape(malloc(8));
    mt_memprof_stop();
    int all = n_tracked == N;
    want_size = SIZE;
    want_kind = MT_ALLOC_REALLOC;
    ncounts = 0;
    cap = N;
    counts = realloc(counts, N * sizeof *counts);
    mt_memprof_start(rate, 8, &tracker);
    for (size_t i = 0; i < N; i++)
        blocks[i] = escape(realloc(blocks[i], SIZE));
    mt_memprof_stop();
    for (size_t i = 0; i < N; i++)
        free(blocks[i]);
    uint64_t total = 0;
    for (size_t i = 0; i < ncounts; i++)
        total += counts[i];
    double want = (double)N * SIZE * rate, se = sqrt((double)N * SIZE * rate * (1 - rate));
    double z = ((double)total - want) / se;
    CHECK(all && fabs(z) <= 5,
          "realloc of %d sampled blocks to %d bytes at rate 0.01: %llu sample points, expected %.0f +- %.0f (%+.1f se)",
          N, SIZE, (unsigned long long)total, want, se, z);
    qsort(counts, ncounts, sizeof *counts, cmp_u64);
    int df;
    double chi2 = chi_square(counts, ncounts, N, SIZE, rate, &df);
    CHECK(df >= 1 && chi2 <= chi2_limit(df),
          "realloc of sampled blocks: per-block counts Binomial(%d, 0.01): chi-square %.1f, %d df, limit %.1f",
          SIZE, chi2, df, df >= 1 ? chi2_limit(df) : 0);
}

/* The binomial draw itself (draw.h), many times per (n, p): mean within 5
 * standard errors and chi-square against the exact distribution. Covers
 * the walk over geometric gaps (n p < 16), the rejection sampler (n p >=
 * 16) and the symmetry for p > 1/2 with enough draws to see a bias of a
 * tenth of a sample. */
uint64_t mtr_binomial(uint64_t *state, uint64_t n, double p);

static void test_binomial(void)
{
    static const struct { uint64_t n; double p; } cases[] = {
        { 40, 0.3 }, { 60, 0.25 }, { 333, 0.1 }, { 1000, 0.5 }, { 5000, 0.9 },
        { 100000, 1e-3 }, { 3145735, 1.0 / 4096 }, { 1000000000, 1e-6 }, { 200, 0.999 },
    };
    enum { DRAWS = 400000 };
    uint64_t *draws = malloc(DRAWS * sizeof *draws);
    uint64_t state = 0x9e3779b97f4a7c15ULL;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint64_t n = cases[c].n;
        double p = cases[c].p, sum = 0;
        for (size_t i = 0; i < DRAWS; i++) {
            draws[i] = mtr_binomial(&state, n, p);
            sum += (double)draws[i];
        }
        double want = DRAWS * (double)n * p, se = sqrt(DRAWS * (double)n * p * (1 - p));
        double z = (sum - want) / se;
        CHECK(fabs(z) <= 5, "Binomial(%llu, %g) x %d: mean %.4f, expected %.4f (%+.1f se)",
              (unsigned long long)n, p, DRAWS, sum / DRAWS, (double)n * p, z);
        qsort(draws, DRAWS, sizeof *draws, cmp_u64);
        int df;
        double chi2 = chi_square(draws, DRAWS, DRAWS, n, p, &df);
        CHECK(df >= 1 && chi2 <= chi2_limit(df), "Binomial(%llu, %g) x %d: chi-square %.1f, %d df, limit %.1f",
              (unsigned long long)n, p, DRAWS, chi2, df, chi2_limit(df));
    }
    free(draws);
}

/* Blocks to make: enough for about `target` sampled blocks, within a budget
 * of allocations that depends on the size. */
static size_t blocks_for(double rate, size_t size, size_t target, size_t max_blocks)
{
    double b = size ? (double)size : 1;
    double psampled = -expm1(b * log1p(-rate));
    if (rate >= 1.0)
        psampled = 1;
    double n = target / psampled;
    if (n > (double)max_blocks)
        n = (double)max_blocks;
    return n < 100 ? 100 : (size_t)n;
}

static void test_rates(void)
{
    static const struct { double rate; const char *name; } rates[] = {
        { 1.0, "1" }, { 0.9, "0.9" }, { 0.5, "0.5" }, { 0.1, "0.1" }, { 1e-3, "1e-3" },
        { 1.0 / 4096, "1/4096" }, { 1.0 / 524288, "1/524288" },
    };
    static const size_t sizes[] = { 0, 1, 24, 1001 };
    const size_t huge = (3 << 20) + 7;
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
        double rate = rates[r].rate;
        const char *rn = rates[r].name;
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            run(rate, rn, E_MALLOC, sizes[s], blocks_for(rate, sizes[s], 8000, 3000000));
        run(rate, rn, E_MALLOC, huge, blocks_for(rate, huge, 1500, 1500));
        for (enum entry e = E_CALLOC; e <= E_NEW_ALIGNED; e++)
            run(rate, rn, e, 333, blocks_for(rate, 333, 4000, 1000000));
        run(rate, rn, E_CALLOC, huge, blocks_for(rate, huge, 300, 300));
        run(rate, rn, E_REALLOC, huge, blocks_for(rate, huge, 300, 300));
    }
}

/* ---------------------------------------------------------------------- */
/* Accounting                                                              */

static void test_accounting(void)
{
    long page = sysconf(_SC_PAGESIZE);

    /* malloc(0): 1 byte, so at rate 1 every call is sampled, 1 point each. */
    run(1.0, "1", E_MALLOC, 0, 1000);

    /* calloc(n, m) counts n*m bytes. */
    want_size = 7 * 300;
    want_kind = MT_ALLOC_CALLOC;
    ncounts = 0;
    cap = 16;
    mt_memprof_start(1.0, 8, &tracker);
    free(escape(calloc(7, 300)));
    mt_memprof_stop();
    CHECK(ncounts == 1 && counts[0] == 2100, "calloc(7, 300) counts 2100 bytes (%zu blocks, %llu points)",
          ncounts, ncounts ? (unsigned long long)counts[0] : 0ULL);

    /* pvalloc counts the page-rounded size, reported as the block's size. */
    want_size = (size_t)page;
    want_kind = MT_ALLOC_ALIGNED;
    ncounts = 0;
    mt_memprof_start(1.0, 8, &tracker);
    void *p = escape(pvalloc(10));
    free(p);
    void *q = escape(pvalloc(0));
    free(q);
    mt_memprof_stop();
    CHECK(ncounts == 2 && counts[0] == (uint64_t)page && counts[1] == (uint64_t)page,
          "pvalloc(10) and pvalloc(0) count one page, %ld bytes (%zu blocks, %llu points)", page,
          ncounts, ncounts ? (unsigned long long)counts[0] : 0ULL);
    want_size = 2 * (size_t)page;
    ncounts = 0;
    mt_memprof_start(1.0, 8, &tracker);
    free(escape(pvalloc((size_t)page + 1)));
    mt_memprof_stop();
    CHECK(ncounts == 1 && counts[0] == 2 * (uint64_t)page,
          "pvalloc(page + 1) counts two pages (%zu blocks, %llu points)", ncounts,
          ncounts ? (unsigned long long)counts[0] : 0ULL);

    /* Frees that end tracking: each of these calls the free callback once. */
    struct { const char *name; int which; } frees[] = {
        { "free_sized", 0 }, { "free_aligned_sized", 1 }, { "operator delete", 2 },
        { "realloc(p, 0)", 3 },
    };
    for (size_t i = 0; i < sizeof frees / sizeof frees[0]; i++) {
        n_tracked = n_freed = 0;
        mt_memprof_start(1.0, 8, &tracker);
        void *x;
        switch (frees[i].which) {
        case 0: x = escape(malloc(100)); free_sized(x, 100); break;
        case 1: x = escape(aligned_alloc(64, 128)); free_aligned_sized(x, 64, 128); break;
        case 2: x = escape(_Znwm(100)); _ZdlPv(x); break;
        default: x = escape(malloc(100)); x = realloc(x, 0); escape(x); break;
        }
        mt_memprof_stop();
        CHECK(n_tracked == 1 && n_freed == 1, "%s ends the tracking of its block (%llu tracked, %llu freed)",
              frees[i].name, (unsigned long long)n_tracked, (unsigned long long)n_freed);
    }
}

int main(void)
{
#ifdef __SANITIZE_THREAD__
    puts("the sampling statistics are single-threaded: checked in the plain stage");
    return 77;
#endif
    test_accounting();
    test_binomial();
    test_rates();
    test_realloc_sampled();
    free(counts);
    return failures ? 1 : 0;
}
