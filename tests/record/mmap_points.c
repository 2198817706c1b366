/*
 * mmap_points.c - unit test of the recorder's accounting of anonymous
 * mappings (lib/record/mmap.c), linked with the recorder's objects so that
 * its mmap/munmap/mremap replace libc's in this binary, with a tracker that
 * keeps every sample point it is given:
 *  - each point lies inside the bytes that were mapped, kind MMAP/MREMAP;
 *  - munmap of part of a mapping frees exactly the points in the unmapped
 *    pages, mremap shrink the points beyond the new end, an mremap move
 *    keeps its points (no free) and a growth adds points in the new bytes;
 *  - memory mapped before sampling started frees nothing when unmapped;
 *  - reservations of address space (PROT_NONE, MAP_NORESERVE) count nothing;
 *  - once everything is unmapped, every point was freed exactly once;
 *  - after mt_memprof_stop, unmapping calls no callback.
 * Sanitizer builds leave mmap alone: the test is skipped there.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "memtrace/record.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
int main(void)
{
    printf("sanitizer builds of the recorder sample no mappings: plain stage only\n");
    return 77;
}
#else

#include "../check.h"

#define MiB ((size_t)1 << 20)
/* libc declares mmap & co. "leaf" (they never call back into this file),
 * but here they do, through the tracker: make the compiler reload what the
 * callbacks wrote. */
#define SYNC() __asm__ volatile("" ::: "memory")
#define MAXP 100000

static struct pt { uintptr_t addr; int kind; int freed; } pts[MAXP];
static size_t npts;
static uint64_t double_frees, bad_kind;

static void *on_alloc(void *ctx, const mt_allocation *a)
{
    (void)ctx;
    if (a->kind != MT_ALLOC_MMAP && a->kind != MT_ALLOC_MREMAP)
        return NULL;   /* malloc blocks: not this test's business */
    if (npts == MAXP || a->n_samples != 1)
        bad_kind++;
    if (npts == MAXP)
        return NULL;
    pts[npts].addr = (uintptr_t)a->ptr;
    pts[npts].kind = a->kind;
    pts[npts].freed = 0;
    npts++;
    return (void *)(uintptr_t)npts;   /* index + 1 */
}

static void on_free(void *ctx, void *token)
{
    (void)ctx;
    size_t i = (size_t)(uintptr_t)token - 1;
    if (pts[i].freed)
        double_frees++;
    pts[i].freed = 1;
}

/* Points (not freed) in [lo, hi), and all points in it. */
static size_t live_in(uintptr_t lo, uintptr_t hi)
{
    size_t n = 0;
    for (size_t i = 0; i < npts; i++)
        n += !pts[i].freed && pts[i].addr >= lo && pts[i].addr < hi;
    return n;
}

static size_t all_in(uintptr_t lo, uintptr_t hi, int kind)
{
    size_t n = 0;
    for (size_t i = 0; i < npts; i++)
        n += pts[i].addr >= lo && pts[i].addr < hi && (!kind || pts[i].kind == kind);
    return n;
}

static size_t live_total(void)
{
    size_t n = 0;
    for (size_t i = 0; i < npts; i++)
        n += !pts[i].freed;
    return n;
}

static char *anon(size_t len)
{
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    return p;
}

