/*
 * real.c - finding the allocator underneath the recorder (see real.h): the
 * boot stubs mtr_real starts with, the resolution through dlsym(RTLD_NEXT),
 * the emulation of entry points the allocator lacks, and the boot buffer.
 *
 * Under ThreadSanitizer this file is built uninstrumented (it runs before
 * TSan's runtime is ready) and the next allocator is TSan's interceptor.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "defined.h"
#include "real.h"
#include "sampled.h"

/* ---------------------------------------------------------------------- */
/* The boot buffer: what dlsym allocates while this thread resolves        */

#define BOOT_SIZE (64 << 10)
#define BOOT_HEADER 16

static _Alignas(64) char boot[BOOT_SIZE];
static size_t boot_used;

int mtr_real_in_boot(const void *p)
{
    return (const char *)p >= boot && (const char *)p < boot + sizeof boot;
}

size_t mtr_real_boot_size(const void *p)
{
    size_t s;
    memcpy(&s, (const char *)p - BOOT_HEADER, sizeof s);
    return s;
}

void *mtr_real_boot_realloc(void *p, size_t size)
{
    size_t old = mtr_real_boot_size(p);
    void *q = mtr_real.malloc(size);
    if (q)
        memcpy(q, p, old < size ? old : size);
    return q;
}

/* A zeroed block of s bytes aligned to align (a power of two >= 16), its
 * size in the 16 bytes before it; NULL when the buffer is used up. Boot
 * blocks are never freed: they are few and small (dlsym's). */
