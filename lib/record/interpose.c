/*
 * interpose.c - the malloc family as the program sees it: malloc, calloc,
 * realloc, reallocarray, free, posix_memalign, aligned_alloc, memalign,
 * valloc, pvalloc, free_sized, free_aligned_sized, and C++'s operator
 * new/delete routed to them. Not malloc_usable_size: a sampled block is the
 * allocator's own, so the program's call goes straight to the allocator's
 * (redis calls it for every block; a wrapper there was half of what the
 * recorder cost redis-server). The boot buffer's blocks (real.c), the one
 * thing only the recorder could size, are dlsym's own and never reach it.
 *
 * Every call goes to the same entry point of the program's own allocator
 * (real.h), sampled or not: a sampled block is the allocator's block,
 * alike in usable size, alignment and realloc behaviour. The fast path of
 * an allocation is: load the thread's countdown, compare, subtract, store,
 * call the allocator. free() loads one bit of the sampled-block filter
 * (sampled.h) before calling the allocator's free; only when it is set,
 * the bit of the block's line, and only then the table. Everything else is in
 * sampler.c. The slow paths are functions of their own, so that the entry
 * points keep no frame and end in a jump (docs/PERFORMANCE.md counts their
 * instructions).
 *
 * Accounting: malloc(0) counts 1 byte; calloc(n, m) counts n*m;
 * realloc(p, s) counts s (it is the free of p plus an allocation of s);
 * aligned variants count the requested size, pvalloc the page-rounded one.
 *
 * Our own operator new matters for stacks: libstdc++'s is built without
 * frame pointers, so a frame-pointer walk through it loses the function
 * that called new. Ours lives in the recorder's hook section and vanishes
 * from stacks altogether. A program that defines its own operator new keeps
 * it (the executable comes first in symbol lookup). Ours runs malloc's body
 * directly when the program's malloc is ours, else calls the symbol as
 * libstdc++'s does (cxx_direct below).
 */
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "sampler.h"
#include "real.h"
#include "sampled.h"
#include "tracer.h"
#include "unwind.h"

#define API __attribute__((visibility("default"))) MT_HOOK

#ifdef MT_UNDER_TSAN
/* TSan build: this file is not instrumented, the rest of the recorder is
 * and must not run before TSan's runtime (and our constructor) did. */
#define READY() __atomic_load_n(&mtr_ready, __ATOMIC_ACQUIRE)
#endif

/* The fast path: 1 if the thread's countdown covers size bytes. */
static inline int covered(size_t size)
{
    struct mtr_thread *t = &mtr_tls;
#ifdef MT_UNDER_TSAN
    if (!READY())
        return 1;
    if (t->countdown == 0 && !t->busy)
        t->countdown = (uint64_t)256 << 10;  /* TSan may still be starting this thread */
#endif
    size_t bytes = size + (size == 0);
    uint64_t c = t->countdown;
    if (__builtin_expect(bytes < c, 1)) {
        t->countdown = c - bytes;
        return 1;
    }
    return 0;
}

static inline int marked(const void *p)
{
    return __builtin_expect(mtr_maybe_sampled(p), 0);
}

/* The slow paths, out of line: the entry points' fast paths then need no
 * frame (no register saved across the allocator's call), only tail jumps.
 * In the hook section, so that stacks never show them. */
static MT_HOOK void *malloc_sample(size_t size)
{
    return mtr_sample_new(mtr_real.malloc(size), size, MT_ALLOC_MALLOC);
}

static MT_HOOK void *memalign_sample(size_t align, size_t size)
{
    return mtr_sample_new(mtr_real.memalign(align, size), size, MT_ALLOC_ALIGNED);
}

static MT_HOOK void *calloc_sample(size_t n, size_t m, size_t size)
{
    return mtr_sample_new(mtr_real.calloc(n, m), size, MT_ALLOC_CALLOC);
}

