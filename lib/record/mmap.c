/*
 * mmap.c - memory the program maps itself: mmap, mmap64, munmap and mremap
 * of anonymous memory, sampled per byte on the same countdown as malloc
 * (sampler.h, mtr_range_*), with their stacks.
 *
 * What counts: anonymous mappings (MAP_ANONYMOUS, private or shared) that
 * are not reservations of address space (PROT_NONE or MAP_NORESERVE), and
 * the bytes mremap adds to an anonymous mapping. File mappings, PROT_NONE reservations, brk/sbrk and raw
 * syscall(SYS_mmap) are not counted. glibc's malloc maps its large blocks
 * and arenas through libc-internal calls that never reach these entry
 * points, and another allocator's calls (jemalloc, tcmalloc ...) come from
 * its own image (real.h) and pass straight through, so malloc memory is
 * counted once, as malloc blocks.
 *
 * Memory committed later in a reservation: an anonymous PROT_NONE map the
 * program made is remembered as a reservation (a fixed table of ranges);
 * an mprotect that makes part of one writable commits those bytes, which
 * are sampled then as kind mmap from the mprotect's stack, after the points
 * already in that range are freed (a range committed again, a JIT's W^X
 * flips, is counted once); an mprotect back to PROT_NONE frees them. This
 * is how V8 grows its heap. glibc's own thread stacks and arenas use
 * libc-internal calls and are never seen here.
 *
 * Each sample point of a mapping is tracked on its own, at its byte (a
 * uniform random offset: the points of a Poisson process in a range are
 * independent and uniform). An unmap, a MAP_FIXED map over it or an mremap
 * shrink frees the points whose bytes go away; an mremap move moves them.
 * So partial unmaps are exact in expectation, and memory mapped before the
 * recorder started, having no points, is never freed by mistake.
 *
 * The points live in one sorted array (address order) under a spinlock,
 * in memory mapped with the raw system call; an empty table costs munmap
 * one load. The lock is a leaf: points leaving the table are reported to
 * the tracker after it is released. A thread already inside the recorder (a signal handler that
 * interrupted it, the writer thread, the recorder's own mappings) passes
 * straight through.
 *
 * Sanitizer builds of the recorder (ASan, TSan) leave these calls to the
 * sanitizer's own interceptors and sample no mappings.
 */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && !defined(MT_UNDER_TSAN)

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lock.h"
#include "own.h"
#include "sampler.h"
#include "mmap.h"
#include "real.h"
#include "unwind.h"

#define API __attribute__((visibility("default"))) MT_HOOK
/* Points are reported MAX_POINTS at a time, at most MAX_BATCHES times per
 * call; the last point then carries the rest. */
#define MAX_POINTS 256
#define MAX_BATCHES 64

struct point {
    uintptr_t addr;     /* the sampled byte */
    uintptr_t token;    /* tracker's token, 0 = not tracked */
    uint32_t gen;       /* sampler generation of the token */
};

static struct {
    struct point *v;
    size_t n, cap;
    int lock;
} tab;

/* ---------------------------------------------------------------------- */
/* The system calls underneath                                             */

static void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static int sys_munmap(void *addr, size_t len)
{
    return (int)syscall(SYS_munmap, addr, len);
}

static int sys_mprotect(void *addr, size_t len, int prot)
{
    return (int)syscall(SYS_mprotect, addr, len, prot);
}

static void *sys_mremap(void *old, size_t oldlen, size_t newlen, int flags, void *newaddr)
{
    return (void *)syscall(SYS_mremap, old, oldlen, newlen, flags, newaddr);
}

/* ---------------------------------------------------------------------- */
/* The table of points                                                     */

static void lock(void)
{
    mtr_lock(&tab.lock);
}

static void unlock(void)
{
    mtr_unlock(&tab.lock);
}

