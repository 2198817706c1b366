/*
 * leakproc.c - what the leak scan reads of the process, without the
 * program's allocator: the mappings (/proc/self/maps), the threads
 * (/proc/self/task), the recorder's own threads; and the scan's own memory
 * (raw mmap, remembered so that it is never taken for a root), and a sort.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "leaks.h"

#define MAX_OWN 64
#define MAX_OWN_THREADS 8

static struct { uintptr_t lo, hi; } own[MAX_OWN];
static int own_lock;

void *mtr_lk_alloc(size_t len)
{
    len = (len + 4095) & ~(size_t)4095;
    void *p = (void *)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    while (__atomic_exchange_n(&own_lock, 1, __ATOMIC_ACQUIRE))
        ;
    int i;
    for (i = 0; i < MAX_OWN && own[i].lo; i++)
        ;
    if (i < MAX_OWN) {
        own[i].lo = (uintptr_t)p;
        own[i].hi = (uintptr_t)p + len;
    }
    __atomic_store_n(&own_lock, 0, __ATOMIC_RELEASE);
    if (i == MAX_OWN) {   /* could not be remembered: not usable */
        syscall(SYS_munmap, p, len);
        return NULL;
    }
    return p;
}

void mtr_lk_free(void *p, size_t len)
{
    if (!p)
        return;
    len = (len + 4095) & ~(size_t)4095;
    syscall(SYS_munmap, p, len);
    while (__atomic_exchange_n(&own_lock, 1, __ATOMIC_ACQUIRE))
        ;
    for (int i = 0; i < MAX_OWN; i++)
        if (own[i].lo == (uintptr_t)p)
            own[i].lo = own[i].hi = 0;
    __atomic_store_n(&own_lock, 0, __ATOMIC_RELEASE);
}

void mtr_lk_own_ranges(void (*fn)(void *ctx, uintptr_t lo, uintptr_t hi), void *ctx)
{
    for (int i = 0; i < MAX_OWN; i++)
        if (own[i].lo)
            fn(ctx, own[i].lo, own[i].hi);
}

/* ---- the recorder's threads ---- */

static struct { pid_t tid; uintptr_t addr; } own_threads[MAX_OWN_THREADS];
static unsigned n_own_threads;
static int own_coming;

void mtr_leaks_own_thread_coming(int delta)
{
    __atomic_add_fetch(&own_coming, delta, __ATOMIC_ACQ_REL);
}

void mtr_leaks_fork_child(void)
{
    memset(own_threads, 0, sizeof own_threads);
    n_own_threads = 0;
    own_coming = 0;
}

int mtr_lk_own_threads_coming(void)
{
    return __atomic_load_n(&own_coming, __ATOMIC_ACQUIRE) > 0;
}

void mtr_leaks_own_thread(void)
{
    int here;
    pid_t tid = (pid_t)syscall(SYS_gettid);
    unsigned k = __atomic_fetch_add(&n_own_threads, 1, __ATOMIC_ACQ_REL);
    if (k >= MAX_OWN_THREADS) {   /* a ring: the oldest have ended */
        k %= MAX_OWN_THREADS;
    }
    own_threads[k].addr = (uintptr_t)&here;
    __atomic_store_n(&own_threads[k].tid, tid, __ATOMIC_RELEASE);
    if (__atomic_load_n(&own_coming, __ATOMIC_ACQUIRE) > 0)
        __atomic_sub_fetch(&own_coming, 1, __ATOMIC_ACQ_REL);
}

size_t mtr_lk_own_threads(pid_t *tids, uintptr_t *stack_addrs, size_t cap)
{
    size_t n = 0;
    for (unsigned i = 0; i < MAX_OWN_THREADS && n < cap; i++) {
        pid_t t = __atomic_load_n(&own_threads[i].tid, __ATOMIC_ACQUIRE);
        if (t > 0) {
            tids[n] = t;
            stack_addrs[n++] = own_threads[i].addr;
        }
    }
    return n;
}

