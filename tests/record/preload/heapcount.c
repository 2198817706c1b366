/*
 * heapcount.c - counts the blocks in use in the program's allocator, built
 * as a preload library by tests/record/heapsame.sh and loaded alone or after
 * the recorder (LD_PRELOAD=libmemtrace.so:heapcount.so: the recorder passes
 * every request on to it as the program's allocator). Every block that
 * glibc hands out through it counts one, every block given back minus one;
 * heapcount_live() says how many are in use and heapcount_calls() how many
 * requests came. glibc only (it calls __libc_malloc & co. directly).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

#define API __attribute__((visibility("default")))

static long live, calls;

static void *counted(void *p)
{
    __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
    if (p)
        __atomic_add_fetch(&live, 1, __ATOMIC_RELAXED);
    return p;
}

API long heapcount_live(void) { return __atomic_load_n(&live, __ATOMIC_RELAXED); }
API long heapcount_calls(void) { return __atomic_load_n(&calls, __ATOMIC_RELAXED); }

API void *malloc(size_t n) { return counted(__libc_malloc(n)); }
API void *calloc(size_t n, size_t s) { return counted(__libc_calloc(n, s)); }
API void *memalign(size_t a, size_t n) { return counted(__libc_memalign(a, n)); }
API void *aligned_alloc(size_t a, size_t n) { return counted(__libc_memalign(a, n)); }
API void *valloc(size_t n) { return counted(__libc_valloc(n)); }
API void *pvalloc(size_t n) { return counted(__libc_pvalloc(n)); }

API void free(void *p)
{
    __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
    if (p)
        __atomic_sub_fetch(&live, 1, __ATOMIC_RELAXED);
    __libc_free(p);
}

API void *realloc(void *p, size_t n)
{
    if (!p)
        return counted(__libc_realloc(p, n));
    __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
    void *q = __libc_realloc(p, n);
    if (!q && n == 0)
        __atomic_sub_fetch(&live, 1, __ATOMIC_RELAXED);   /* realloc(p, 0) freed p */
    return q;
}

API size_t malloc_usable_size(void *p)
{
    static size_t (*real)(void *);
    if (!real)
        real = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
    return p && real ? real(p) : 0;
}

API int posix_memalign(void **out, size_t a, size_t n)
{
    if (a < sizeof(void *) || (a & (a - 1)))
        return EINVAL;
    void *p = counted(__libc_memalign(a, n));
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}