static void *boot_alloc(size_t s, size_t align)
{
    if (s > BOOT_SIZE || align > BOOT_SIZE / 4)
        return NULL;
    size_t used = __atomic_load_n(&boot_used, __ATOMIC_RELAXED), start, end;
    do {
        start = (used + BOOT_HEADER + align - 1) & ~(align - 1);
        end = (start + s + 15) & ~(size_t)15;
        if (end > BOOT_SIZE)
            return NULL;
    } while (!__atomic_compare_exchange_n(&boot_used, &used, end, 0, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    memcpy(boot + start - BOOT_HEADER, &s, sizeof s);
    mtr_filter_pin(boot + start);   /* free() and realloc() must look at it */
    return boot + start;
}

/* ---------------------------------------------------------------------- */
/* Resolution                                                              */

static int state;   /* 0 not resolved, 1 being resolved, 2 resolved */
static __thread int resolving_here __attribute__((tls_model("initial-exec")));

/* 1 when mtr_real holds the real functions; 0 when this very thread is
 * resolving (its allocation is dlsym's: serve it from the boot buffer). */
static int ready(void)
{
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == 2)
        return 1;
    if (resolving_here)
        return 0;
    mtr_real_resolve();
    return 1;
}

/* The raw aligned allocators the allocator defines (NULL if it lacks
 * them), for the emulations. */
static void *(*raw_memalign)(size_t, size_t);
static int (*raw_posix_memalign)(void **, size_t, size_t);
static void *(*raw_aligned_alloc)(size_t, size_t);

static size_t pow2_at_least(size_t a, size_t min)
{
    size_t p = min;
    while (p < a && p <= (size_t)-1 / 2)
        p <<= 1;
    return p < a ? 0 : p;
}

static void *emu_memalign(size_t align, size_t size)
{
    size_t a = pow2_at_least(align, sizeof(void *));
    if (!a) {
        errno = EINVAL;
        return NULL;
    }
    if (raw_posix_memalign) {
        void *p = NULL;
        int rc = raw_posix_memalign(&p, a, size);
        if (rc) {
            errno = rc;
            return NULL;
        }
        return p;
    }
    if (raw_aligned_alloc) {
        size_t rounded = (size + a - 1) & ~(a - 1);
        if (rounded < size) {
            errno = ENOMEM;
            return NULL;
        }
        return raw_aligned_alloc(a, rounded ? rounded : a);
    }
    return mtr_real.malloc(size);   /* an allocator with no aligned entry at all */
}

static void *emu_aligned_alloc(size_t align, size_t size)
{
    return mtr_real.memalign(align, size);
}

static int emu_posix_memalign(void **out, size_t align, size_t size)
{
    if (align == 0 || align % sizeof(void *) != 0 || (align & (align - 1)) != 0)
        return EINVAL;
    int saved = errno;
    void *p = mtr_real.memalign(align, size);
    errno = saved;
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

static void *emu_valloc(size_t size)
{
    return mtr_real.memalign((size_t)getpagesize(), size);
}

static void *emu_pvalloc(size_t size)
{
    size_t page = (size_t)getpagesize();
    size_t rounded = (size + page - 1) & ~(page - 1);
    if (rounded < size) {
        errno = ENOMEM;
        return NULL;
    }
    return mtr_real.memalign(page, rounded ? rounded : page);
}

static void *emu_calloc(size_t n, size_t m)
{
    size_t s;
    if (__builtin_mul_overflow(n, m, &s)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = mtr_real.malloc(s);
    if (p)
        memset(p, 0, s);
    return p;
}

static size_t emu_usable_size(void *p)
{
    (void)p;
    return 0;   /* the allocator cannot tell; 0 is what glibc says of NULL */
}

static void emu_free_sized(void *p, size_t size)
{
    (void)size;
    mtr_real.free(p);
}

static void emu_free_aligned_sized(void *p, size_t align, size_t size)
{
    (void)align;
    (void)size;
    mtr_real.free(p);
}

/* The image the allocator's malloc lives in. */
struct image_query {
    uintptr_t addr, lo, hi;
};

static __attribute__((unused)) int find_image(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct image_query *q = data;
    uintptr_t lo = (uintptr_t)-1, hi = 0;
    int hit = 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
        if (s < lo)
            lo = s;
        if (e > hi)
            hi = e;
        if (q->addr >= s && q->addr < e)
            hit = 1;
    }
    if (!hit)
        return 0;
    q->lo = lo;
    q->hi = hi;
    return 1;
}

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

/* A function of the allocator: defined next after us, in the same object
 * as its malloc. */
static void *lookup = RTLD_NEXT;   /* RTLD_DEFAULT when loaded by attach */

/* The definition the program's calls reach: the next one after us, or
 * (attached) the first one in the global scope, never a PLT stub. */
static void *next_def(const char *name)
{
    return lookup == RTLD_NEXT ? dlsym(RTLD_NEXT, name) : mtr_global_definition(name);
}

static void *same_object(const char *name, const void *base)
{
    void *f = next_def(name);
    Dl_info info;
    if (!f || !dladdr(f, &info) || info.dli_fbase != base)
        return NULL;
    return f;
}

#define STORE(field, value) __atomic_store_n(&mtr_real.field, (value), __ATOMIC_RELAXED)

static void resolve_now(void)
{
    void *m = next_def("malloc");
    Dl_info info, libc;
    if (!m || !dladdr(m, &info)) {
        /* No allocator after us, or one we cannot place: glibc's own. */
        STORE(malloc, __libc_malloc);
        STORE(calloc, __libc_calloc);
        STORE(realloc, __libc_realloc);
        STORE(free, __libc_free);
        raw_memalign = __libc_memalign;
        STORE(memalign, __libc_memalign);
        STORE(aligned_alloc, emu_aligned_alloc);
        STORE(posix_memalign, emu_posix_memalign);
        STORE(valloc, emu_valloc);
        STORE(pvalloc, emu_pvalloc);
        STORE(usable_size, emu_usable_size);
        STORE(free_sized, emu_free_sized);
        STORE(free_aligned_sized, emu_free_aligned_sized);
        return;
    }
    const void *base = info.dli_fbase;
    void *f;

    STORE(malloc, (void *(*)(size_t))m);
    f = same_object("calloc", base);
    STORE(calloc, f ? (void *(*)(size_t, size_t))f : emu_calloc);
    /* An allocator without its own realloc or free cannot be used without
     * us either; take the next definitions as the program would. */
    f = same_object("realloc", base);
    STORE(realloc, (void *(*)(void *, size_t))(f ? f : next_def("realloc")));
    f = same_object("free", base);
    STORE(free, (void (*)(void *))(f ? f : next_def("free")));

    raw_memalign = (void *(*)(size_t, size_t))same_object("memalign", base);
    raw_posix_memalign = (int (*)(void **, size_t, size_t))same_object("posix_memalign", base);
    raw_aligned_alloc = (void *(*)(size_t, size_t))same_object("aligned_alloc", base);
    STORE(memalign, raw_memalign ? raw_memalign : emu_memalign);
    STORE(posix_memalign, raw_posix_memalign ? raw_posix_memalign : emu_posix_memalign);
    STORE(aligned_alloc, raw_aligned_alloc ? raw_aligned_alloc : emu_aligned_alloc);
    f = same_object("valloc", base);
    STORE(valloc, f ? (void *(*)(size_t))f : emu_valloc);
    f = same_object("pvalloc", base);
    STORE(pvalloc, f ? (void *(*)(size_t))f : emu_pvalloc);
    f = same_object("malloc_usable_size", base);
    STORE(usable_size, f ? (size_t(*)(void *))f : emu_usable_size);
    f = same_object("free_sized", base);
    STORE(free_sized, f ? (void (*)(void *, size_t))f : emu_free_sized);
    f = same_object("free_aligned_sized", base);
    STORE(free_aligned_sized, f ? (void (*)(void *, size_t, size_t))f : emu_free_aligned_sized);

    /* Not the C library: remember its image.
     * (Under TSan the next allocator is TSan's, and dl_iterate_phdr is one
     * of its interceptors, not usable while TSan starts; mmap.c, the user
     * of the image, is off in sanitizer builds anyway.) */
#ifndef MT_UNDER_TSAN
    if (dladdr((void *)getpid, &libc) && libc.dli_fbase != base) {
        struct image_query q = { (uintptr_t)m, 0, 0 };
        if (dl_iterate_phdr(find_image, &q)) {
            mtr_real.image_lo = q.lo;
            mtr_real.image_hi = q.hi;
        }
    }
#else
    (void)libc;
#endif
}

void mtr_real_resolve(void)
{
    int expect = 0;
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == 2 || resolving_here)
        return;
    if (__atomic_compare_exchange_n(&state, &expect, 1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        int saved = errno;
        resolving_here = 1;
        resolve_now();
        resolving_here = 0;
        errno = saved;
        __atomic_store_n(&state, 2, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 2)
        sched_yield();   /* another thread resolves: a few dlsym calls */
}

int mtr_real_checked(void)
{
    void *const f[] = {
        (void *)mtr_real.malloc, (void *)mtr_real.calloc, (void *)mtr_real.realloc,
        (void *)mtr_real.free, (void *)mtr_real.memalign, (void *)mtr_real.aligned_alloc,
        (void *)mtr_real.posix_memalign, (void *)mtr_real.valloc, (void *)mtr_real.pvalloc,
        (void *)mtr_real.usable_size, (void *)mtr_real.free_sized,
        (void *)mtr_real.free_aligned_sized,
    };
    Dl_info self, info;
    if (!dladdr((void *)mtr_real_checked, &self))
        return -1;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (dladdr(f[i], &info) && info.dli_fbase == self.dli_fbase)
            continue;   /* an emulation of ours (it calls mtr_real) */
        if (!mtr_is_definition(f[i]))
            return -1;
    }
    return 0;
}

/* attach.c: this library was loaded by dlopen into a running process, so
 * nothing follows it in a lookup order; the program's allocator is the
 * first object of the global scope that defines malloc (defined.c: not
 * dlsym(RTLD_DEFAULT), which gives a non-PIE executable's own PLT stub).
 * Called before any call is redirected to the recorder (and again,
 * harmlessly, at a later attach). */
void mtr_real_resolve_global(void)
{
    mtr_real_resolve();
    if (lookup == RTLD_DEFAULT)
        return;
    int saved = errno;
    lookup = RTLD_DEFAULT;
    resolving_here = 1;
    resolve_now();
    resolving_here = 0;
    errno = saved;
}

/* ---------------------------------------------------------------------- */
/* The boot stubs                                                          */

static void *boot_malloc(size_t s)
{
    return ready() ? mtr_real.malloc(s) : boot_alloc(s, 16);
}

static void *boot_calloc(size_t n, size_t m)
{
    if (ready())
        return mtr_real.calloc(n, m);
    size_t s;
    return __builtin_mul_overflow(n, m, &s) ? NULL : boot_alloc(s, 16);   /* boot is zeroed */
}

static void *boot_realloc(void *p, size_t s)
{
    if (ready())
        return mtr_real.realloc(p, s);
    void *q = boot_alloc(s, 16);
    if (q && p) {
        size_t old = mtr_real_in_boot(p) ? mtr_real_boot_size(p) : 0;
        memcpy(q, p, old < s ? old : s);
    }
    return q;
}

static void boot_free(void *p)
{
    if (p && !mtr_real_in_boot(p) && ready())
        mtr_real.free(p);
}

static void *boot_memalign(size_t a, size_t s)
{
    if (ready())
        return mtr_real.memalign(a, s);
    size_t al = pow2_at_least(a, 16);
    return al ? boot_alloc(s, al) : NULL;
}

static void *boot_aligned_alloc(size_t a, size_t s)
{
    return ready() ? mtr_real.aligned_alloc(a, s) : boot_memalign(a, s);
}

static int boot_posix_memalign(void **out, size_t a, size_t s)
{
    if (ready())
        return mtr_real.posix_memalign(out, a, s);
    void *p = boot_memalign(a, s);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

static void *boot_valloc(size_t s)
{
    return ready() ? mtr_real.valloc(s) : boot_memalign((size_t)getpagesize(), s);
}

static void *boot_pvalloc(size_t s)
{
    return ready() ? mtr_real.pvalloc(s) : boot_memalign((size_t)getpagesize(), s);
}

static size_t boot_usable_size(void *p)
{
    if (mtr_real_in_boot(p))
        return mtr_real_boot_size(p);
    return ready() ? mtr_real.usable_size(p) : 0;
}

static void boot_free_sized(void *p, size_t s)
{
    if (p && !mtr_real_in_boot(p) && ready())
        mtr_real.free_sized(p, s);
}

static void boot_free_aligned_sized(void *p, size_t a, size_t s)
{
    if (p && !mtr_real_in_boot(p) && ready())
        mtr_real.free_aligned_sized(p, a, s);
}

struct mtr_allocator mtr_real = {
    boot_malloc, boot_calloc, boot_realloc, boot_free, boot_memalign, boot_aligned_alloc,
    boot_posix_memalign, boot_valloc, boot_pvalloc, boot_usable_size, boot_free_sized,
    boot_free_aligned_sized, 0, 0,
};
