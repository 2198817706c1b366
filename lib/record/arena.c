/*
 * arena.c - the sampled-block arena (see arena.h).
 *
 * Layout: one range reserved with MAP_NORESERVE (only touched pages cost
 * memory) and a shadow range of the same size holding 16 bytes of metadata
 * per 16-byte granule of the arena; only the entry of a slot's first granule
 * is used, so the shadow stays sparse.
 *
 * Size classes: 16-byte steps up to 1 KiB (classes 0..63), then powers of
 * two from 2 KiB (classes 64..). Slots of classes up to 64 KiB are carved
 * from 64 KiB chunks aligned to 64 KiB, bigger slots are their own chunk,
 * aligned to their size, so a power-of-two class is aligned to its size and
 * a 16-step class whose size is a multiple of an alignment is aligned to it.
 * Freed slots go on a per-class free list threaded through the slots; slots
 * of 256 KiB and more give their pages back (MADV_DONTNEED) first.
 *
 * One spinlock protects everything: the arena is touched only by sampled
 * allocations and their frees, which are rare by design.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "arena.h"

#define GRANULE 16
#define CHUNK ((uintptr_t)64 << 10)
#define SMALL_CLASSES 64               /* 16..1024 by 16 */
#define NCLASSES (SMALL_CLASSES + 40)  /* then 2 KiB << k */
#define RELEASE_MIN ((size_t)256 << 10)

struct meta {
    uintptr_t token;
    uint64_t info;   /* bit 63 live, 56-62 generation, 48-55 class, 0-47 requested size */
};

uintptr_t mtr_arena_lo;
uintptr_t mtr_arena_span;

static struct meta *shadow;
static uintptr_t bump;          /* next unused byte of the arena */
static void *free_list[NCLASSES];
static uintptr_t carve_next[NCLASSES], carve_end[NCLASSES];
static int lock_word;
static int init_state;          /* 0 not tried, 1 ok, -1 failed */

void mtr_arena_lock(void)
{
    while (__atomic_exchange_n(&lock_word, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&lock_word, __ATOMIC_RELAXED))
            sched_yield();
}

void mtr_arena_unlock(void)
{
    __atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE);
}

void mtr_arena_reset_lock(void)
{
    __atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE);
}

