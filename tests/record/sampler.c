/*
 * sampler.c - unit test of the sampler API (mt_memprof_*), linked
 * with libmemtrace.a so the recorder replaces malloc in this binary:
 * start/stop rules, sample counts against the binomial expectation, one free
 * callback per tracked block, no sampling inside callbacks, stacks that
 * start at the caller of malloc, the sampled-block allocator honouring
 * calloc/realloc/alignment semantics, 16 threads passing blocks to
 * each other (the TSan stage runs this too), and the filter in front of the
 * table of sampled blocks with known answers (mt_memprof_free_marked,
 * mt_memprof_free_stats).
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <unistd.h>

#include "memtrace/record.h"

#ifdef __SANITIZE_THREAD__
/* Under TSan the allocator underneath the recorder is TSan's: let it answer
 * invalid requests with NULL/EINVAL, as glibc does, instead of aborting. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "allocator_may_return_null=1";
}
#endif

#include "../check.h"

/* Keep the compiler from eliding malloc/free pairs. */
static void *escape(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
    return p;
}

static uint64_t n_alloc, n_free, n_samples, bytes_sampled, bad, recursion;
static __thread int in_callback;
static uintptr_t site_lo, site_hi;
static uint64_t site_hits;

static void *on_alloc(void *ctx, const mt_allocation *a)
{
    (void)ctx;
    if (in_callback)
        __atomic_add_fetch(&recursion, 1, __ATOMIC_RELAXED);
    in_callback = 1;
    /* Allocations here must never be sampled (they would recurse). */
    if (__atomic_load_n(&n_alloc, __ATOMIC_RELAXED) % 64 == 0) {
        void *x = escape(malloc(1 << 20));
        free(x);
    }
    if (a->n_samples < 1 || a->callstack_length < 1 || !a->ptr)
        __atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
    if (a->callstack_length && a->callstack[0] >= site_lo && a->callstack[0] < site_hi)
        __atomic_add_fetch(&site_hits, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&n_alloc, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&n_samples, a->n_samples, __ATOMIC_RELAXED);
    __atomic_add_fetch(&bytes_sampled, a->size, __ATOMIC_RELAXED);
    in_callback = 0;
    return (void *)(uintptr_t)(a->size + 1);
}

static void on_free(void *ctx, void *token)
{
    (void)ctx;
    (void)token;
    __atomic_add_fetch(&n_free, 1, __ATOMIC_RELAXED);
}

static const mt_tracker tracker = { on_alloc, on_free, NULL };

static void reset(void)
{
    n_alloc = n_free = n_samples = bytes_sampled = bad = recursion = site_hits = 0;
}

/* The allocation site the stack check looks for. */
__attribute__((noinline)) static void *site(size_t n)
{
    void *p = malloc(n);
    __asm__ volatile("" ::: "memory");
    return p;
}

static int within(double got, double want, double sd, double k)
{
    return fabs(got - want) <= k * sd;
}

static void test_api(void)
{
    CHECK(mt_memprof_start(0.0, 0, &tracker) != 0, "start rejects rate 0");
    CHECK(mt_memprof_start(1.5, 0, &tracker) != 0, "start rejects rate > 1");
    CHECK(mt_memprof_start(NAN, 0, &tracker) != 0, "start rejects NaN");
    CHECK(mt_memprof_stop() != 0, "stop fails when not running");
    CHECK(mt_memprof_start(1e-3, 0, &tracker) == 0, "start");
    CHECK(mt_memprof_running(), "running after start");
    CHECK(mt_memprof_start(1e-3, 0, &tracker) != 0, "second start fails");
    CHECK(mt_memprof_stop() == 0, "stop");
    CHECK(!mt_memprof_running(), "not running after stop");
}