/* ---- /proc ---- */

/* The whole of a /proc file, in *buf (mtr_lk_alloc'd, *cap bytes). */
static ssize_t slurp(const char *path, char **buf, size_t *cap)
{
    for (size_t want = 1 << 20;; want *= 2) {
        char *b = mtr_lk_alloc(want);
        if (!b)
            return -1;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            mtr_lk_free(b, want);
            return -1;
        }
        size_t n = 0;
        ssize_t r;
        while (n < want && (r = read(fd, b + n, want - n)) != 0) {
            if (r < 0) {
                if (errno == EINTR)
                    continue;
                close(fd);
                mtr_lk_free(b, want);
                return -1;
            }
            n += (size_t)r;
        }
        close(fd);
        if (n < want) {
            *buf = b;
            *cap = want;
            return (ssize_t)n;
        }
        mtr_lk_free(b, want);
        if (want >= ((size_t)1 << 32)) {
            errno = EFBIG;
            return -1;
        }
    }
}

static uintptr_t hex(const char **p)
{
    uintptr_t v = 0;
    for (;; (*p)++) {
        char c = **p;
        if (c >= '0' && c <= '9')
            v = v * 16 + (uintptr_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v = v * 16 + (uintptr_t)(c - 'a' + 10);
        else
            return v;
    }
}

static const char *skip_field(const char *p, const char *end)
{
    while (p < end && *p != ' ' && *p != '\n')
        p++;
    while (p < end && *p == ' ')
        p++;
    return p;
}

int mtr_lk_maps_read(struct mtr_lk_maps *m)
{
    char *buf;
    size_t cap;
    ssize_t len = slurp("/proc/self/maps", &buf, &cap);
    if (len < 0)
        return -1;
    size_t lines = 1;
    for (ssize_t i = 0; i < len; i++)
        lines += buf[i] == '\n';
    m->bytes = lines * sizeof *m->v;
    m->v = mtr_lk_alloc(m->bytes);
    m->n = 0;
    if (!m->v) {
        mtr_lk_free(buf, cap);
        return -1;
    }
    const char *p = buf, *end = buf + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        struct mtr_lk_map *x = &m->v[m->n];
        x->lo = hex(&p);
        if (*p == '-')
            p++;
        x->hi = hex(&p);
        p = skip_field(p, eol);
        x->r = p + 1 < eol && p[0] == 'r';
        x->w = p + 2 < eol && p[1] == 'w';
        p = skip_field(p, eol);   /* perms */
        p = skip_field(p, eol);   /* offset */
        p = skip_field(p, eol);   /* device */
        const char *ino = p;
        p = skip_field(p, eol);   /* inode */
        x->anon = ino < eol && ino[0] == '0' && (ino[1] == ' ' || ino + 1 == eol || ino[1] == '\n');
        size_t plen = (size_t)(eol - p);
        x->kind = MTR_LK_PLAIN;
        if (plen >= 6 && !memcmp(p, "[heap]", 6))
            x->kind = MTR_LK_HEAP;
        else if (plen >= 7 && !memcmp(p, "[stack]", 7))
            x->kind = MTR_LK_STACK;
        else if (plen >= 1 && p[0] == '[' && !(plen >= 6 && !memcmp(p, "[anon:", 6)))
            x->kind = MTR_LK_SPECIAL;   /* [vvar], [vdso], [vsyscall], [uprobes] */
        else if (plen >= 5 && !memcmp(p, "/dev/", 5) &&
                 !(plen >= 9 && !memcmp(p, "/dev/zero", 9)) &&
                 !(plen >= 9 && !memcmp(p, "/dev/shm/", 9)))
            x->kind = MTR_LK_DEVICE;    /* reading it may do something */
        if (x->hi > x->lo)
            m->n++;
        p = eol + 1;
    }
    mtr_lk_free(buf, cap);
    return 0;
}

