/*
 * ownheap.c - unit test of the recorder's own heap (lib/record/ownheap.c):
 * known answers for alignment, sizes, reuse of freed blocks and big blocks
 * (a mapping of their own, grown by mremap with their content kept); a
 * block freed by another thread reused; fork while threads allocate and
 * the writer thread names their samples (the heap's lock held across
 * fork: every child allocates and exits, none hangs); and many recordings
 * started and stopped leave the recorder's mapped memory where it was.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "memtrace/record.h"

#include "../../lib/record/own.h"
#include "../../lib/record/ownheap.h"
#include "../check.h"

static int filled(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

static void known_answers(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    static const size_t sizes[] = {0, 1, 15, 16, 17, 48, 100, 4000, 65520, 65521, 1 << 20};
    int aligned = 1, kept = 1;
    void *p[sizeof sizes / sizeof *sizes];
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        p[i] = mtr_heap_alloc(sizes[i]);
        aligned &= p[i] && (uintptr_t)p[i] % 16 == 0;
        if (p[i])
            memset(p[i], (int)(i + 1), sizes[i]);
    }
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        kept &= p[i] && filled(p[i], sizes[i], (unsigned char)(i + 1));
    CHECK(aligned, "every block 16-byte aligned (0 B .. 1 MiB)");
    CHECK(kept, "blocks of every class hold their bytes (none overlaps another)");
    /* 65520 B + the 16-byte header is the largest class; one more is a mapping of its own */
    CHECK((uintptr_t)p[9] % page == 16, "65521 B: a mapping of its own (payload at page + 16)");
    CHECK((uintptr_t)p[10] % page == 16, "1 MiB: a mapping of its own");
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        mtr_heap_free(p[i]);

    /* Reuse: a freed block is the next one of its class. */
    void *a = mtr_heap_alloc(100);
    mtr_heap_free(a);
    void *b = mtr_heap_alloc(90);   /* 90 + 16 and 100 + 16: both the 128-byte class */
    CHECK(a == b, "a freed block is reused by the next allocation of its class");
    void *c = mtr_heap_alloc(100);
    CHECK(c != b, "two live blocks are distinct");
    /* Within its class, realloc keeps the block in place. */
    CHECK(mtr_heap_realloc(b, 112) == b, "realloc within the class: in place");
    memset(b, 0xab, 112);
    mtr_heap_free(b);
    unsigned char *z = mtr_heap_calloc(4, 28);
    CHECK(z == b && filled(z, 112, 0), "calloc of a reused (dirty) block: zeroed");
    mtr_heap_free(z);
    mtr_heap_free(c);

    /* Growth: small to big to bigger (mremap), content kept; back to small. */
    unsigned char *g = mtr_heap_alloc(1000);
    for (size_t i = 0; i < 1000; i++)
        g[i] = (unsigned char)(i * 7);
    g = mtr_heap_realloc(g, 200000);
    int ok = g && (uintptr_t)g % page == 16;
    for (size_t i = 0; ok && i < 1000; i++)
        ok = g[i] == (unsigned char)(i * 7);
    CHECK(ok, "realloc 1000 B -> 200 KB: a mapping of its own, the first 1000 bytes kept");
    for (size_t i = 0; g && i < 200000; i++)
        g[i] = (unsigned char)(i * 13);
    g = mtr_heap_realloc(g, 8 << 20);
    ok = g && (uintptr_t)g % page == 16;
    for (size_t i = 0; ok && i < 200000; i++)
        ok = g[i] == (unsigned char)(i * 13);
    CHECK(ok, "realloc 200 KB -> 8 MiB (mremap): the 200 KB kept");
    if (g)
        memset(g + 200000, 0x5a, (8 << 20) - 200000);
    g = mtr_heap_realloc(g, 100);
    ok = g && (uintptr_t)g % 16 == 0;
    for (size_t i = 0; ok && i < 100; i++)
        ok = g[i] == (unsigned char)(i * 13);
    CHECK(ok, "realloc 8 MiB -> 100 B: a small block, the 100 bytes kept");
    mtr_heap_free(g);

    CHECK(mtr_heap_alloc(SIZE_MAX) == NULL && mtr_heap_calloc(SIZE_MAX / 4, 4) == NULL &&
              mtr_heap_calloc(3, SIZE_MAX / 2) == NULL,
          "sizes that overflow: NULL");
    char *s = mtr_heap_strdup("memtrace");
    CHECK(s && strcmp(s, "memtrace") == 0, "strdup");
    mtr_heap_free(s);
}

