/*
 * real.c - reaching the allocator underneath the recorder (see real.h).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "real.h"

typedef size_t (*usable_fn)(void *);

#if !defined(__SANITIZE_THREAD__) && !defined(MT_UNDER_TSAN)

size_t mtr_real_usable_size(void *p)
{
    static usable_fn real;
    usable_fn f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (!f) {
        mtr_enter();
        f = (usable_fn)dlsym(RTLD_NEXT, "malloc_usable_size");
        mtr_leave();
        if (!f)
            return 0;
        __atomic_store_n(&real, f, __ATOMIC_RELEASE);
    }
    return f(p);
}

#else

static struct {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    void *(*memalign)(size_t, size_t);
    usable_fn usable;
} fns;
static int resolving;
static _Alignas(16) char boot[1 << 16];
static size_t boot_used;

static void *boot_alloc(size_t s)
{
    size_t at = __atomic_fetch_add(&boot_used, (s + 15) & ~(size_t)15, __ATOMIC_RELAXED);
    return at + s <= sizeof boot ? boot + at : NULL;
}

static int in_boot(void *p)
{
    return (char *)p >= boot && (char *)p < boot + sizeof boot;
}

static int resolve(void)
{
    if (__atomic_load_n(&fns.usable, __ATOMIC_ACQUIRE))
        return 1;
    if (__atomic_exchange_n(&resolving, 1, __ATOMIC_ACQ_REL))
        return 0;
    fns.malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    fns.calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    fns.realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    fns.free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    fns.memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
    __atomic_store_n(&fns.usable, (usable_fn)dlsym(RTLD_NEXT, "malloc_usable_size"),
                     __ATOMIC_RELEASE);
    return 1;
}

void *mtr_real_malloc(size_t s)
{
    return resolve() ? fns.malloc(s) : boot_alloc(s);
}

void *mtr_real_calloc(size_t n, size_t m)
{
    if (resolve())
        return fns.calloc(n, m);
    return n && m > SIZE_MAX / n ? NULL : boot_alloc(n * m); /* boot is zeroed */
}

void *mtr_real_realloc(void *p, size_t s)
{
    if (in_boot(p)) {
        void *q = mtr_real_malloc(s);
        if (q)
            memcpy(q, p, s < 64 ? s : 64); /* boot blocks are tiny dlsym buffers */
        return q;
    }
    return resolve() ? fns.realloc(p, s) : boot_alloc(s);
}

void mtr_real_free(void *p)
{
    if (!p || in_boot(p))
        return;
    if (resolve())
        fns.free(p);
}

void *mtr_real_memalign(size_t a, size_t s)
{
    if (resolve())
        return fns.memalign(a, s);
    void *p = boot_alloc(s + a);
    return p ? (void *)(((uintptr_t)p + a - 1) & ~(uintptr_t)(a - 1)) : NULL;
}

size_t mtr_real_usable_size(void *p)
{
    if (in_boot(p))
        return 0;
    return resolve() && fns.usable ? fns.usable(p) : 0;
}

#endif
