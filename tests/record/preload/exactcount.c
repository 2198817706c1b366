/*
 * exactcount.c - an exact reference for the recorder's estimates, built as
 * a preload library by tests/record/realacc.sh and loaded after the
 * recorder (LD_PRELOAD=libmemtrace.so:exactcount.so): the recorder passes
 * every request on to it unchanged, and it counts every one on its way to
 * glibc: bytes allocated (as the recorder counts them: malloc(0) is 1 byte,
 * realloc(p, s) frees p and allocates s), live bytes, their peak and the
 * time of the peak. At exit it writes
 *   EXACT allocs=<n> alloc=<bytes> peak=<bytes> live=<bytes>
 * to $EXACT_OUT.<pid>. glibc only (it calls __libc_malloc & co. directly).
 * What the loader allocates for the recorder at start passes through it too
 * (a few blocks: ARCHITECTURE.md); the recorder's own tables do not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

#define API __attribute__((visibility("default")))

struct slot {
    uintptr_t p;
    size_t size;
};

static struct slot *tab;
static size_t cap, used;
static int lock_word;
static uint64_t n_allocs, total, live, peak;

static void lock(void)
{
    while (__atomic_exchange_n(&lock_word, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}

static void unlock(void)
{
    __atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE);
}

static size_t home(uintptr_t p, size_t c)
{
    return (size_t)((p * 0x9e3779b97f4a7c15ULL) >> 20) & (c - 1);
}

static void put(struct slot *t, size_t c, uintptr_t p, size_t size)
{
    size_t i = home(p, c);
    while (t[i].p)
        i = (i + 1) & (c - 1);
    t[i].p = p;
    t[i].size = size;
}

static void grow(void)
{
    size_t nc = cap ? cap * 2 : (size_t)1 << 16;
    struct slot *nt = (struct slot *)syscall(SYS_mmap, NULL, nc * sizeof *nt, PROT_READ | PROT_WRITE,
                                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (nt == MAP_FAILED)
        abort();
    for (size_t i = 0; i < cap; i++)
        if (tab[i].p)
            put(nt, nc, tab[i].p, tab[i].size);
    if (tab)
        syscall(SYS_munmap, tab, cap * sizeof *tab);
    tab = nt;
    cap = nc;
}

static void added(void *p, size_t size)
{
    if (!p)
        return;
    size_t s = size ? size : 1;
    lock();
    if ((used + 1) * 2 > cap)
        grow();
    put(tab, cap, (uintptr_t)p, s);
    used++;
    n_allocs++;
    total += s;
    live += s;
    if (live > peak)
        peak = live;
    unlock();
}

static void removed(void *p)
{
    if (!p || !cap)
        return;
    lock();
    size_t i = home((uintptr_t)p, cap);
    while (tab[i].p && tab[i].p != (uintptr_t)p)
        i = (i + 1) & (cap - 1);
    if (tab[i].p) {
        live -= tab[i].size;
        used--;
        /* backward-shift deletion */
        size_t hole = i, j = i;
        for (;;) {
            j = (j + 1) & (cap - 1);
            if (!tab[j].p)
                break;
            size_t h = home(tab[j].p, cap);
            if (((j - h) & (cap - 1)) >= ((j - hole) & (cap - 1))) {
                tab[hole] = tab[j];
                hole = j;
            }
        }
        tab[hole].p = 0;
    }
    unlock();
}

API void *malloc(size_t s)
{
    void *p = __libc_malloc(s);
    added(p, s);
    return p;
}

API void *calloc(size_t n, size_t m)
{
    void *p = __libc_calloc(n, m);
    added(p, n * m);
    return p;
}

API void free(void *p)
{
    removed(p);
    __libc_free(p);
}

API void *realloc(void *p, size_t s)
{
    if (!p)
        return malloc(s);
    removed(p);
    void *q = __libc_realloc(p, s);
    if (q)
        added(q, s);
    else if (s)
        added(p, s);   /* failed: p lives on (its size is approximate) */
    return q;
}

API void *memalign(size_t a, size_t s)
{
    void *p = __libc_memalign(a, s);
    added(p, s);
    return p;
}

API void *aligned_alloc(size_t a, size_t s)
{
    return memalign(a, s);
}

API int posix_memalign(void **out, size_t a, size_t s)
{
    if (!a || a % sizeof(void *) || (a & (a - 1)))
        return EINVAL;
    void *p = memalign(a, s);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

API void *valloc(size_t s)
{
    return memalign((size_t)getpagesize(), s);
}

API void *pvalloc(size_t s)
{
    size_t pg = (size_t)getpagesize();
    return memalign(pg, (s + pg - 1) & ~(pg - 1));
}

__attribute__((destructor)) static void report(void)
{
    const char *out = getenv("EXACT_OUT");
    if (!out)
        return;
    char path[4096], line[256];
    snprintf(path, sizeof path, "%s.%d", out, (int)getpid());
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    lock();
    int n = snprintf(line, sizeof line, "EXACT allocs=%llu alloc=%llu peak=%llu live=%llu\n",
                     (unsigned long long)n_allocs, (unsigned long long)total,
                     (unsigned long long)peak, (unsigned long long)live);
    unlock();
    if (write(fd, line, (size_t)n) < 0) {
    }
    close(fd);
}