void mtr_lk_maps_free(struct mtr_lk_maps *m)
{
    mtr_lk_free(m->v, m->bytes);
    m->v = NULL;
    m->n = 0;
}

struct dirent64_raw {
    uint64_t ino;
    int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[];
};

/* Calls fn(dirfd, name, ctx) for each entry of dir whose name starts with
 * a digit (tasks, descriptors), until fn returns nonzero; with getdents64
 * into a stack buffer, not the allocator (readdir may malloc). Returns
 * what fn returned last (0 when it never stopped), -1 when dir cannot be
 * opened. */
static int each_numbered(const char *dir, int (*fn)(int dirfd, const char *name, void *ctx),
                         void *ctx)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[4096] __attribute__((aligned(8)));
    int rc = 0;
    while (!rc) {
        long r = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        for (long off = 0; off < r && !rc;) {
            struct dirent64_raw *d = (struct dirent64_raw *)(buf + off);
            off += d->reclen;
            if (d->name[0] >= '0' && d->name[0] <= '9')
                rc = fn(fd, d->name, ctx);
        }
    }
    close(fd);
    return rc;
}

struct tid_list {
    pid_t *tids;
    size_t n, cap;
};

static int add_tid(int dirfd, const char *s, void *ctx)
{
    struct tid_list *l = ctx;
    long t = 0;
    (void)dirfd;
    while (*s >= '0' && *s <= '9')
        t = t * 10 + (*s++ - '0');
    if (l->n < l->cap)
        l->tids[l->n++] = (pid_t)t;
    return 0;
}

long mtr_lk_tasks_of(const char *dir, pid_t *tids, size_t cap)
{
    struct tid_list l = {tids, 0, cap};
    if (each_numbered(dir, add_tid, &l) < 0)
        return -1;
    return (long)l.n;
}

long mtr_lk_tasks(pid_t *tids, size_t cap)
{
    return mtr_lk_tasks_of("/proc/self/task", tids, cap);
}

ssize_t mtr_proc_read(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    return n;
}

int mtr_lk_status_field(const char *path, const char *key, char *buf, size_t cap,
                        const char **value)
{
    if (mtr_proc_read(path, buf, cap) < 0)
        return -1;
    size_t k = strlen(key);
    const char *p = buf;
    while (p && strncmp(p, key, k) != 0) {
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    if (!p)
        return 0;
    for (p += k; *p == ' ' || *p == '\t'; p++)
        ;
    *value = p;
    return 1;
}

static int is_userfaultfd(int dirfd, const char *name, void *ctx)
{
    char link[64];
    (void)ctx;
    ssize_t n = readlinkat(dirfd, name, link, sizeof link - 1);
    if (n <= 0)
        return 0;
    link[n] = 0;
    return strstr(link, "userfaultfd") != NULL;
}

/* 1 if the process has a userfaultfd: reading a page it manages would wait
 * for its handler thread, which the scan has stopped. */
int mtr_lk_has_userfaultfd(void)
{
    return each_numbered("/proc/self/fd", is_userfaultfd, NULL) == 1;
}

/* ---- a sort without the allocator ---- */

static void swap_rec(uintptr_t *v, size_t i, size_t j, size_t w)
{
    for (size_t k = 0; k < w; k++) {
        uintptr_t t = v[i * w + k];
        v[i * w + k] = v[j * w + k];
        v[j * w + k] = t;
    }
}

static void sift(uintptr_t *v, size_t i, size_t n, size_t w)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && v[(c + 1) * w] > v[c * w])
            c++;
        if (v[c * w] <= v[i * w])
            return;
        swap_rec(v, i, c, w);
        i = c;
    }
}

void mtr_lk_sort(uintptr_t *v, size_t n, size_t words)
{
    for (size_t i = n / 2; i-- > 0;)
        sift(v, i, n, words);
    for (size_t e = n; e > 1; e--) {
        swap_rec(v, 0, e - 1, words);
        sift(v, 0, e - 1, words);
    }
}
