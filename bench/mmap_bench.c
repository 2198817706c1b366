/*
 * mmap_bench.c - a program that does nothing but map and unmap anonymous
 * memory: ITERS times, map 64 KiB..1 MiB, write one byte per page, unmap
 * the first half, then the rest (the recorder's mmap path at its worst:
 * two munmap calls per mapping, each searching the table of sampled
 * points). Prints "seconds=S cpu=C" for the loop alone.
 *
 *   mmap_bench [ITERS]      (default 200000; bench/mmap.sh uses 20000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 200000;
    unsigned x = 12345;
    double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    for (long i = 0; i < iters; i++) {
        x = x * 1103515245u + 12345u;
        size_t pages = 16 + (x >> 16) % 241;   /* 64 KiB .. 1 MiB */
        size_t len = pages * 4096;
        char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            perror("mmap");
            return 1;
        }
        for (size_t k = 0; k < len; k += 4096)
            p[k] = 1;
        size_t half = (pages / 2) * 4096;
        munmap(p, half);
        munmap(p + half, len - half);
    }
    printf("seconds=%.3f cpu=%.3f\n", now(CLOCK_MONOTONIC) - w0,
           now(CLOCK_PROCESS_CPUTIME_ID) - c0);
    return 0;
}
