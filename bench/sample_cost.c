/*
 * sample_cost.c - what one sample costs the allocating thread, as a
 * distribution: each malloc is timed, and the ones the recorder sampled
 * are told apart exactly (the recorder's count of sampled blocks freed,
 * mt_memprof_free_stats, goes up when the block is freed right after).
 * A sample's cost is its malloc's time less the median unsampled malloc's.
 * Stacks are DEPTH_MIN..DEPTH_MAX frames deep at the malloc (cycling).
 * Built also as C++ (bench/sample_cost.sh): then the block is a
 * std::vector<char> made through operator new, inside a std::function.
 *
 * The stack is one function recursing (one return address repeated), or
 * with "distinct" (C only) a chain of 100 different functions, no two
 * neighbouring frames returning to the same address.
 *
 *   LD_PRELOAD=build/libmemtrace.so MEMTRACE=/tmp/s.ctf MEMTRACE_RATE=... \
 *       sample_cost CALLS DEPTH_MIN DEPTH_MAX [distinct]
 * Prints: "samples=N unsampled_median_ns=U median_ns=M p99_ns=P max_ns=X"
 * (M, P, X: the sampled calls' extra time over U).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __cplusplus
#include <functional>
#include <vector>
#endif

static void (*stats)(uint64_t *, uint64_t *);
static double *sampled_ns, *plain_ns;
static size_t nsampled, nplain;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint64_t found_so_far(void)
{
    uint64_t l, f;
    stats(&l, &f);
    return f;
}

/* The timed allocation, at the bottom of the stack. */
__attribute__((noinline)) static void one(size_t size)
{
    uint64_t before = found_so_far();
    double t0 = now_ns();
#ifdef __cplusplus
    std::vector<char> *v = new std::vector<char>(size);
    double t1 = now_ns();
    (*v)[0] = 1;
    delete v;
#else
    char *p = (char *)malloc(size);
    double t1 = now_ns();
    __asm__ volatile("" : : "r"(p) : "memory");   /* keeps the pair from being optimized out */
    if (p)
        p[0] = 1;
    free(p);
#endif
    uint64_t after = found_so_far();
    if (after > before)
        sampled_ns[nsampled++] = t1 - t0;
    else
        plain_ns[nplain++] = t1 - t0;
}

#ifdef __cplusplus
__attribute__((noinline)) static void down(int level, size_t size)
{
    std::function<void(int)> f = [&](int l) {
        if (l <= 1)
            one(size);
        else
            down(l - 1, size);
    };
    f(level);   /* two frames a level: the lambda and this */
    __asm__ volatile("" : : : "memory");
}
#else
__attribute__((noinline)) static void down(int level, size_t size)
{
    if (level <= 1)
        one(size);
    else
        down(level - 1, size);
    __asm__ volatile("" : : : "memory");
}

/* "distinct": link_DU calls the next of the 100 through the table. */
typedef void (*link_fn)(int, size_t);
static link_fn links[100];
#define LINK(d, u)                                                                \
    __attribute__((noinline)) static void link_##d##u(int level, size_t size)     \
    {                                                                             \
        if (level <= 1)                                                           \
            one(size);                                                            \
        else                                                                      \
            links[(d * 10 + u + 1) % 100](level - 1, size);                       \
        __asm__ volatile("" : : : "memory");                                      \
    }
#define LINKS(d) LINK(d, 0) LINK(d, 1) LINK(d, 2) LINK(d, 3) LINK(d, 4) \
                 LINK(d, 5) LINK(d, 6) LINK(d, 7) LINK(d, 8) LINK(d, 9)
LINKS(0) LINKS(1) LINKS(2) LINKS(3) LINKS(4) LINKS(5) LINKS(6) LINKS(7) LINKS(8) LINKS(9)
#define SET(d, u) links[d * 10 + u] = link_##d##u;
#define SETS(d) SET(d, 0) SET(d, 1) SET(d, 2) SET(d, 3) SET(d, 4) \
                SET(d, 5) SET(d, 6) SET(d, 7) SET(d, 8) SET(d, 9)
#endif

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double at(const double *v, size_t n, double q)
{
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

int main(int argc, char **argv)
{
    long calls = argc > 1 ? atol(argv[1]) : 200000;
    int lo = argc > 2 ? atoi(argv[2]) : 20, hi = argc > 3 ? atoi(argv[3]) : 100;
    int distinct = 0;
#ifndef __cplusplus
    distinct = argc > 4 && strcmp(argv[4], "distinct") == 0;
    SETS(0) SETS(1) SETS(2) SETS(3) SETS(4) SETS(5) SETS(6) SETS(7) SETS(8) SETS(9)
#endif
    if (calls <= 0 || lo < 1 || hi < lo) {
        fprintf(stderr, "usage: sample_cost CALLS DEPTH_MIN DEPTH_MAX [distinct]\n");
        return 2;
    }
    stats = (void (*)(uint64_t *, uint64_t *))dlsym(RTLD_DEFAULT, "mt_memprof_free_stats");
    if (!stats) {
        fprintf(stderr, "sample_cost: the recorder is not preloaded (LD_PRELOAD=libmemtrace.so)\n");
        return 1;
    }
    sampled_ns = (double *)calloc((size_t)calls, sizeof *sampled_ns);
    plain_ns = (double *)calloc((size_t)calls, sizeof *plain_ns);
    if (!sampled_ns || !plain_ns)
        return 1;
#ifdef __cplusplus
    int frames_per_level = 2;
#else
    int frames_per_level = 1;
#endif
    for (long i = 0; i < calls; i++) {
        int depth = lo + (int)(i % (hi - lo + 1));
#ifndef __cplusplus
        if (distinct) {
            links[0](depth, 64);
            continue;
        }
#endif
        down((depth + frames_per_level - 1) / frames_per_level, 64);
    }
    if (!nsampled || !nplain) {
        fprintf(stderr, "sample_cost: no %s calls (set MEMTRACE_RATE)\n", nsampled ? "unsampled" : "sampled");
        return 1;
    }
    qsort(sampled_ns, nsampled, sizeof *sampled_ns, cmp);
    qsort(plain_ns, nplain, sizeof *plain_ns, cmp);
    double base = at(plain_ns, nplain, 0.5);
    printf("samples=%zu unsampled_median_ns=%.0f median_ns=%.0f p99_ns=%.0f max_ns=%.0f\n", nsampled,
           base, at(sampled_ns, nsampled, 0.5) - base, at(sampled_ns, nsampled, 0.99) - base,
           sampled_ns[nsampled - 1] - base);
    return 0;
}
