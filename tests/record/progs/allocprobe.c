/*
 * allocprobe.c - prints what a program can observe of its allocator, so
 * that a run under the recorder can be compared line for line with a run
 * without it (tests/record/allocators.sh): usable sizes, alignment, realloc
 * in place, which allocator owns the blocks (glibc's heap grows or not,
 * jemalloc's mallctl, tcmalloc's and mimalloc's own introspection).
 * Nothing printed depends on addresses.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_HELD 2000

static void *held[N_HELD];

static int aligned_to(const void *p, size_t a)
{
    return ((uintptr_t)p & (a - 1)) == 0;
}

int main(void)
{
    static const size_t sizes[] = { 0, 1, 8, 9, 24, 25, 100, 1000, 4000, 4097, 20000,
                                    100000, 200000, 1 << 20, 5 << 20 };
    size_t i;

    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        void *p = malloc(sizes[i]);
        size_t u = malloc_usable_size(p);
        /* realloc within the usable size stays in place */
        uintptr_t before = (uintptr_t)p;
        void *q = realloc(p, u ? u : 1);
        int same = (uintptr_t)q == before;
        printf("malloc %zu: usable %zu, 16-aligned %d, realloc to usable in place %d\n", sizes[i], u,
               aligned_to(p, 16), same);
        free(q);
        void *c = calloc(sizes[i] + 1, 3);
        int zero = 1;
        for (size_t k = 0; k < (sizes[i] + 1) * 3; k++)
            if (((unsigned char *)c)[k]) {
                zero = 0;
                break;
            }
        printf("calloc %zu x 3: usable %zu, zeroed %d\n", sizes[i] + 1, malloc_usable_size(c), zero);
        free(c);
    }
    static const size_t aligns[] = { 16, 32, 64, 256, 4096, 65536 };
    for (i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
        void *p = memalign(aligns[i], 100);
        void *q = aligned_alloc(aligns[i], aligns[i] * 2);
        void *r = NULL;
        int rc = posix_memalign(&r, aligns[i], 3000);
        /* (mimalloc's memalign reuses a free block that happens to be
         * aligned, and glibc's keeps a remainder too small to split with
         * the block: an aligned block's usable size depends on where the
         * heap's free space lies, which any library's allocations at start
         * move; what is the allocator's own is the bound) */
        printf("align %zu: memalign %d usable >= 100 %d, aligned_alloc %d usable >= %zu %d, "
               "posix_memalign %d/%d usable >= 3000 %d\n",
               aligns[i], aligned_to(p, aligns[i]), malloc_usable_size(p) >= 100, aligned_to(q, aligns[i]),
               aligns[i] * 2, malloc_usable_size(q) >= aligns[i] * 2, rc, aligned_to(r, aligns[i]),
               malloc_usable_size(r) >= 3000);
        free(p);
        free(q);
        free(r);
    }
    void *v = valloc(5000);
    printf("valloc 5000: page-aligned %d, usable >= 5000 %d\n", aligned_to(v, (size_t)getpagesize()),
           malloc_usable_size(v) >= 5000);
    free(v);

    /* Whose heap: glibc's grows only when glibc allocates. */
    struct mallinfo2 before = mallinfo2();
    for (i = 0; i < N_HELD; i++) {
        held[i] = malloc(10000);
        memset(held[i], 1, 10000);
    }
    struct mallinfo2 after = mallinfo2();
    printf("glibc heap grew by 20 MB of blocks: %d\n",
           after.uordblks + after.hblkhd >= before.uordblks + before.hblkhd + 15000000);

    int (*mallctl)(const char *, void *, size_t *, void *, size_t) =
        (int (*)(const char *, void *, size_t *, void *, size_t))dlsym(RTLD_DEFAULT, "mallctl");
    if (mallctl) {
        uint64_t epoch = 1;
        size_t len = sizeof epoch, allocated = 0, alen = sizeof allocated;
        mallctl("epoch", &epoch, &len, &epoch, len);
        int rc = mallctl("stats.allocated", &allocated, &alen, NULL, 0);
        printf("jemalloc: mallctl stats.allocated answers %d, counts the 20 MB %d\n", rc == 0,
               allocated >= 15000000);
    }
    int (*tc_prop)(const char *, size_t *) =
        (int (*)(const char *, size_t *))dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty");
    if (tc_prop) {
        size_t allocated = 0;
        int ok = tc_prop("generic.current_allocated_bytes", &allocated);
        printf("tcmalloc: current_allocated_bytes answers %d, counts the 20 MB %d\n", ok,
               allocated >= 15000000);
    }
    int (*mi_in_heap)(const void *) = (int (*)(const void *))dlsym(RTLD_DEFAULT, "mi_is_in_heap_region");
    if (mi_in_heap) {
        int all = 1;
        for (i = 0; i < N_HELD; i++)
            all &= mi_in_heap(held[i]) != 0;
        printf("mimalloc: every block in its heap %d\n", all);
    }
    for (i = 0; i < N_HELD; i++)
        free(held[i]);
    return 0;
}