static void test_counts(void)
{
    const double rate = 1.0 / 4096;
    enum { N = 20000, SIZE = 1000 };
    static void *blocks[N];
    reset();
    site_lo = (uintptr_t)site;
    site_hi = (uintptr_t)site + 64;
    mt_memprof_start(rate, 0, &tracker);
    for (int i = 0; i < N; i++)
        blocks[i] = site(SIZE);
    for (int i = 0; i < N; i++)
        free(blocks[i]);
    mt_memprof_stop();
    double want = (double)N * SIZE * rate;
    CHECK(within((double)n_samples, want, sqrt(want), 5),
          "small blocks: %llu sample points, expected %.0f +- %.0f", (unsigned long long)n_samples,
          want, 5 * sqrt(want));
    CHECK(n_free == n_alloc && n_alloc > 0, "one free callback per tracked block (%llu/%llu)",
          (unsigned long long)n_free, (unsigned long long)n_alloc);
    CHECK(bad == 0, "every sample has n_samples >= 1, a stack and a pointer");
    CHECK(recursion == 0, "no sampling inside callbacks");
    CHECK(site_hits == n_alloc, "stacks start at the caller of malloc (%llu of %llu)",
          (unsigned long long)site_hits, (unsigned long long)n_alloc);

    /* Big blocks: each holds ~256 sample points. */
    reset();
    mt_memprof_start(rate, 0, &tracker);
    for (int i = 0; i < 50; i++) {
        char *p = escape(malloc(1 << 20));
        p[0] = p[(1 << 20) - 1] = 1;
        free(p);
    }
    mt_memprof_stop();
    want = 50.0 * (1 << 20) * rate;
    CHECK(within((double)n_samples, want, sqrt(want), 5),
          "big blocks: %llu sample points, expected %.0f", (unsigned long long)n_samples, want);
    CHECK(n_alloc >= 50 && n_alloc <= 52, "every 1 MiB block sampled at a 4 KiB interval (%llu)",
          (unsigned long long)n_alloc);

#ifndef __SANITIZE_THREAD__
    /* Huge request (binomial draw over 2^62 bytes) that fails: no crash, NULL. */
    mt_memprof_start(rate, 0, &tracker);
    volatile size_t hugesize = (size_t)1 << 62;
    void *huge = malloc(hugesize);
    CHECK(huge == NULL, "impossible request still fails with NULL");
    mt_memprof_stop();
#endif
}

