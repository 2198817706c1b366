/*
 * cfilib.c - a library cfiprog dlopens and dlcloses (tests/record/cfi.sh):
 * built twice, the second time with -DCFILIB_RBP (its allocating function
 * keeps a VLA, so its CFA is RBP-based where the first one's is RSP-based).
 */
#include <stdlib.h>
#include <string.h>

static volatile long sink;

__attribute__((noipa)) static void cfilib_leaf(size_t n)
{
#ifdef CFILIB_RBP
    char v[n % 64 + 8];
    memset(v, 3, sizeof v);
    sink += v[n % 3];
#endif
    char *p = malloc(n);
    if (p)
        p[0] = 1;
    sink += (long)(p != NULL);
    free(p);
}

void cfilib_work(long n)
{
    for (long i = 0; i < n; i++)
        cfilib_leaf(200 + (size_t)(i % 64));
    sink++;
}
