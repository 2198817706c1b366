/*
 * ownheap.c - the recorder's own heap (ownheap.h): blocks for the tables the
 * recorder keeps (the codec's writer, carry.c, modules.c, names), from
 * anonymous mappings it makes itself with the mmap system call, so that the
 * program's allocator never sees them: what the program sees of its heap
 * (its blocks' places and usable sizes, its allocator's statistics) is the
 * same with and without the recorder.
 *
 * Every block starts with a 16-byte header. A block of at most 64 KiB
 * (header included) is one of 12 power-of-two classes from 32 bytes, cut
 * from 1 MiB arenas by a bump pointer and kept on its class's free list
 * when freed (arenas are never returned: the tables they serve grow and stay).
 * A larger block is a mapping of its own, unmapped when freed and grown by
 * mremap. Every mapping is registered with own.c, whose figure the
 * resident-memory ledger shows as the recorder's own memory (own.c's
 * lock, only tried, is the one lock taken under the heap's: map() runs
 * under it; both are held across fork).
 *
 * A free block's header keeps its class with FREED or'ed in: with
 * MT_CHECKS, a block freed twice or a free list overwritten is caught.
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../trace/alloc.h"
#include "lock.h"
#include "own.h"
#include "ownheap.h"

#define HDR 16
#define MIN_SHIFT 5               /* the smallest class: 32 bytes */
#define NCLASSES 12               /* 32 B .. 64 KiB */
#define ARENA (1u << 20)
#define LARGE 0xffu               /* header's class of a block mapped alone */
#define FREED 0x100u              /* or'ed into a free block's class */

struct hdr {
    uint64_t cls;                 /* class index, or LARGE */
    uint64_t len;                 /* LARGE: the mapping's length */
};

static struct {
    int lock;
    void *free_list[NCLASSES];    /* each free block's payload holds the next */
    char *bump, *end;             /* the current arena's unused part */
} heap;

static void *map(size_t len)
{
    void *p = (void *)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    mtr_own_add(p, len);
    return p;
}

static size_t page_round(size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (n + page - 1) & ~(page - 1);
}

/* The class of a block of total bytes (header included), or LARGE. */
static unsigned class_of(size_t total)
{
    for (unsigned k = 0; k < NCLASSES; k++)
        if (total <= (size_t)1 << (MIN_SHIFT + k))
            return k;
    return LARGE;
}

static void *alloc_small(unsigned k)
{
    size_t size = (size_t)1 << (MIN_SHIFT + k);
    mtr_lock(&heap.lock);
    char *b = heap.free_list[k];
    if (b) {
        MT_ASSERT(((struct hdr *)(void *)b)->cls == (k | FREED));   /* a free block of class k */
        memcpy(&heap.free_list[k], b + HDR, sizeof(void *));
    } else {
        if ((size_t)(heap.end - heap.bump) < size) {
            char *a = map(ARENA);   /* (the old arena's rest stays unused) */
            if (!a) {
                mtr_unlock(&heap.lock);
                return NULL;
            }
            heap.bump = a;
            heap.end = a + ARENA;
        }
        b = heap.bump;
        heap.bump += size;
        MT_ASSERT(heap.bump <= heap.end && ((uintptr_t)b & (HDR - 1)) == 0);
    }
    mtr_unlock(&heap.lock);
    ((struct hdr *)(void *)b)->cls = k;
    return b + HDR;
}

void *mtr_heap_alloc(size_t n)
{
    if (n > SIZE_MAX / 2)
        return NULL;
    unsigned k = class_of(n + HDR);
    if (k != LARGE)
        return alloc_small(k);
    size_t len = page_round(n + HDR);
    struct hdr *h = map(len);
    if (!h)
        return NULL;
    h->cls = LARGE;
    h->len = len;
    return (char *)h + HDR;
}

void *mtr_heap_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / 2 / size)
        return NULL;
    void *p = mtr_heap_alloc(n * size);
    if (p && ((struct hdr *)(void *)((char *)p - HDR))->cls != LARGE)
        memset(p, 0, n * size);   /* (a fresh mapping is zero already) */
    return p;
}

void mtr_heap_free(void *p)
{
    if (!p)
        return;
    char *b = (char *)p - HDR;
    struct hdr *h = (struct hdr *)(void *)b;
    if (h->cls == LARGE) {
        MT_ASSERT(((uintptr_t)b & ((uintptr_t)sysconf(_SC_PAGESIZE) - 1)) == 0 &&
                  h->len >= HDR);
        mtr_own_del(b);
        syscall(SYS_munmap, b, (size_t)h->len);
        return;
    }
    MT_ASSERT(h->cls < NCLASSES);   /* (freed twice: h->cls has FREED) */
    unsigned k = (unsigned)h->cls;
    mtr_lock(&heap.lock);
    h->cls = k | FREED;
    memcpy(b + HDR, &heap.free_list[k], sizeof(void *));
    heap.free_list[k] = b;
    mtr_unlock(&heap.lock);
}

void *mtr_heap_realloc(void *p, size_t n)
{
    if (!p)
        return mtr_heap_alloc(n);
    if (n > SIZE_MAX / 2)
        return NULL;
    char *b = (char *)p - HDR;
    struct hdr *h = (struct hdr *)(void *)b;
    MT_ASSERT(h->cls < NCLASSES || h->cls == LARGE);
    size_t have = h->cls == LARGE ? (size_t)h->len : (size_t)1 << (MIN_SHIFT + h->cls);
    if (n + HDR <= have && (h->cls == LARGE || class_of(n + HDR) == h->cls))
        return p;   /* (a small block shrinks in place only within its class) */
    if (h->cls == LARGE && class_of(n + HDR) == LARGE) {
        size_t len = page_round(n + HDR);
        void *m = (void *)syscall(SYS_mremap, b, have, len, MREMAP_MAYMOVE);
        if (m == MAP_FAILED)
            return NULL;
        mtr_own_del(b);
        mtr_own_add(m, len);
        h = m;
        h->len = len;
        return (char *)m + HDR;
    }
    void *q = mtr_heap_alloc(n);
    if (!q)
        return NULL;
    memcpy(q, p, n < have - HDR ? n : have - HDR);
    mtr_heap_free(p);
    return q;
}

char *mtr_heap_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = mtr_heap_alloc(n);
    if (c)
        memcpy(c, s, n);
    return c;
}

const struct mt_alloc mtr_heap_codec = { mtr_heap_realloc, mtr_heap_free };

void mtr_heap_fork_prepare(void)
{
    mtr_lock(&heap.lock);
    mtr_own_fork_prepare();   /* (the order map() takes them in) */
}

void mtr_heap_fork_parent(void)
{
    mtr_own_fork_parent();
    mtr_unlock(&heap.lock);
}

void mtr_heap_fork_child(void)
{
    mtr_own_fork_child();
    heap.lock = 0;   /* the child's only thread is the one that held it */
}