int main(void)
{
    char *before = anon(8 * MiB);   /* mapped before sampling starts */
    mt_tracker tk = { on_alloc, on_free, NULL };
    /* One point per 4 KiB on average: thousands per mapping. */
    if (mt_memprof_start(1.0 / 4096, 0, &tk) != 0) {
        printf("FAIL: mt_memprof_start\n");
        return 1;
    }
    munmap(before + 4 * MiB, 4 * MiB);
    SYNC();
    char *resv = mmap(NULL, 64 * MiB, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    char *none = mmap(NULL, 64 * MiB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    SYNC();
    CHECK(resv != MAP_FAILED && none != MAP_FAILED && npts == 0,
          "reservations (MAP_NORESERVE, PROT_NONE) are not counted");
    munmap(resv, 64 * MiB);
    munmap(none, 64 * MiB);
    SYNC();
    CHECK(live_total() == 0 && npts == 0, "unmapping memory mapped before the start frees nothing");

    /* A 16 MiB mapping, its first 4 MiB unmapped. */
    char *p = anon(16 * MiB);
    SYNC();
    uintptr_t a = (uintptr_t)p;
    size_t n16 = all_in(a, a + 16 * MiB, MT_ALLOC_MMAP);
    CHECK(n16 == npts && n16 > 3000 && n16 < 5200,
          "16 MiB mapping: %zu points, all inside it, kind mmap (expected ~4096)", n16);
    size_t first4 = live_in(a, a + 4 * MiB);
    munmap(p, 4 * MiB);
    SYNC();
    CHECK(live_in(a, a + 4 * MiB) == 0 && live_in(a + 4 * MiB, a + 16 * MiB) == n16 - first4,
          "munmap of the first 4 MiB freed exactly its %zu points, kept the other %zu",
          first4, n16 - first4);

    /* Shrink in place: [4, 16) MiB -> [4, 10) MiB. */
    char *q = p + 4 * MiB;
    uintptr_t b = (uintptr_t)q;
    size_t keep6 = live_in(b, b + 6 * MiB);
    char *r = mremap(q, 12 * MiB, 6 * MiB, 0);
    SYNC();
    CHECK(r == q && live_in(b, b + 12 * MiB) == keep6 && live_in(b + 6 * MiB, b + 12 * MiB) == 0,
          "mremap shrink kept the %zu points below the new end and freed the rest", keep6);

    /* Grow with a move: 6 MiB -> 24 MiB; points move with the bytes. */
    size_t before_grow = npts;
    char *m = mremap(q, 6 * MiB, 24 * MiB, MREMAP_MAYMOVE);
    SYNC();
    uintptr_t c = (uintptr_t)m;
    /* The tracker is not told about moves (the same allocations go on):
     * follow the bytes here to check where the recorder put them. */
    for (size_t i = 0; m != MAP_FAILED && i < npts; i++)
        if (!pts[i].freed && pts[i].addr >= b && pts[i].addr < b + 6 * MiB && pts[i].kind == MT_ALLOC_MMAP)
            pts[i].addr += c - b;
    size_t moved = live_in(c, c + 6 * MiB), grown = all_in(c + 6 * MiB, c + 24 * MiB, MT_ALLOC_MREMAP);
    CHECK(m != MAP_FAILED && moved == keep6,
          "mremap move kept all %zu points (now at the new address, none freed)", moved);
    CHECK(grown == npts - before_grow && grown > 3500 && grown < 5800,
          "mremap growth of 18 MiB: %zu new points in the new bytes, kind mremap (expected ~4608)", grown);

    /* MAP_FIXED over the middle 8 MiB replaces its points with new ones. */
    size_t mid_old = live_in(c + 8 * MiB, c + 16 * MiB);
    size_t n_before_fixed = npts;
    char *f = mmap(m + 8 * MiB, 8 * MiB, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    SYNC();
    size_t mid_new = npts - n_before_fixed;
    CHECK(f == m + 8 * MiB && live_in(c + 8 * MiB, c + 16 * MiB) == mid_new && mid_old > 0,
          "MAP_FIXED freed the %zu points it replaced and brought %zu of its own", mid_old, mid_new);

    /* An unaligned length unmaps whole pages: so are the points. */
    munmap(m, 24 * MiB - 100);
    SYNC();
    munmap(before, 4 * MiB);
    SYNC();
    CHECK(live_total() == 0, "everything unmapped: every point freed (%zu points in all)", npts);
    CHECK(double_frees == 0, "no point freed twice");
    CHECK(bad_kind == 0, "every point reported alone (n_samples 1)");

    /* After stop, unmapping a sampled mapping calls nothing. */
    char *s = anon(4 * MiB);
    SYNC();
    uintptr_t d = (uintptr_t)s;
    size_t ns = all_in(d, d + 4 * MiB, 0);
    mt_memprof_stop();
    munmap(s, 4 * MiB);
    SYNC();
    CHECK(ns > 0 && live_in(d, d + 4 * MiB) == ns,
          "after mt_memprof_stop, unmapping calls no free callback (%zu points stay)", ns);
    return failures ? 1 : 0;
}
#endif