static MT_HOOK void *realloc_sample(void *p, size_t size)
{
    return mtr_sample_new(mtr_real.realloc(p, size), size, MT_ALLOC_REALLOC);
}

static __attribute__((noinline, cold)) void *overflowed(void)
{
    errno = ENOMEM;   /* what glibc, jemalloc, tcmalloc and mimalloc answer */
    return NULL;
}

/* malloc's and memalign's bodies, for the entry points that allocate like
 * them without going through the symbol (realloc(NULL, n), operator new). */
static inline __attribute__((always_inline)) void *malloc_body(size_t size)
{
    if (covered(size))
        return mtr_real.malloc(size);
    return malloc_sample(size);
}

static inline __attribute__((always_inline)) void *memalign_body(size_t align, size_t size)
{
    if (covered(size))
        return mtr_real.memalign(align, size);
    return memalign_sample(align, size);
}

API void *malloc(size_t size)
{
    return malloc_body(size);
}

/* free(p) of a pointer in a table lookup's reach (its line bit set, too).
 * Boot blocks (dlsym's, before the allocator was found) are never freed;
 * they are told apart here, before any instrumented code runs in TSan
 * builds. */
static __attribute__((noinline)) void free_looked_up(void *p)
{
    uintptr_t token = 0;
    uint32_t gen = 0;
    if (mtr_real_in_boot(p))
        return;
    mtr_enter();
    int r = mtr_sampled_take(p, &token, &gen);
    mtr_leave();
    if (r == 0)
        mtr_real.free(p);   /* a neighbour of a sampled block in its line */
    else
        mtr_free_taken(p, r, token, gen);
}

/* free(p) of a marked pointer: its granule's bit is set. Most are
 * neighbours of a sampled block there, which the line's bit turns away here,
 * with no frame and a jump to the allocator's free. */
static __attribute__((noinline)) void free_marked(void *p)
{
    mtr_tls.marked++;   /* mt_memprof_free_marked */
    if (__builtin_expect(!mtr_line_maybe_sampled(p), 1))
        mtr_real.free(p);
    else
        free_looked_up(p);
}

/* malloc as this library defines it (an exported name may resolve to
 * another object's definition): mtr_malloc_is_ours compares. */
extern void *mtr_own_malloc(size_t) __attribute__((alias("malloc"), visibility("hidden"), copy(malloc)));