static void test_semantics(void)
{
    reset();
    mt_memprof_start(1.0, 0, &tracker);   /* every allocation sampled */
    unsigned char *p = escape(malloc(1000));
    memset(p, 0xff, 1000);
    free(p);
    unsigned char *z = calloc(1000, 1);
    int zero = 1;
    for (int i = 0; i < 1000; i++)
        zero &= z[i] == 0;
    CHECK(zero, "calloc of a reused sampled slot is zeroed");
    volatile size_t big = (size_t)1 << 33;
    CHECK(calloc(big, big) == NULL, "calloc overflow gives NULL");
    for (int i = 0; i < 1000; i++)
        z[i] = (unsigned char)i;
    z = realloc(z, 5000);
    int same = z != NULL;
    for (int i = 0; same && i < 1000; i++)
        same = z[i] == (unsigned char)i;
    CHECK(same, "realloc of a sampled block keeps its bytes");
    CHECK(malloc_usable_size(z) >= 5000, "malloc_usable_size of a sampled block");
    /* ... answered by the allocator itself: the recorder leaves the symbol to
     * the object whose malloc it calls (no wrapper in between). */
    Dl_info usable_in, alloc_in;
    void *next_malloc = dlsym(RTLD_NEXT, "malloc");
    CHECK(next_malloc && dladdr((void *)malloc_usable_size, &usable_in) &&
              dladdr(next_malloc, &alloc_in) && usable_in.dli_fbase == alloc_in.dli_fbase,
          "malloc_usable_size is the allocator's own, not the recorder's");
    z = realloc(z, 10);
    CHECK(z && z[9] == 9, "realloc shrinking keeps its bytes");
    CHECK(realloc(z, 0) == NULL, "realloc(p, 0) frees");
    void *q = NULL;
    int ok = 1;
    static const size_t aligns[] = { 16, 32, 64, 256, 4096, 65536 };
    for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
        ok &= posix_memalign(&q, aligns[i], 100) == 0 && ((uintptr_t)q % aligns[i]) == 0;
        free(q);
        q = aligned_alloc(aligns[i], 3 * aligns[i]);
        ok &= q && ((uintptr_t)q % aligns[i]) == 0;
        free(q);
        q = memalign(aligns[i], 10000);
        ok &= q && ((uintptr_t)q % aligns[i]) == 0;
        free(q);
    }
    CHECK(ok, "posix_memalign/aligned_alloc/memalign alignments on sampled blocks");
    CHECK(posix_memalign(&q, 24, 100) == EINVAL, "posix_memalign rejects alignment 24");
    q = valloc(10);
    CHECK(q && (uintptr_t)q % 4096 == 0, "valloc is page aligned");
    free(q);
    q = pvalloc(10);
    CHECK(q && (uintptr_t)q % 4096 == 0 && malloc_usable_size(q) >= 4096, "pvalloc rounds to a page");
    free(q);
    q = malloc(0);
    CHECK(q != NULL, "malloc(0) sampled at rate 1");
    free(q);
    q = reallocarray(NULL, 10, 10);
    CHECK(q != NULL, "reallocarray");
    free(q);
    volatile size_t max = SIZE_MAX;
    CHECK(reallocarray(NULL, max, 2) == NULL, "reallocarray overflow");
    free(NULL);
    mt_memprof_stop();
    CHECK(n_free == n_alloc, "every sampled block freed once (%llu/%llu)",
          (unsigned long long)n_free, (unsigned long long)n_alloc);

    /* Blocks tracked before stop are forgotten. */
    reset();
    mt_memprof_start(1.0, 0, &tracker);
    p = escape(malloc(100));
    mt_memprof_stop();
    free(p);
    CHECK(n_alloc == 1 && n_free == 0, "no free callback after stop (%llu, %llu)",
          (unsigned long long)n_alloc, (unsigned long long)n_free);
}

/* 16 threads; each frees blocks made by its neighbour. */
enum { THREADS = 16, ROUNDS = 30000, SLOTS = 64 };
static void *shared[THREADS][SLOTS];
static pthread_mutex_t locks[THREADS];

static void *worker(void *arg)
{
    int me = (int)(intptr_t)arg, other = (me + 1) % THREADS;
    unsigned r = (unsigned)me * 2654435761u + 1;
    for (int i = 0; i < ROUNDS; i++) {
        r = r * 1103515245u + 12345u;
        size_t size = 16 + (r >> 8) % 2000;
        void *p = (r >> 4) & 1 ? malloc(size) : calloc(1, size);
        if ((r >> 5) % 7 == 0)
            p = realloc(p, size * 2);
        int slot = (int)((r >> 16) % SLOTS);
        int owner = (r >> 6) & 1 ? me : other;
        pthread_mutex_lock(&locks[owner]);
        void *old = shared[owner][slot];
        shared[owner][slot] = p;
        pthread_mutex_unlock(&locks[owner]);
        free(old);
    }
    return NULL;
}

static void test_threads(void)
{
    pthread_t th[THREADS];
    reset();
    for (int i = 0; i < THREADS; i++)
        pthread_mutex_init(&locks[i], NULL);
#ifdef __SANITIZE_THREAD__
    mt_memprof_start(1.0 / 65536, 0, &tracker);   /* TSan is slow per sample */
#else
    mt_memprof_start(1.0 / 2048, 0, &tracker);
#endif
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < THREADS; i++)
        for (int s = 0; s < SLOTS; s++)
            free(shared[i][s]);
    mt_memprof_stop();
    CHECK(n_alloc > 1000, "16 threads sampled (%llu blocks)", (unsigned long long)n_alloc);
    /* glibc's own per-thread allocations (TLS) may be sampled and outlive
     * the threads: allow a few. */
    CHECK(n_free <= n_alloc && n_alloc - n_free <= 2 * THREADS,
          "16 threads: tracked blocks freed (%llu/%llu)",
          (unsigned long long)n_free, (unsigned long long)n_alloc);
    CHECK(recursion == 0 && bad == 0, "16 threads: callbacks sane");
}

