/*
 * interpose.c - the malloc family as the program sees it: malloc, calloc,
 * realloc, reallocarray, free, posix_memalign, aligned_alloc, memalign,
 * valloc, pvalloc, malloc_usable_size, free_sized, free_aligned_sized, and
 * C++'s operator new/delete routed to them.
 *
 * The fast path of an allocation is: load the thread's countdown, compare,
 * subtract, store, call glibc. free() of a pointer outside the sampled-block
 * arena is one subtraction and one compare before glibc's free. Everything
 * else is in engine.c.
 *
 * Accounting: malloc(0) counts 1 byte; calloc(n, m) counts n*m;
 * realloc(p, s) counts s (it is the free of p plus an allocation of s);
 * aligned variants count the requested size, pvalloc the page-rounded one.
 *
 * Our own operator new matters for stacks: libstdc++'s is built without
 * frame pointers, so a frame-pointer walk through it loses the function
 * that called new. Ours lives in the recorder's hook section and vanishes
 * from stacks altogether. A program that defines its own operator new keeps
 * it (the executable comes first in symbol lookup).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "arena.h"
#include "engine.h"
#include "real.h"
#include "unwind.h"

#define API __attribute__((visibility("default"))) MT_HOOK

#ifdef MT_UNDER_TSAN
/* TSan build: this file is not instrumented, the rest of the recorder is
 * and must not run before TSan's runtime (and our constructor) did. */
extern int mtr_ready MT_HIDDEN;
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

API void *malloc(size_t size)
{
    if (covered(size))
        return mtr_real_malloc(size);
    return mtr_slow_alloc(size, 0, MT_ALLOC_MALLOC);
}

API void free(void *p)
{
    if (mtr_arena_owns(p))
        mtr_free_sampled(p);
    else
        mtr_real_free(p);
}

API void *calloc(size_t n, size_t m)
{
    size_t size;
    if (__builtin_mul_overflow(n, m, &size)) {
        errno = ENOMEM;
        return NULL;
    }
    if (covered(size))
        return mtr_real_calloc(n, m);
    return mtr_slow_alloc(size, 0, MT_ALLOC_CALLOC);
}

API void *realloc(void *p, size_t size)
{
    if (!p)
        return malloc(size);
    if (mtr_arena_owns(p)) {
        if (size == 0) {       /* glibc: realloc(p, 0) frees p, returns NULL */
            mtr_free_sampled(p);
            return NULL;
        }
        return mtr_realloc_sampled(p, size);
    }
    if (size == 0 || covered(size))
        return mtr_real_realloc(p, size);
    return mtr_slow_realloc(p, size);
}

API void *reallocarray(void *p, size_t n, size_t m)
{
    size_t size;
    if (__builtin_mul_overflow(n, m, &size)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, size);
}

/* Alignment rounded up to a power of two, as glibc's memalign does;
 * 0 if impossible. */
static size_t pow2_align(size_t align)
{
    if (align <= 16)
        return 16;
    if (align > SIZE_MAX / 2 + 1)
        return 0;
    size_t a = 16;
    while (a < align)
        a <<= 1;
    return a;
}

static void *aligned(size_t align, size_t size)
{
    size_t a = pow2_align(align);
    if (!a) {
        errno = EINVAL;
        return NULL;
    }
    if (covered(size))
        return a == 16 ? mtr_real_malloc(size) : mtr_real_memalign(a, size);
    return mtr_slow_alloc(size, a == 16 ? 0 : a, MT_ALLOC_ALIGNED);
}

API void *memalign(size_t align, size_t size)
{
    return aligned(align, size);
}

API void *aligned_alloc(size_t align, size_t size)
{
    return aligned(align, size);
}

API int posix_memalign(void **out, size_t align, size_t size)
{
    if (align % sizeof(void *) != 0 || (align & (align - 1)) != 0 || align == 0)
        return EINVAL;
    int saved = errno;
    void *p = aligned(align, size);
    errno = saved;
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

API void *valloc(size_t size)
{
    return aligned((size_t)getpagesize(), size);
}

API void *pvalloc(size_t size)
{
    size_t page = (size_t)getpagesize();
    size_t rounded = (size + page - 1) & ~(page - 1);
    if (rounded < size) {
        errno = ENOMEM;
        return NULL;
    }
    return aligned(page, rounded ? rounded : page);
}

API size_t malloc_usable_size(void *p)
{
    if (!p)
        return 0;
    if (mtr_arena_owns(p))
        return mtr_arena_usable(p);
    return mtr_real_usable_size(p);
}

API void free_sized(void *p, size_t size)
{
    (void)size;
    free(p);
}

API void free_aligned_sized(void *p, size_t align, size_t size)
{
    (void)align;
    (void)size;
    free(p);
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

static MT_HOOK void *new_impl(size_t size, size_t align)
{
    for (;;) {
        void *p = align ? aligned(align, size) : malloc(size);
        if (p)
            return p;
        new_failed();
    }
}

API void *_Znwm(size_t size) { return new_impl(size, 0); }
API void *_Znam(size_t size) { return new_impl(size, 0); }
API void *_ZnwmSt11align_val_t(size_t size, size_t align) { return new_impl(size, align); }
API void *_ZnamSt11align_val_t(size_t size, size_t align) { return new_impl(size, align); }
API void *_ZnwmRKSt9nothrow_t(size_t size, const void *nt) { (void)nt; return malloc(size); }
API void *_ZnamRKSt9nothrow_t(size_t size, const void *nt) { (void)nt; return malloc(size); }
API void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *nt)
{
    (void)nt;
    return aligned(align, size);
}
API void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *nt)
{
    (void)nt;
    return aligned(align, size);
}

API void _ZdlPv(void *p) { free(p); }
API void _ZdaPv(void *p) { free(p); }
API void _ZdlPvm(void *p, size_t s) { (void)s; free(p); }
API void _ZdaPvm(void *p, size_t s) { (void)s; free(p); }
API void _ZdlPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; free(p); }
API void _ZdaPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; free(p); }
API void _ZdlPvSt11align_val_t(void *p, size_t a) { (void)a; free(p); }
API void _ZdaPvSt11align_val_t(void *p, size_t a) { (void)a; free(p); }
API void _ZdlPvmSt11align_val_t(void *p, size_t s, size_t a) { (void)s; (void)a; free(p); }
API void _ZdaPvmSt11align_val_t(void *p, size_t s, size_t a) { (void)s; (void)a; free(p); }
API void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *nt)
{
    (void)a;
    (void)nt;
    free(p);
}
API void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *nt)
{
    (void)a;
    (void)nt;
    free(p);
}