/* Blocks allocated here and freed by another thread. */
enum { N = 1000 };
static void *blocks[N];
static void *free_them(void *arg)
{
    (void)arg;
    for (int i = 0; i < N; i++)
        mtr_heap_free(blocks[i]);
    return NULL;
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

static void other_thread(void)
{
    for (int i = 0; i < N; i++)
        blocks[i] = mtr_heap_alloc(200);
    void *sorted[N];
    memcpy(sorted, blocks, sizeof sorted);
    qsort(sorted, N, sizeof *sorted, cmp_ptr);
    pthread_t t;
    pthread_create(&t, NULL, free_them, NULL);
    pthread_join(t, NULL);
    int reused = 0;
    void *again[N];
    for (int i = 0; i < N; i++) {
        again[i] = mtr_heap_alloc(200);
        reused += bsearch(&again[i], sorted, N, sizeof *sorted, cmp_ptr) != NULL;
    }
    CHECK(reused == N, "blocks freed by another thread are reused (%d of %d)", reused, N);
    for (int i = 0; i < N; i++)
        mtr_heap_free(again[i]);
}

/* Threads that allocate (sampled: the writer names and tables them) and
 * use the heap directly, while the main thread forks. */
static int stop;
static void *churn(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        size_t n = (size_t)(rand_r(&seed) % 5000);
        void *m = malloc(n + 1);
        void *h = mtr_heap_alloc(n);
        if (h)
            memset(h, 1, n);
        mtr_heap_free(h);
        free(m);
    }
    return NULL;
}

static void forks(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/ownheap-fork.ctf", dir);
    CHECK(memtrace_start_tracing(path, 0.01, NULL) == 0, "recording started for the forks");
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 1));
    enum { FORKS = 200 };
    int clean = 0, hung = 0;
    for (int k = 0; k < FORKS && !hung; k++) {
        pid_t pid = fork();
        if (pid == 0) {
            void *h[64];
            for (int i = 0; i < 64; i++)
                h[i] = mtr_heap_alloc((size_t)i * 1500);
            for (int i = 0; i < 64; i++)
                mtr_heap_free(h[i]);
            free(malloc(100));
            _exit(0);
        }
        /* The hang guard: far above the child's work (microseconds). */
        int st = 0;
        struct timespec nap = {0, 1000000};
        long waited = 0;
        while (waitpid(pid, &st, WNOHANG) == 0) {
            if (++waited > 120000) {   /* 120 s of 1 ms naps */
                kill(pid, SIGKILL);
                waitpid(pid, &st, 0);
                hung = 1;
                break;
            }
            nanosleep(&nap, NULL);
        }
        clean += !hung && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    memtrace_stop_tracing();
    CHECK(clean == FORKS && !hung,
          "%d forks while 3 threads allocate under the recorder: every child allocates and "
          "exits (%d clean, %s)", FORKS, clean, hung ? "one hung" : "none hung");
}

/* Many recordings: the recorder's mapped memory does not grow with them. */
static void cycles(const char *dir)
{
    char path[4096];
    long long mapped[60];
    int bad = 0;
    for (int k = 0; k < 60; k++) {
        snprintf(path, sizeof path, "%s/ownheap-cycle.ctf", dir);
        bad += memtrace_start_tracing(path, 1, NULL) != 0;
        for (int i = 0; i < 200; i++) {
            void *m = malloc((size_t)(i * 37 % 3000) + 1);
            __asm__ volatile("" : : "r"(m) : "memory");
            free(m);
        }
        bad += memtrace_stop_tracing() != 0;
        mtr_own_resident(&mapped[k]);
    }
    CHECK(bad == 0, "60 recordings started and stopped");
    /* (the first ones may grow tables to their size: under TSan up to the 23rd) */
    CHECK(mapped[59] <= mapped[29],
          "the recorder's own mapped memory does not grow across the last 30 recordings "
          "(%lld bytes after 10, %lld after 30, %lld after 60)", mapped[9], mapped[29], mapped[59]);
}

int main(void)
{
    const char *dir = getenv("MT_TMP");
    if (!dir)
        dir = "/tmp";
    known_answers();
    other_thread();
    forks(dir);
    cycles(dir);
    return failures ? 1 : 0;
}
