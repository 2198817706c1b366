/*
 * diffsites.c - a deterministic program with 30 allocation sites of equal
 * size, for the tests of 'memtrace diff' and 'memtrace check'. Each site
 * allocates SITE_BYTES in blocks of 48..303 bytes and keeps a quarter of
 * them live until exit. "diffsites K" makes site K allocate twice as much
 * (and keep twice as much). Prints "TRUTH site_NN ALLOCATED LIVE" per site.
 */
#include <stdio.h>
#include <stdlib.h>

#define SITE_BYTES (2u << 20)
#define NOINLINE __attribute__((noinline))

static void *keep(void *p) { __asm__ volatile("" : : "r"(p) : "memory"); return p; }

static void **kept;
static size_t n_kept, cap_kept;

static void hold(void *p)
{
    if (n_kept == cap_kept) {
        cap_kept = cap_kept ? cap_kept * 2 : 4096;
        kept = realloc(kept, cap_kept * sizeof *kept);
        if (!kept)
            exit(1);
    }
    kept[n_kept++] = p;
}

/* Allocates `bytes` in blocks; every fourth block stays live. Returns the
 * bytes left live. The malloc itself is in the caller (the site). */
#define SITE(NAME)                                                          \
    NOINLINE static unsigned long NAME(unsigned long bytes, unsigned long *live) \
    {                                                                       \
        unsigned long done = 0;                                             \
        for (unsigned i = 0; done < bytes; i++) {                           \
            size_t s = 48 + (i * 7919u) % 256;                              \
            void *p = keep(malloc(s));                                      \
            done += s;                                                      \
            if (i % 4 == 0) { hold(p); *live += s; } else free(p);          \
        }                                                                   \
        return done;                                                        \
    }
SITE(site_00) SITE(site_01) SITE(site_02) SITE(site_03) SITE(site_04)
SITE(site_05) SITE(site_06) SITE(site_07) SITE(site_08) SITE(site_09)
SITE(site_10) SITE(site_11) SITE(site_12) SITE(site_13) SITE(site_14)
SITE(site_15) SITE(site_16) SITE(site_17) SITE(site_18) SITE(site_19)
SITE(site_20) SITE(site_21) SITE(site_22) SITE(site_23) SITE(site_24)
SITE(site_25) SITE(site_26) SITE(site_27) SITE(site_28) SITE(site_29)

typedef unsigned long (*site_fn)(unsigned long, unsigned long *);
static const site_fn sites[] = {
    site_00, site_01, site_02, site_03, site_04, site_05, site_06, site_07, site_08, site_09,
    site_10, site_11, site_12, site_13, site_14, site_15, site_16, site_17, site_18, site_19,
    site_20, site_21, site_22, site_23, site_24, site_25, site_26, site_27, site_28, site_29,
};

int main(int argc, char **argv)
{
    int doubled = argc > 1 ? atoi(argv[1]) : -1;
    for (int k = 0; k < 30; k++) {
        unsigned long live = 0;
        unsigned long a = sites[k](k == doubled ? 2ul * SITE_BYTES : SITE_BYTES, &live);
        printf("TRUTH site_%02d %lu %lu\n", k, a, live);
    }
    return 0;
}
