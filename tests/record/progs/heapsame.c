/*
 * heapsame.c - what a program sees of its heap while a recording runs
 * (tests/record/heapsame.sh). It allocates 3000 blocks from three call
 * sites and waits until the recorder's writer has written them out (point
 * A), then keeps 3000 more from 64 call sites the trace has not named yet,
 * frees 3000 others, and waits for the writer again (point B). It prints
 * the blocks it gained from A to B as the allocator counts them (the
 * counting allocator preloaded behind it, heapcount.so), which is 0 (it
 * kept as many as it freed) unless someone else allocated meanwhile, and
 * the usable sizes of aligned blocks, which depend on where the heap's free
 * space lies. The blocks in use at B and glibc's mallinfo2 figures go to
 * stderr.
 *
 * Waiting for the writer: $HEAPSAME_GROW names a trace that must have grown
 * by 20000 bytes since the last point (start: since main), or
 * $HEAPSAME_PIECES names a rotating trace's stem whose next piece must
 * exist (A: STEM.part0002; B: the piece after the last one at A). The
 * writer writes within its flush interval; the bound is 10 minutes.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define N 3000

static void *first[N], *second[N], *churn[N];
static const char *grow, *stem;
static long grown_from;
static unsigned next_piece = 2;

static long file_size(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static long piece_size(unsigned k)
{
    char p[4096];
    snprintf(p, sizeof p, "%s.part%04u", stem, k);
    return file_size(p);
}

static int writer_done(void)
{
    if (grow && file_size(grow) < grown_from + 20000)
        return 0;
    if (stem && piece_size(next_piece) <= 0)
        return 0;
    return 1;
}

/* Waits for the writer (see above), then moves the marks on. */
static void wait_writer(const char *point)
{
    for (int t = 0; !writer_done(); t++) {
        if (t == 60000) {
            fprintf(stderr, "heapsame: the trace did not grow within 10 minutes (point %s)\n", point);
            exit(2);
        }
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    if (grow)
        grown_from = file_size(grow);
    if (stem)
        while (piece_size(next_piece) > 0)
            next_piece++;
}

static size_t size_of(int i) { return 16 + (size_t)(i * 37 % 4000); }

__attribute__((noinline)) static void *site_a(size_t n) { return malloc(n); }
__attribute__((noinline)) static void *site_b(size_t n) { return calloc(1, n); }
__attribute__((noinline)) static void *site_c(size_t n) { return realloc(malloc(8), n); }

/* 64 more call sites, each a function of its own. */
#define SITE(k) \
    __attribute__((noinline)) static void *site_##k(size_t n) { return malloc(n + k); }
#define SITES8(k) SITE(k##0) SITE(k##1) SITE(k##2) SITE(k##3) SITE(k##4) SITE(k##5) SITE(k##6) SITE(k##7)
SITES8(1) SITES8(2) SITES8(3) SITES8(4) SITES8(5) SITES8(6) SITES8(7) SITES8(8)
#define NAME8(k) site_##k##0, site_##k##1, site_##k##2, site_##k##3, site_##k##4, site_##k##5, \
    site_##k##6, site_##k##7
static void *(*const sites[64])(size_t) = { NAME8(1), NAME8(2), NAME8(3), NAME8(4),
                                            NAME8(5), NAME8(6), NAME8(7), NAME8(8) };

int main(void)
{
    long (*live)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "heapcount_live");
    if (!live) {
        fprintf(stderr, "heapsame: preload heapcount.so behind it\n");
        return 2;
    }
    grow = getenv("HEAPSAME_GROW");
    stem = getenv("HEAPSAME_PIECES");
    grown_from = grow ? file_size(grow) : 0;
    if (grown_from < 0)
        grown_from = 0;
    for (int i = 0; i < N; i++) {
        first[i] = i % 3 == 0 ? site_a(size_of(i)) : i % 3 == 1 ? site_b(size_of(i)) : site_c(size_of(i));
        churn[i] = site_a(size_of(i + 1));
        memset(first[i], 1, size_of(i));
    }
    wait_writer("A");
    long at_a = live();
    for (int i = 0; i < N; i++) {
        second[i] = sites[i % 64](size_of(i + 7));
        memset(second[i], 2, size_of(i + 7));
        free(churn[i]);
    }
    wait_writer("B");
    long at_b = live();
    printf("blocks gained from A to B: %ld\n", at_b - at_a);
    static const size_t aligns[] = { 16, 64, 256, 4096, 65536 };
    for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
        void *p = memalign(aligns[i], 100);
        printf("memalign %zu, 100: usable %zu\n", aligns[i], malloc_usable_size(p));
        free(p);
    }
    struct mallinfo2 mi = mallinfo2();
    fprintf(stderr, "blocks in use at B: %ld; bytes in use %zu, mapped blocks %zu\n", at_b,
            mi.uordblks, mi.hblks);
    for (int i = 0; i < N; i++) {
        free(first[i]);
        free(second[i]);
    }
    return 0;
}