int mtr_malloc_is_ours(void)
{
    /* The program's malloc is the allocator's own when it lies in the
     * allocator's object. (An executable that takes malloc's address has
     * it point at its own PLT entry: that still reaches us.) */
    void *first = dlsym(RTLD_DEFAULT, "malloc");
    Dl_info info;
    struct link_map *map = NULL;
    if (!first || first == (void *)mtr_own_malloc ||
        !dladdr1(first, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return 1;
    if (map->l_prev == NULL)
        return 1;   /* the executable comes first in the chain */
    /* Another object's malloc comes first: an allocator of its own, or a
     * preload that forwards to the next malloc (ours). Ask it for a small
     * block: ours, when reached, takes its bytes off this thread's countdown
     * (or, at the countdown's end, draws it again), which nothing else
     * changes meanwhile. The block goes back to the program's free. */
    void (*first_free)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "free");
    if (!first_free)
        return 1;
    uint64_t before = mtr_tls.countdown;
    void *p = ((void *(*)(size_t))first)(8);
    uint64_t after = mtr_tls.countdown;
    first_free(p);
    return after != before;
}

static inline __attribute__((always_inline)) void free_body(void *p)
{
    if (marked(p))
        free_marked(p);
    else
        mtr_real.free(p);
}

API void free(void *p)
{
    free_body(p);
}

API void *calloc(size_t n, size_t m)
{
    size_t size;
    if (__builtin_mul_overflow(n, m, &size))
        return overflowed();
    if (covered(size))
        return mtr_real.calloc(n, m);
    return calloc_sample(n, m, size);
}

/* realloc of a block that is not sampled. */
static inline __attribute__((always_inline)) void *realloc_plain(void *p, size_t size)
{
    if (size == 0 || covered(size))
        return mtr_real.realloc(p, size);
    return realloc_sample(p, size);
}

/* realloc(p) of a pointer the filter marks: a sampled block, a boot block
 * or a neighbour. */
static MT_HOOK void *realloc_marked(void *p, size_t size)
{
    mtr_tls.marked++;   /* mt_memprof_free_marked */
    if (mtr_line_maybe_sampled(p)) {
        uintptr_t token = 0;
        uint32_t gen = 0;
        if (mtr_real_in_boot(p))
            return mtr_real_boot_realloc(p, size);
        mtr_enter();
        int r = mtr_sampled_take(p, &token, &gen);
        mtr_leave();
        if (r > 0)
            return mtr_realloc_taken(p, size, token, gen);
        /* not sampled (or, in a signal handler inside the table, taken as
         * not): on as below */
    }
    return realloc_plain(p, size);
}

API void *realloc(void *p, size_t size)
{
    if (!p)
        return malloc_body(size);   /* as glibc's realloc(NULL): not through the symbol */
    if (marked(p))
        return realloc_marked(p, size);
    return realloc_plain(p, size);
}

API void *reallocarray(void *p, size_t n, size_t m)
{
    size_t size;
    if (__builtin_mul_overflow(n, m, &size))
        return overflowed();
    return realloc(p, size);
}

API void *memalign(size_t align, size_t size)
{
    return memalign_body(align, size);
}

API void *aligned_alloc(size_t align, size_t size)
{
    if (covered(size))
        return mtr_real.aligned_alloc(align, size);
    return mtr_sample_new(mtr_real.aligned_alloc(align, size), size, MT_ALLOC_ALIGNED);
}

static MT_HOOK int posix_memalign_sample(void **out, size_t align, size_t size)
{
    int rc = mtr_real.posix_memalign(out, align, size);
    if (rc == 0)
        mtr_sample_new(*out, size, MT_ALLOC_ALIGNED);
    return rc;
}

API int posix_memalign(void **out, size_t align, size_t size)
{
    if (covered(size))
        return mtr_real.posix_memalign(out, align, size);
    return posix_memalign_sample(out, align, size);
}

API void *valloc(size_t size)
{
    if (covered(size))
        return mtr_real.valloc(size);
    return mtr_sample_new(mtr_real.valloc(size), size, MT_ALLOC_ALIGNED);
}

API void *pvalloc(size_t size)
{
    size_t page = (size_t)getpagesize();
    size_t rounded = (size + page - 1) & ~(page - 1);
    if (rounded < size || covered(rounded ? rounded : page))
        return mtr_real.pvalloc(size);
    return mtr_sample_new(mtr_real.pvalloc(size), rounded ? rounded : page, MT_ALLOC_ALIGNED);
}

API void free_sized(void *p, size_t size)
{
    if (marked(p))
        free_marked(p);
    else
        mtr_real.free_sized(p, size);
}

API void free_aligned_sized(void *p, size_t align, size_t size)
{
    if (marked(p))
        free_marked(p);
    else
        mtr_real.free_aligned_sized(p, align, size);
}

/* ---------------------------------------------------------------------- */
/* C++ operator new / delete                                              */

typedef void (*new_handler_fn)(void);

/* Allocation failed: call the new-handler and retry, or throw
 * std::bad_alloc (through libstdc++, which is loaded in any program that
 * calls operator new). */
static MT_HOOK int new_failed(void)
{
    new_handler_fn (*get)(void) =
        (new_handler_fn (*)(void))dlsym(RTLD_DEFAULT, "_ZSt15get_new_handlerv");
    new_handler_fn h = get ? get() : NULL;
    if (h) {
        h();
        return 1;
    }
    void (*thrower)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "_ZSt17__throw_bad_allocv");
    if (thrower)
        thrower();
    abort();
}

