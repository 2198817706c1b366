/*
 * rotator.c - a deterministic long run for the rotation tests:
 *   rotator L S W C N SLEEP_US
 * leak_early() allocates L blocks of S bytes and keeps them; then N times
 * churn() allocates a block of C bytes into a window of the last W (the
 * oldest is freed), sleeping SLEEP_US between them. Halfway (after N/2),
 * free_half() frees every other early block. Nothing is freed at exit:
 * the end holds L - L/2 early blocks and the W last churned ones.
 * Allocated in all: L blocks of S bytes and N of C; live at the end:
 * (L - L/2) * S + min(W, N) * C.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void **early, **window;

__attribute__((noinline)) static void leak_early(long l, size_t s)
{
    for (long i = 0; i < l; i++)
        early[i] = malloc(s);
}

__attribute__((noinline)) static void free_half(long l)
{
    for (long i = 0; i < l; i += 2) {
        free(early[i]);
        early[i] = NULL;
    }
}

__attribute__((noinline)) static void churn(long i, long w, size_t c)
{
    free(window[i % w]);
    window[i % w] = malloc(c);
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: rotator L S W C N SLEEP_US\n");
        return 2;
    }
    long l = atol(argv[1]), w = atol(argv[3]), n = atol(argv[5]), us = atol(argv[6]);
    size_t s = (size_t)atol(argv[2]), c = (size_t)atol(argv[4]);
    early = calloc((size_t)l + 1, sizeof *early);
    window = calloc((size_t)w + 1, sizeof *window);
    leak_early(l, s);
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    for (long i = 0; i < n; i++) {
        if (i == n / 2)
            free_half(l);
        churn(i, w, c);
        if (us)
            nanosleep(&ts, NULL);
    }
    return 0;
}
