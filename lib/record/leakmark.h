/*
 * leakmark.h - what the leak scan's marking (leakscan.c) and its glibc heap
 * walk (leakheap.c) share: the nodes (regions), the scan's state, and the
 * few ways they read memory. Internal to the leak files (leaks.h).
 */
#ifndef MT_RECORD_LEAKMARK_H
#define MT_RECORD_LEAKMARK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "leaks.h"

#define ARENA_ALIGN ((uintptr_t)64 << 20)   /* glibc's HEAP_MAX_SIZE on 64-bit */
#define MALLOC_STATE_SIZE 2200              /* sizeof(struct malloc_state), glibc >= 2.26 */

struct region {
    uintptr_t lo, hi;      /* lookups in [lo, hi) */
    uintptr_t first, end;  /* arena: chunks lie in [first, end) */
    uintptr_t maxchunk;    /* arena: the largest chunk size */
    /* arena: word pairs, a cache line holding both bitmaps of a place:
     * start bit g: a chunk at lo + 16 g; mark bit g: that chunk is marked
     * (free chunks are, from the start: never scanned, never a verdict) */
    uint64_t *bits;
    int arena;
    int marked;            /* a single node: [lo, hi) */
};

_Static_assert(sizeof(struct region) % sizeof(uintptr_t) == 0, "regions sort as words");
#define START(r, w) ((r)->bits[2 * (w)])
#define MARK(r, w) ((r)->bits[2 * (w) + 1])

/* Memory latency, not bandwidth, bounds the marking: values that may be
 * pointers wait in a ring while their bitmap words are prefetched, and
 * marked nodes in another while their first lines are. */
#define CRING 16
#define SRING 8

struct scan {
    struct region *reg;
    size_t nreg, capreg, reg_bytes;
    uintptr_t gmin, gspan;
    uintptr_t *stack;      /* [lo, hi) pairs of marked nodes to scan */
    size_t sp, cap;
    uintptr_t *holes;      /* sorted [lo, hi) pairs that are not roots */
    size_t nholes, capholes;
    uint64_t *bits;        /* the arenas' bitmaps */
    size_t bits_bytes;
    size_t memory, peak_memory;
    uint64_t root_bytes, heap_bytes;
    int failed;
    pid_t pid;
    char *buf;
    struct { uintptr_t v; struct region *r; } cring[CRING];
    unsigned chead, cn;
    uintptr_t sring[SRING][2];
    unsigned shead, sn;
};

/* A word of memory known to be readable (malloc's, or a root's copy). */
MT_NO_ASAN
static inline uintptr_t mtr_lk_word(uintptr_t a)
{
    return *(const uintptr_t *)a;
}

/* n bytes at a into dst through the kernel: 0, or -1 when they cannot be
 * read (a guard region inside a mapping). For memory not yet known to be
 * malloc's. */
int mtr_lk_safe_read(void *dst, uintptr_t a, size_t n) MT_HIDDEN;
/* Append a node region (unsorted). 0, or -1 out of memory. */
int mtr_lk_add_region(struct scan *s, const struct region *r) MT_HIDDEN;
/* The region whose range holds v (regions sorted), or NULL. */
struct region *mtr_lk_region_of(struct scan *s, uintptr_t v) MT_HIDDEN;
/* The scan's memory use (for its peak). */
void mtr_lk_count_mem(struct scan *s, size_t delta) MT_HIDDEN;

/* leakheap.c: glibc's heap as nodes. 0, or -1: some heap does not walk
 * (the caller then goes conservative). */
int mtr_lk_heap_nodes(struct scan *s, const struct mtr_lk_maps *maps) MT_HIDDEN;
/* Sampled blocks in no region yet that are chunks malloc mapped itself. */
void mtr_lk_sampled_mmapped(struct scan *s, const struct mtr_lk_block *b, size_t n) MT_HIDDEN;

#endif