static void *reserve(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int mtr_arena_init(void)
{
#ifdef __SANITIZE_THREAD__
    static const unsigned gib[] = { 1 };   /* keep TSan's shadow mappings small */
#else
    static const unsigned gib[] = { 64, 16, 4, 1 };
#endif
    int state;

    mtr_arena_lock();
    state = init_state;
    /* Under an address-space limit (ulimit -v), take at most 1/32 of it
     * for the arena and as much for its shadow: the program needs the rest. */
    size_t cap = (size_t)-1;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        cap = (size_t)(rl.rlim_cur / 32);
    for (unsigned i = 0; state == 0 && i < sizeof gib / sizeof gib[0] + 4; i++) {
        /* 64, 16, 4, 1 GiB, then 256, 64, 16, 4 MiB when capped */
        size_t len = i < sizeof gib / sizeof gib[0]
                         ? (size_t)gib[i] << 30
                         : ((size_t)1 << 30) >> (2 * (i - sizeof gib / sizeof gib[0] + 1));
        if (len > cap)
            continue;
        void *a = reserve(len + CHUNK);
        void *s = a ? reserve(len) : NULL;
        if (!s) {
            if (a) munmap(a, len + CHUNK);
            continue;
        }
        /* Align the start to a chunk so chunk-relative alignment is absolute. */
        uintptr_t lo = ((uintptr_t)a + CHUNK - 1) & ~(CHUNK - 1);
        shadow = s;
        bump = 0;
        mtr_arena_lo = lo;
        __atomic_store_n(&mtr_arena_span, (uintptr_t)len, __ATOMIC_RELEASE);
        state = 1;
    }
    if (state == 0)
        state = -1;
    init_state = state;
    mtr_arena_unlock();
    return state == 1 ? 0 : -1;
}

static size_t class_size(unsigned cls)
{
    return cls < SMALL_CLASSES ? (size_t)(cls + 1) * GRANULE
                               : (size_t)2048 << (cls - SMALL_CLASSES);
}

/* The class for size bytes at alignment align, or -1 if too big. */
static int class_of(size_t size, size_t align)
{
    if (size == 0)
        size = 1;
    if (size <= 1024 && align <= 1024) {
        size_t cs = (size + align - 1) & ~(align - 1);
        if (cs <= 1024)
            return (int)(cs / GRANULE) - 1;
    }
    if (size < align)
        size = align;
    for (unsigned c = SMALL_CLASSES; c < NCLASSES; c++)
        if (class_size(c) >= size)
            return (int)c;
    return -1;
}

/* Take len bytes aligned to align from the unused part of the arena. */
static uintptr_t take(size_t len, size_t align)
{
    uintptr_t start = (bump + align - 1) & ~(uintptr_t)(align - 1);
    if (start > mtr_arena_span || mtr_arena_span - start < len)
        return 0;
    bump = start + len;
    return mtr_arena_lo + start;
}

void *mtr_arena_alloc(size_t size, size_t align, int zero)
{
    if (align < GRANULE)
        align = GRANULE;
    int cls = class_of(size, align);
    if (cls < 0 || !mtr_arena_span)
        return NULL;
    size_t cs = class_size((unsigned)cls);
    void *p;
    int fresh = 0;

    mtr_arena_lock();
    p = free_list[cls];
    if (p) {
        free_list[cls] = *(void **)p;
    } else if (cs <= CHUNK) {
        if (carve_next[cls] + cs > carve_end[cls]) {
            uintptr_t c = take(CHUNK, CHUNK);
            carve_next[cls] = c;
            carve_end[cls] = c ? c + CHUNK : 0;
        }
        if (carve_next[cls]) {
            p = (void *)carve_next[cls];
            carve_next[cls] += cs;
            fresh = 1;
        }
    } else {
        p = (void *)take(cs, cs);
        fresh = 1;
    }
    if (p) {
        size_t g = ((uintptr_t)p - mtr_arena_lo) / GRANULE;
        shadow[g].token = 0;
        shadow[g].info = ((uint64_t)1 << 63) | ((uint64_t)cls << 48) |
                         ((uint64_t)size & (((uint64_t)1 << 48) - 1));
        *(void **)p = NULL;  /* don't leak the free-list link to the program */
    }
    mtr_arena_unlock();
    /* Fresh memory and released big slots read as zero, except the link. */
    if (p && zero && !fresh && cs < RELEASE_MIN)
        memset(p, 0, cs);
    return p;
}

static struct meta *meta_of(const void *p, size_t *g)
{
    uintptr_t off = (uintptr_t)p - mtr_arena_lo;
    if (off >= mtr_arena_span || off % GRANULE)
        return NULL;
    *g = off / GRANULE;
    return &shadow[*g];
}

void mtr_arena_set(void *p, uintptr_t token, uint32_t gen)
{
    size_t g;
    struct meta *m = meta_of(p, &g);
    if (!m)
        return;
    /* No lock: until malloc returns, the block belongs to this thread. */
    uint64_t info = __atomic_load_n(&m->info, __ATOMIC_RELAXED);
    __atomic_store_n(&m->token, token, __ATOMIC_RELAXED);
    __atomic_store_n(&m->info, (info & ~((uint64_t)0x7f << 56)) | ((uint64_t)(gen & 0x7f) << 56),
                     __ATOMIC_RELEASE);
}

int mtr_arena_free(void *p, uintptr_t *token, uint32_t *gen)
{
    size_t g;
    struct meta *m = meta_of(p, &g);
    if (!m)
        return 0;
    mtr_arena_lock();
    if (!(m->info >> 63)) {
        mtr_arena_unlock();
        return 0;
    }
    unsigned cls = (unsigned)(m->info >> 48) & 0xff;
    size_t cs = class_size(cls);
    *token = m->token;
    *gen = (uint32_t)(m->info >> 56) & 0x7f;
    m->info = 0;
    m->token = 0;
    if (cs >= RELEASE_MIN) {
        int saved = errno;
        madvise(p, cs, MADV_DONTNEED);
        errno = saved;
    }
    *(void **)p = free_list[cls];
    free_list[cls] = p;
    mtr_arena_unlock();
    return 1;
}

size_t mtr_arena_usable(const void *p)
{
    size_t g;
    struct meta *m = meta_of(p, &g);
    uint64_t info = m ? __atomic_load_n(&m->info, __ATOMIC_RELAXED) : 0;
    if (!(info >> 63))
        return 0;
    return class_size((unsigned)(info >> 48) & 0xff);
}
