/*
 * rawnames.c - the program of the tests of names given to a trace never
 * symbolized (tests/present/names.sh, tests/python/names.sh): they copy
 * it, build it and record it under bare LD_PRELOAD, then rebuild it with
 * -DOTHER at the same path (another build-id) to see its frames stay raw.
 * Allocates from leaky (kept) and churn (freed at once); argv[1]: sleep
 * that many ms before exiting (for a recording killed meanwhile). names.sh
 * checks that leaky is named with its line, 14.
 */
#include <stdlib.h>
#include <unistd.h>
static void *keep[20000];
#ifndef OTHER
__attribute__((noinline)) void *leaky(size_t n) { return malloc(n); }
__attribute__((noinline)) void churn(void)
{
    for (int i = 0; i < 50000; i++) {
        char *volatile p = malloc(100 + i % 1000);
        p[0] = 1;
        free(p);
    }
}
#else
/* another build at the same path: other functions at other addresses */
__attribute__((noinline)) void *other_alloc(size_t n) { return calloc(1, n + 1); }
__attribute__((noinline)) void other_churn(void) { free(other_alloc(10)); }
#define leaky other_alloc
#define churn other_churn
#endif
int main(int argc, char **argv)
{
    for (int i = 0; i < 20000; i++)
        keep[i] = leaky(1000);
    churn();
    if (argc > 1)
        usleep(atoi(argv[1]) * 1000);   /* for the killed run */
    return keep[5] == 0;
}