/* Index of the first point at or after addr. */
static size_t lower(uintptr_t addr)
{
    size_t lo = 0, hi = tab.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tab.v[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int insert(struct point p)
{
    if (tab.n == tab.cap) {
        size_t cap = tab.cap ? tab.cap * 2 : 4096 / sizeof(struct point);
        struct point *v = sys_mmap(NULL, cap * sizeof *v, PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (v == MAP_FAILED)
            return -1;
        mtr_own_add(v, cap * sizeof *v);
        if (tab.n)
            memcpy(v, tab.v, tab.n * sizeof *v);
        if (tab.v) {
            mtr_own_del(tab.v);
            sys_munmap(tab.v, tab.cap * sizeof *v);
        }
        tab.v = v;
        tab.cap = cap;
    }
    size_t i = lower(p.addr);
    memmove(tab.v + i + 1, tab.v + i, (tab.n - i) * sizeof *tab.v);
    tab.v[i] = p;
    __atomic_store_n(&tab.n, tab.n + 1, __ATOMIC_RELAXED);
    return 0;
}

/* Points taken out of the table under the lock, reported freed after it
 * is released: the table lock is a leaf (nothing is called while holding
 * it but system calls), so it can never be part of a lock cycle with the
 * tracker's own locks (the tracer's event queue, fork handlers). */
struct doomed {
    struct point *v;
    size_t n, cap;
    int mapped;
    struct point local[32];
};

static void doomed_init(struct doomed *d)
{
    d->v = d->local;
    d->n = 0;
    d->cap = sizeof d->local / sizeof d->local[0];
    d->mapped = 0;
}

static void doom(struct doomed *d, struct point p)
{
    if (d->n == d->cap) {
        size_t cap = d->cap * 4;
        struct point *v = sys_mmap(NULL, cap * sizeof *v, PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (v == MAP_FAILED)
            return;   /* out of memory: the point stays live in the trace */
        memcpy(v, d->v, d->n * sizeof *v);
        if (d->mapped)
            sys_munmap(d->v, d->cap * sizeof *v);
        d->v = v;
        d->cap = cap;
        d->mapped = 1;
    }
    d->v[d->n++] = p;
}

/* Report the doomed points freed. Lock not held. */
static void bury(struct doomed *d)
{
    for (size_t i = 0; i < d->n; i++)
        mtr_range_untrack(d->v[i].token, d->v[i].gen);
    if (d->mapped)
        sys_munmap(d->v, d->cap * sizeof *d->v);
    doomed_init(d);
}

/* Take every point in [lo, hi) out of the table into d. Lock held. */
static void remove_range(uintptr_t lo, uintptr_t hi, struct doomed *d)
{
    size_t i = lower(lo), j = i;
    while (j < tab.n && tab.v[j].addr < hi) {
        doom(d, tab.v[j]);
        j++;
    }
    if (j > i) {
        memmove(tab.v + i, tab.v + j, (tab.n - j) * sizeof *tab.v);
        __atomic_store_n(&tab.n, tab.n - (j - i), __ATOMIC_RELAXED);
    }
}

/* Points in [old, old+oldlen) now live at new: those within newlen move,
 * the others go to d. Lock held. */
static void move_range(uintptr_t old, size_t oldlen, uintptr_t new, size_t newlen,
                       struct doomed *d)
{
    for (;;) {
        size_t i = lower(old);
        if (i >= tab.n || tab.v[i].addr >= old + oldlen)
            return;
        struct point p = tab.v[i];
        memmove(tab.v + i, tab.v + i + 1, (tab.n - i - 1) * sizeof *tab.v);
        __atomic_store_n(&tab.n, tab.n - 1, __ATOMIC_RELAXED);
        uintptr_t off = p.addr - old;
        if (off < newlen) {
            p.addr = new + off;
            insert(p);   /* cannot fail: a slot was just freed */
        } else {
            doom(d, p);
        }
    }
}

static int table_empty(void)
{
    return __atomic_load_n(&tab.n, __ATOMIC_RELAXED) == 0;
}

/* ---------------------------------------------------------------------- */
/* Reservations (anonymous PROT_NONE maps), under the table's lock         */

#define MAX_RESV 1024
static struct { uintptr_t lo, hi; } resv[MAX_RESV];
static int n_resv;

static int resv_any(void)
{
    return __atomic_load_n(&n_resv, __ATOMIC_RELAXED) != 0;
}

/* 1 if [lo, hi) lies inside one reservation. Lock held. */
static int resv_holds(uintptr_t lo, uintptr_t hi)
{
    for (int i = 0; i < n_resv; i++)
        if (resv[i].lo <= lo && hi <= resv[i].hi)
            return 1;
    return 0;
}

/* [lo, hi) is no longer reserved (unmapped, or mapped over). Lock held. */
static void resv_cut(uintptr_t lo, uintptr_t hi)
{
    for (int i = 0; i < n_resv; i++) {
        if (resv[i].hi <= lo || hi <= resv[i].lo)
            continue;
        uintptr_t a = resv[i].lo, b = resv[i].hi;
        if (lo <= a && b <= hi) {            /* all of it */
            resv[i] = resv[n_resv - 1];
            __atomic_store_n(&n_resv, n_resv - 1, __ATOMIC_RELAXED);
            i--;
        } else if (lo <= a) {                /* its head */
            resv[i].lo = hi;
        } else if (b <= hi) {                /* its tail */
            resv[i].hi = lo;
        } else {                             /* its middle: two pieces */
            resv[i].hi = lo;
            if (n_resv < MAX_RESV) {
                resv[n_resv].lo = hi;
                resv[n_resv].hi = b;
                __atomic_store_n(&n_resv, n_resv + 1, __ATOMIC_RELAXED);
            }
        }
    }
}

/* [lo, hi) is a new reservation. Lock held. */
static void resv_add(uintptr_t lo, uintptr_t hi)
{
    if (resv_holds(lo, hi) || n_resv >= MAX_RESV)
        return;   /* full: later commits in it go unseen */
    resv[n_resv].lo = lo;
    resv[n_resv].hi = hi;
    __atomic_store_n(&n_resv, n_resv + 1, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------- */
/* Sampling new bytes                                                      */

/* 1 if the page at addr is anonymous memory (from /proc/self/maps: no
 * inode; a name in brackets other than a file is fine). Only asked for a
 * sampled mremap growth, so the cost is per sample, like a stack walk. */
static int is_anonymous(uintptr_t addr)
{
    char buf[4096];
    size_t have = 0;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int result = 0;
    for (;;) {
        ssize_t r = read(fd, buf + have, sizeof buf - 1 - have);
        if (r <= 0)
            break;
        have += (size_t)r;
        buf[have] = '\0';
        char *line = buf, *nl;
        while ((nl = memchr(line, '\n', have - (size_t)(line - buf))) != NULL) {
            *nl = '\0';
            unsigned long lo = 0, hi = 0, ino = 0;
            char *s = line;
            while (*s && *s != '-')
                lo = lo * 16 + (unsigned long)(*s <= '9' ? *s - '0' : (*s | 32) - 'a' + 10), s++;
            if (*s == '-')
                s++;
            while (*s && *s != ' ')
                hi = hi * 16 + (unsigned long)(*s <= '9' ? *s - '0' : (*s | 32) - 'a' + 10), s++;
            if (addr >= lo && addr < hi) {
                for (int field = 0; field < 3 && *s; field++) {   /* perms, offset, device */
                    while (*s == ' ')
                        s++;
                    while (*s && *s != ' ')
                        s++;
                }
                while (*s == ' ')
                    s++;
                while (*s >= '0' && *s <= '9')
                    ino = ino * 10 + (unsigned long)(*s++ - '0');
                while (*s == ' ')
                    s++;
                result = ino == 0 && (*s == '\0' || *s == '[');
                close(fd);
                return result;
            }
            line = nl + 1;
        }
        size_t rest = have - (size_t)(line - buf);
        memmove(buf, line, rest);
        have = rest;
        if (have >= sizeof buf - 1)
            have = 0;   /* a line longer than the buffer: drop it */
    }
    close(fd);
    return result;
}

/* size new bytes at base, already decided to hold n sample points (the
 * thread inside the recorder). Points are reported in batches of
 * MAX_POINTS (the stack is walked once per batch); past MAX_BATCHES
 * batches the last point carries the rest. */
static MT_HOOK void track(void *base, size_t size, uint64_t n, mt_alloc_kind kind)
{
    uint64_t offsets[MAX_POINTS];
    uintptr_t tokens[MAX_POINTS];
    for (int batch = 0; n > 0; batch++) {
        if (batch > 0)
            mtr_enter();   /* mtr_range_track left the recorder */
        uint64_t take = n;
        if (take > MAX_POINTS && batch < MAX_BATCHES - 1)
            take = MAX_POINTS;
        size_t k = take < MAX_POINTS ? (size_t)take : MAX_POINTS;
        uint32_t gen = mtr_range_track(base, size, take, k, kind, offsets, tokens);
        n -= take;
        struct doomed d;
        doomed_init(&d);
        mtr_enter();
        lock();
        for (size_t i = 0; i < k; i++) {
            if (!tokens[i])
                continue;
            struct point p = { (uintptr_t)base + offsets[i], tokens[i], gen };
            if (insert(p) != 0)
                doom(&d, p);   /* no memory for the table: reported freed at once */
        }
        unlock();
        bury(&d);
        mtr_leave();
    }
}

/* ---------------------------------------------------------------------- */
/* Entry points                                                            */

static MT_HOOK void *map(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    struct mtr_thread *t = &mtr_tls;
    void *p;
    if ((flags & MAP_FIXED) && !t->busy && (!table_empty() || resv_any())) {
        /* The new mapping replaces whatever was there. */
        struct doomed d;
        doomed_init(&d);
        mtr_enter();
        lock();
        p = sys_mmap(addr, len, prot, flags, fd, off);
        if (p != MAP_FAILED) {
            remove_range((uintptr_t)p, (uintptr_t)p + len, &d);
            resv_cut((uintptr_t)p, (uintptr_t)p + len);
        }
        unlock();
        bury(&d);
        mtr_leave();
    } else {
        p = sys_mmap(addr, len, prot, flags, fd, off);
    }
    if (t->busy && p != MAP_FAILED && (flags & MAP_ANONYMOUS) && len)
        mtr_own_add(p, len);   /* the recorder's own (its unwinder's): the ledger's */
    if (!t->busy && p != MAP_FAILED && (flags & MAP_ANONYMOUS) && prot == PROT_NONE && len) {
        size_t page = (size_t)getpagesize();
        mtr_enter();
        lock();
        resv_add((uintptr_t)p, (uintptr_t)p + ((len + page - 1) & ~(page - 1)));
        unlock();
        mtr_leave();
    }
    if (p == MAP_FAILED || !(flags & MAP_ANONYMOUS) || prot == PROT_NONE ||
        (flags & MAP_NORESERVE) || len == 0)
        return p;   /* not anonymous memory, or a reservation of address space */
    uint64_t n = mtr_range_decide(len);
    if (n) {
        int saved = errno;
        track(p, len, n, MT_ALLOC_MMAP);
        errno = saved;
    }
    return p;
}

/* A call from the allocator's own code (jemalloc, tcmalloc ... mapping
 * their heap through the PLT): that memory is counted as malloc blocks. */
static inline int from_allocator(const void *ret)
{
    return (uintptr_t)ret - mtr_real.image_lo < mtr_real.image_hi - mtr_real.image_lo;
}

API void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (from_allocator(__builtin_return_address(0)))
        return sys_mmap(addr, len, prot, flags, fd, off);
    return map(addr, len, prot, flags, fd, off);
}

API void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (from_allocator(__builtin_return_address(0)))
        return sys_mmap(addr, len, prot, flags, fd, off);
    return map(addr, len, prot, flags, fd, off);
}

API int munmap(void *addr, size_t len)
{
    struct mtr_thread *t = &mtr_tls;
    if (t->busy)
        mtr_own_del(addr);
    if (t->busy || (table_empty() && !resv_any()))
        return sys_munmap(addr, len);
    struct doomed d;
    doomed_init(&d);
    mtr_enter();
    lock();
    int rc = sys_munmap(addr, len);
    int saved = errno;
    if (rc == 0) {
        size_t page = (size_t)getpagesize();
        size_t whole = (len + page - 1) & ~(page - 1);   /* the kernel unmaps whole pages */
        remove_range((uintptr_t)addr, (uintptr_t)addr + whole, &d);
        resv_cut((uintptr_t)addr, (uintptr_t)addr + whole);
    }
    unlock();
    bury(&d);
    mtr_leave();
    errno = saved;
    return rc;
}

/* A commit in a reservation (PROT_NONE to writable) is sampled; a
 * decommit (back to PROT_NONE) frees the points there. Anything else, and
 * every call outside a reservation, only passes through. */
API int mprotect(void *addr, size_t len, int prot)
{
    struct mtr_thread *t = &mtr_tls;
    int rc = sys_mprotect(addr, len, prot);
    if (rc != 0 || t->busy || !resv_any() || len == 0 ||
        from_allocator(__builtin_return_address(0)) ||
        (prot != PROT_NONE && !(prot & PROT_WRITE)))
        return rc;
    int saved = errno;
    size_t page = (size_t)getpagesize();
    uintptr_t lo = (uintptr_t)addr, hi = lo + ((len + page - 1) & ~(page - 1));
    struct doomed d;
    doomed_init(&d);
    mtr_enter();
    lock();
    int inside = resv_holds(lo, hi);
    if (inside)
        remove_range(lo, hi, &d);   /* committed again, or decommitted: the old points go */
    unlock();
    bury(&d);
    mtr_leave();
    if (inside && prot != PROT_NONE) {
        uint64_t n = mtr_range_decide(hi - lo);
        if (n)
            track(addr, hi - lo, n, MT_ALLOC_MMAP);
    }
    errno = saved;
    return rc;
}

API void *mremap(void *old, size_t oldlen, size_t newlen, int flags, ...)
{
    struct mtr_thread *t = &mtr_tls;
    void *want = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        want = va_arg(ap, void *);
        va_end(ap);
    }
    if (t->busy || from_allocator(__builtin_return_address(0)))
        return sys_mremap(old, oldlen, newlen, flags, want);
    void *p;
    if (table_empty()) {
        p = sys_mremap(old, oldlen, newlen, flags, want);
    } else {
        size_t page = (size_t)getpagesize();
        uintptr_t o = (uintptr_t)old;
        size_t olen = (oldlen + page - 1) & ~(page - 1);
        size_t nlen = (newlen + page - 1) & ~(page - 1);
        struct doomed d;
        doomed_init(&d);
        mtr_enter();
        lock();
        p = sys_mremap(old, oldlen, newlen, flags, want);
        int saved = errno;
        if (p != MAP_FAILED && oldlen != 0) {
            uintptr_t q = (uintptr_t)p;
            if (q != o) {
                remove_range(q, q + nlen, &d);   /* MREMAP_FIXED replaced what was there */
                move_range(o, olen, q, nlen, &d);
            } else if (nlen < olen) {
                remove_range(o + nlen, o + olen, &d);
            }
        }
        unlock();
        bury(&d);
        mtr_leave();
        errno = saved;
    }
    if (p == MAP_FAILED || newlen <= oldlen || oldlen == 0)
        return p;
    int saved = errno;
    uint64_t n = mtr_range_decide(newlen - oldlen);
    if (n) {
        /* decide() entered the recorder: the maps check runs unsampled. */
        void *grown = (char *)p + oldlen;
        if (is_anonymous((uintptr_t)grown)) {
            track(grown, newlen - oldlen, n, MT_ALLOC_MREMAP);
        } else {
            mtr_leave();   /* a file mapping grew: not counted */
        }
    }
    errno = saved;
    return p;
}

/* ---------------------------------------------------------------------- */
/* fork                                                                    */

void mtr_mmap_fork_prepare(void)
{
    lock();
}

void mtr_mmap_fork_parent(void)
{
    unlock();
}

void mtr_mmap_fork_child(void)
{
    /* The parent's points are the parent's: the child starts empty. Its
     * reservations are its own too (the address space is copied). */
    tab.n = 0;
    unlock();
}

#else

#include "mmap.h"
#include "real.h"

void mtr_mmap_fork_prepare(void) {}
void mtr_mmap_fork_parent(void) {}
void mtr_mmap_fork_child(void) {}

#endif
