/*
 * leaks_heap.c - a heap for bench/leaks.sh: MB megabytes in blocks of
 * SIZE bytes (default 64), chained into lists, one list in ten dropped
 * (lost), the others held by a global array; then exit, where the leak scan
 * runs. Prints "seconds=S cpu=C" for the allocation phase.
 *
 *   leaks_heap MB [SIZE]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LISTS 1000

void *heads[LISTS];

static double now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: leaks_heap MB [SIZE]\n");
        return 2;
    }
    size_t mb = strtoul(argv[1], NULL, 10), size = argc > 2 ? strtoul(argv[2], NULL, 10) : 64;
    if (size < sizeof(void *))
        size = sizeof(void *);
    size_t n = mb * 1024 * 1024 / size;
    double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    for (size_t i = 0; i < n; i++) {
        void **b = malloc(size);
        if (!b)
            return 1;
        size_t l = i % LISTS;
        *b = heads[l];
        heads[l] = b;
    }
    for (size_t l = 0; l < LISTS; l += 10)
        heads[l] = NULL;   /* lost */
    printf("seconds=%.3f cpu=%.3f\n", now(CLOCK_MONOTONIC) - t0, now(CLOCK_PROCESS_CPUTIME_ID) - c0);
    return 0;
}
