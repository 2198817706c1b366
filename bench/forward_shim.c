/*
 * forward_shim.c - the least a malloc interposer can be, for
 * bench/wrapshare.sh's FLOOR=1: malloc, calloc, realloc, free and C++'s
 * plain operator new and delete, each a load of the next definition's
 * address, a test and a jump on to it (dlsym(RTLD_NEXT) at load time).
 * It records nothing: the share of a program's CPU in these wrappers is
 * what any interposer pays for the extra hop on every call, the floor
 * under the recorder's own wrappers.
 *
 * Built by `make bench-tools` as build/bench/forward_shim.so, never
 * installed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#define API __attribute__((visibility("default")))

static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);

/* What dlsym may allocate before the next definitions are known. */
static char boot[16384] __attribute__((aligned(16)));
static size_t boot_used;
static int resolving;

static void *boot_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n > sizeof boot - boot_used)
        return NULL;
    void *p = boot + boot_used;
    boot_used += n;
    return p;   /* zeroed: boot is static and never reused */
}

static void resolve(void)
{
    if (resolving)
        return;
    resolving = 1;
    next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    resolving = 0;
}

__attribute__((constructor)) static void init(void)
{
    resolve();
}

static int in_boot(const void *p)
{
    return (const char *)p >= boot && (const char *)p < boot + sizeof boot;
}

API void *malloc(size_t n)
{
    if (__builtin_expect(!next_malloc, 0)) {
        resolve();
        if (!next_malloc)
            return boot_alloc(n);
    }
    return next_malloc(n);
}

API void *calloc(size_t n, size_t m)
{
    if (__builtin_expect(!next_calloc, 0)) {
        resolve();
        if (!next_calloc)
            return m && n > (size_t)-1 / m ? NULL : boot_alloc(n * m);
    }
    return next_calloc(n, m);
}

API void *realloc(void *p, size_t n)
{
    if (__builtin_expect(!next_realloc || (boot_used && in_boot(p)), 0)) {
        void *q = malloc(n);
        if (q && p)
            memcpy(q, p, n);   /* a boot block: at most its bytes were in use */
        return q;
    }
    return next_realloc(p, n);
}

API void free(void *p)
{
    if (__builtin_expect(!next_free || (boot_used && in_boot(p)), 0))
        return;   /* a boot block (dlsym's, in practice never): kept */
    next_free(p);
}

/* operator new(size_t), new[](size_t), delete(void *), delete[](void *)
 * and the sized deletes, as the recorder routes them */
API void *_Znwm(size_t n) { return malloc(n); }
API void *_Znam(size_t n) { return malloc(n); }
API void _ZdlPv(void *p) { free(p); }
API void _ZdaPv(void *p) { free(p); }
API void _ZdlPvm(void *p, size_t n) { (void)n; free(p); }
API void _ZdaPvm(void *p, size_t n) { (void)n; free(p); }