/* 1 when the constructor found that the program's malloc, free and memalign
 * are this library's: operator new and delete then run their bodies without
 * a call. Otherwise (something that comes first defines malloc: a
 * forwarding shim, an allocator without operator new; or the recorder was
 * attached) they call the symbols, as libstdc++'s do, so that whatever
 * comes first sees their calls. */
static int cxx_direct;

extern void mtr_own_free(void *) __attribute__((alias("free"), visibility("hidden"), copy(free)));
extern void *mtr_own_memalign(size_t, size_t)
    __attribute__((alias("memalign"), visibility("hidden"), copy(memalign)));

void mtr_interpose_init(void)
{
    cxx_direct = dlsym(RTLD_DEFAULT, "malloc") == (void *)mtr_own_malloc &&
                 dlsym(RTLD_DEFAULT, "free") == (void *)mtr_own_free &&
                 dlsym(RTLD_DEFAULT, "memalign") == (void *)mtr_own_memalign;
}

static inline __attribute__((always_inline)) void *new_alloc(size_t size, size_t align)
{
    if (__builtin_expect(cxx_direct, 1))
        return align ? memalign_body(align, size) : malloc_body(size);
    return align ? memalign(align, size) : malloc(size);
}

static inline __attribute__((always_inline)) void delete_body(void *p)
{
    if (__builtin_expect(cxx_direct, 1))
        free_body(p);
    else
        free(p);
}

/* The allocation failed: the new-handler and another try, until one
 * succeeds or the handler throws. */
static MT_HOOK void *new_retry(size_t size, size_t align)
{
    for (;;) {
        new_failed();
        void *p = new_alloc(size, align);
        if (p)
            return p;
    }
}

static inline __attribute__((always_inline)) void *new_body(size_t size, size_t align)
{
    void *p = new_alloc(size, align);
    if (__builtin_expect(p != NULL, 1))
        return p;
    return new_retry(size, align);
}

API void *_Znwm(size_t size) { return new_body(size, 0); }
API void *_Znam(size_t size) { return new_body(size, 0); }
API void *_ZnwmSt11align_val_t(size_t size, size_t align) { return new_body(size, align); }
API void *_ZnamSt11align_val_t(size_t size, size_t align) { return new_body(size, align); }
API void *_ZnwmRKSt9nothrow_t(size_t size, const void *nt) { (void)nt; return new_alloc(size, 0); }
API void *_ZnamRKSt9nothrow_t(size_t size, const void *nt) { (void)nt; return new_alloc(size, 0); }
API void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *nt)
{
    (void)nt;
    return new_alloc(size, align);
}
API void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *nt)
{
    (void)nt;
    return new_alloc(size, align);
}

API void _ZdlPv(void *p) { delete_body(p); }
API void _ZdaPv(void *p) { delete_body(p); }
API void _ZdlPvm(void *p, size_t s) { (void)s; delete_body(p); }
API void _ZdaPvm(void *p, size_t s) { (void)s; delete_body(p); }
API void _ZdlPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; delete_body(p); }
API void _ZdaPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; delete_body(p); }
API void _ZdlPvSt11align_val_t(void *p, size_t a) { (void)a; delete_body(p); }
API void _ZdaPvSt11align_val_t(void *p, size_t a) { (void)a; delete_body(p); }
API void _ZdlPvmSt11align_val_t(void *p, size_t s, size_t a) { (void)s; (void)a; delete_body(p); }
API void _ZdaPvmSt11align_val_t(void *p, size_t s, size_t a) { (void)s; (void)a; delete_body(p); }
API void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *nt)
{
    (void)a;
    (void)nt;
    delete_body(p);
}
API void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *nt)
{
    (void)a;
    (void)nt;
    delete_body(p);
}