/* The filter with known answers: one block sampled (rate 1, then stopped),
 * blocks made after it in its 1 KiB granule (the filter's, sampled.h) are
 * not. Freeing a neighbour on another 64-byte line counts one marked free
 * and no table lookup (its line's bit turns it away); freeing the sampled
 * block counts one of each and is found; once it is gone its granule's bit
 * is clear: a later neighbour's free is not even marked. */
static void test_filter(void)
{
    enum { N = 64, DRAIN = 4096 };
    char *nb[N];
    static char *drain[DRAIN];
    reset();
    /* Blocks of this size freed earlier (by other threads too) are used up
     * first, so that the next ones are cut one after the other. */
    for (int i = 0; i < DRAIN; i++)
        drain[i] = escape(malloc(48));
    for (int i = 0; i < N / 2; i++)   /* neighbours before it and after it */
        nb[i] = escape(malloc(48));
    mt_memprof_start(1.0, 0, &tracker);
    char *a = escape(malloc(48));
    mt_memprof_stop();
    for (int i = N / 2; i < N; i++)
        nb[i] = escape(malloc(48));
    int b = -1, c = -1;
    for (int i = 0; i < N; i++) {
        int page = (uintptr_t)nb[i] >> 10 == (uintptr_t)a >> 10;
        int line = (uintptr_t)nb[i] >> 6 == (uintptr_t)a >> 6;
        if (page && !line && b < 0)
            b = i;
        else if (page && !line && c < 0)
            c = i;
    }
    CHECK(n_alloc == 1 && b >= 0 && c >= 0, "filter: one block sampled, two neighbours in its granule (%llu)",
          (unsigned long long)n_alloc);
    if (b < 0 || c < 0) {
        for (int i = 0; i < N; i++)
            free(nb[i]);
        for (int i = 0; i < DRAIN; i++)
            free(drain[i]);
        free(a);
        return;
    }
    uint64_t l0, f0, l1, f1, l2, f2, l3, f3;
    mt_memprof_free_stats(&l0, &f0);
    uint64_t m0 = mt_memprof_free_marked();
    free(nb[b]);
    nb[b] = NULL;
    mt_memprof_free_stats(&l1, &f1);
    uint64_t m1 = mt_memprof_free_marked();
    CHECK(m1 - m0 == 1 && l1 == l0, "filter: a neighbour on another line is marked, not looked up (marked +%llu, lookups +%llu)",
          (unsigned long long)(m1 - m0), (unsigned long long)(l1 - l0));
    free(a);
    mt_memprof_free_stats(&l2, &f2);
    uint64_t m2 = mt_memprof_free_marked();
    CHECK(m2 - m1 == 1 && l2 - l1 == 1 && f2 - f1 == 1,
          "filter: the sampled block is marked, looked up, found (+%llu, +%llu, +%llu)",
          (unsigned long long)(m2 - m1), (unsigned long long)(l2 - l1), (unsigned long long)(f2 - f1));
    free(nb[c]);
    nb[c] = NULL;
    mt_memprof_free_stats(&l3, &f3);
    uint64_t m3 = mt_memprof_free_marked();
    CHECK(m3 == m2 && l3 == l2, "filter: the granule's bit is clear once its one sampled block is freed (marked +%llu)",
          (unsigned long long)(m3 - m2));
    for (int i = 0; i < N; i++)
        free(nb[i]);
    for (int i = 0; i < DRAIN; i++)
        free(drain[i]);
}

int main(void)
{
    test_api();
    test_counts();
    test_semantics();
    test_threads();
    test_filter();
    return failures ? 1 : 0;
}
