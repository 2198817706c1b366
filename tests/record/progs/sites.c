/*
 * sites.c - allocation sites with known totals, for the accuracy test.
 * Prints one line per site: "TRUTH <site> <bytes allocated> <bytes live at exit>"
 * (realloc counts as free + allocation of the new size; calloc counts n*m).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
static void *keep(void *p) { __asm__ volatile("" : : "r"(p) : "memory"); return p; }

static void **live_small, **live_large;

NOINLINE void site_small_freed(unsigned long *alloc)
{
    for (int i = 0; i < 200000; i++) {
        size_t s = 16 + (size_t)(i * 7919) % 240;
        void *p = keep(malloc(s));
        *alloc += s;
        free(p);
    }
}

NOINLINE void site_small_live(unsigned long *alloc, unsigned long *live)
{
    live_small = malloc(50000 * sizeof *live_small);   /* counted too */
    *alloc += 50000 * sizeof *live_small;
    *live += 50000 * sizeof *live_small;
    for (int i = 0; i < 50000; i++) {
        size_t s = 32 + (size_t)(i * 31) % 200;
        live_small[i] = keep(malloc(s));
        *alloc += s;
        *live += s;
    }
}

NOINLINE void site_large(unsigned long *alloc, unsigned long *live)
{
    live_large = malloc(40 * sizeof *live_large);
    *alloc += 40 * sizeof *live_large;
    *live += 40 * sizeof *live_large;
    for (int i = 0; i < 40; i++) {
        size_t s = (size_t)(256 + 64 * i) << 10;
        char *p = keep(malloc(s));
        p[0] = 1;
        *alloc += s;
        if (i % 2) {
            free(p);
            live_large[i] = NULL;
        } else {
            live_large[i] = p;
            *live += s;
        }
    }
}

NOINLINE void site_calloc(unsigned long *alloc)
{
    for (int i = 0; i < 20000; i++) {
        size_t n = 1 + (size_t)i % 50, m = 24;
        void *p = keep(calloc(n, m));
        *alloc += n * m;
        free(p);
    }
}

NOINLINE void site_realloc(unsigned long *alloc, unsigned long *live)
{
    for (int k = 0; k < 300; k++) {
        size_t s = 64;
        char *p = keep(malloc(s));
        *alloc += s;
        for (int j = 0; j < 40; j++) {
            s += 512;
            p = keep(realloc(p, s));
            *alloc += s;
        }
        if (k % 3 == 0)
            *live += s;     /* kept */
        else
            free(p);
    }
}

int main(void)
{
    unsigned long a1 = 0, a2 = 0, l2 = 0, a3 = 0, l3 = 0, a4 = 0, a5 = 0, l5 = 0;
    site_small_freed(&a1);
    site_small_live(&a2, &l2);
    site_large(&a3, &l3);
    site_calloc(&a4);
    site_realloc(&a5, &l5);
    printf("TRUTH site_small_freed %lu 0\n", a1);
    printf("TRUTH site_small_live %lu %lu\n", a2, l2);
    printf("TRUTH site_large %lu %lu\n", a3, l3);
    printf("TRUTH site_calloc %lu 0\n", a4);
    printf("TRUTH site_realloc %lu %lu\n", a5, l5);
    return 0;
}
