/*
 * smaps.c - one pass over /proc/self/smaps, each mapping's Rss, Pss and
 * Swap added to its kind (smaps.h; docs/rss.md says what each kind holds):
 *   stack   [stack], and a thread stack: a private anonymous map right
 *           above a PROT_NONE guard map of at most GUARD_MAX, not at a
 *           64 MiB boundary (where glibc's arena heaps start, their
 *           reserve above them)
 *   mod     a loaded module: a file map that is executable or whose name
 *           is a shared object or the program, [vdso] and the like, and
 *           the part of an anonymous map inside a module's bss (its
 *           PT_LOAD segments' memory beyond their file, dl_iterate_phdr;
 *           the map's Rss split by the share of its bytes there)
 *   shm     shared maps of no file, /dev/shm, memfd, SysV segments,
 *           [anon_shmem:...]
 *   file    any other file map
 *   own     the recorder's library (its file maps, by its real path, and
 *           its bss): given back apart from mod
 *   anon    the rest: private anonymous maps and [heap] (brk, also alone)
 * The file is read in pieces into a static buffer (no allocation), so a
 * mapping is classified as its lines stream by.
 */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "smaps.h"

enum kind { K_ANON, K_BRK, K_STACK, K_MOD, K_FILE, K_SHM, K_OWN };

#define MAX_BSS 512

static struct {
    struct { uintptr_t lo, hi; int own; } bss[MAX_BSS];
    int n_bss;
    char buf[65536];
    char exe[4096];
    int have_exe;
} sm;

/* The largest PROT_NONE map taken for a thread stack's guard. */
#define GUARD_MAX (1u << 20)

struct vma {
    uintptr_t lo, hi;
    char perms[5];
    enum kind kind;
    int guard;      /* ---p of no file */
    double bss;     /* share of its bytes in a module's bss */
    enum kind bss_kind;
};

/* Every module's bss: memory of a PT_LOAD segment beyond its file part. */
static int note_bss(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    (void)ctx;
    long page = sysconf(_SC_PAGESIZE);
    /* the recorder's own library: the one this code is in */
    uintptr_t here = (uintptr_t)mtr_smaps_read;
    int own = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && here >= a && here < a + ph->p_memsz)
            own = 1;
    }
    for (int i = 0; i < info->dlpi_phnum && sm.n_bss < MAX_BSS; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || ph->p_memsz <= ph->p_filesz)
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr + ph->p_filesz;
        uintptr_t hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        lo = (lo + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);   /* the file's last page is the file map's */
        hi = (hi + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
        if (hi > lo) {
            sm.bss[sm.n_bss].lo = lo;
            sm.bss[sm.n_bss].hi = hi;
            sm.bss[sm.n_bss].own = own;
            sm.n_bss++;
        }
    }
    return 0;
}

/* The share of [lo, hi) inside a module's bss, and whose it is. */
static double in_bss(uintptr_t lo, uintptr_t hi, enum kind *kind)
{
    uintptr_t in = 0;
    *kind = K_MOD;
    for (int i = 0; i < sm.n_bss; i++) {
        uintptr_t a = lo > sm.bss[i].lo ? lo : sm.bss[i].lo;
        uintptr_t b = hi < sm.bss[i].hi ? hi : sm.bss[i].hi;
        if (b > a) {
            in += b - a;
            if (sm.bss[i].own)
                *kind = K_OWN;
        }
    }
    return hi > lo ? (double)in / (double)(hi - lo) : 0;
}

static int ends_with(const char *s, size_t n, const char *suf)
{
    size_t k = strlen(suf);
    return n >= k && memcmp(s + n - k, suf, k) == 0;
}

static int is_module_name(const char *path, size_t n)
{
    if (sm.have_exe && strlen(sm.exe) == n && memcmp(path, sm.exe, n) == 0)
        return 1;
    if (ends_with(path, n, ".so"))
        return 1;
    for (size_t i = 0; i + 4 <= n; i++)
        if (memcmp(path + i, ".so.", 4) == 0)
            return 1;
    return 0;
}

/* Classifies the mapping of header line s (NUL-terminated, no newline). */
static void classify(const char *s, const struct vma *prev, struct vma *v, const char *own_image)
{
    char *end;
    v->lo = (uintptr_t)strtoull(s, &end, 16);
    v->hi = *end == '-' ? (uintptr_t)strtoull(end + 1, &end, 16) : v->lo;
    while (*end == ' ')
        end++;
    memcpy(v->perms, end, 4);
    v->perms[4] = '\0';
    /* perms offset dev inode path */
    const char *p = end;
    for (int f = 0; f < 4 && *p; f++) {
        while (*p && *p != ' ')
            p++;
        while (*p == ' ')
            p++;
    }
    size_t n = strlen(p);
    int shared = v->perms[3] == 's';
    v->guard = 0;
    v->bss = 0;
    v->bss_kind = K_MOD;
    if (n == 0) {
        if (!shared)
            v->bss = in_bss(v->lo, v->hi, &v->bss_kind);
        if (shared)
            v->kind = K_SHM;
        else if (prev && prev->hi == v->lo && prev->guard && (v->lo & ((1u << 26) - 1)) != 0)
            v->kind = K_STACK;      /* a thread stack above its guard */
        else
            v->kind = K_ANON;
        /* a guard is a few pages (glibc: one); mimalloc leaves holes of
         * megabytes in its segments, PROT_NONE, below memory of its heap */
        v->guard = !shared && strcmp(v->perms, "---p") == 0 && v->hi - v->lo <= GUARD_MAX;
    } else if (p[0] == '[') {
        if (strcmp(p, "[heap]") == 0)
            v->kind = K_BRK;
        else if (strncmp(p, "[stack", 6) == 0)
            v->kind = K_STACK;
        else if (strncmp(p, "[anon_shmem:", 12) == 0)
            v->kind = K_SHM;
        else if (strncmp(p, "[anon:", 6) == 0)
            v->kind = shared ? K_SHM : K_ANON;
        else
            v->kind = K_MOD;        /* [vdso], [vvar], [vsyscall] */
    } else if (own_image && strcmp(p, own_image) == 0) {
        v->kind = K_OWN;
    } else if (strncmp(p, "/dev/shm/", 9) == 0 || strncmp(p, "/memfd:", 7) == 0 ||
               strncmp(p, "/SYSV", 5) == 0 || (shared && strncmp(p, "/dev/zero", 9) == 0)) {
        v->kind = K_SHM;
    } else if (!shared && (v->perms[2] == 'x' || is_module_name(p, n))) {
        v->kind = K_MOD;
    } else {
        v->kind = K_FILE;
    }
}

/* "Key:   N kB" -> bytes, when the line starts with key. */
static int kb_field(const char *s, const char *key, long long *out)
{
    size_t k = strlen(key);
    if (strncmp(s, key, k) != 0)
        return 0;
    *out = strtoll(s + k, NULL, 10) * 1024;
    return 1;
}

static int is_header(const char *s)
{
    const char *p = s;
    while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))
        p++;
    return p > s && *p == '-';
}

int mtr_smaps_read(mt_rssf_ledger *l, const char *own_image, long long *own_image_rss)
{
    if (!sm.have_exe) {
        ssize_t n = readlink("/proc/self/exe", sm.exe, sizeof sm.exe - 1);
        sm.exe[n > 0 ? n : 0] = '\0';
        sm.have_exe = 1;
    }
    sm.n_bss = 0;
    dl_iterate_phdr(note_bss, NULL);
    int fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    long long by[K_OWN + 1] = {0}, pss = 0, swap = 0, v;
    struct vma cur = {0}, prev = {0};
    int have = 0, have_prev = 0;
    size_t fill = 0;
    for (;;) {
        ssize_t got = read(fd, sm.buf + fill, sizeof sm.buf - 1 - fill);
        if (got < 0) {
            close(fd);
            return -1;
        }
        fill += (size_t)got;
        sm.buf[fill] = '\0';
        char *line = sm.buf;
        for (;;) {
            char *nl = strchr(line, '\n');
            if (!nl)
                break;
            *nl = '\0';
            if (is_header(line)) {
                if (have) {
                    prev = cur;
                    have_prev = 1;
                }
                classify(line, have_prev ? &prev : NULL, &cur, own_image);
                have = 1;
            } else if (have && kb_field(line, "Rss:", &v)) {
                long long b = (long long)((double)v * cur.bss + 0.5) & ~1023LL;
                by[cur.bss_kind] += b;
                by[cur.kind] += v - b;
            } else if (have && kb_field(line, "Pss:", &v)) {
                pss += v;
            } else if (have && kb_field(line, "Swap:", &v)) {
                swap += v;
            }
            line = nl + 1;
        }
        size_t rest = fill - (size_t)(line - sm.buf);
        if (got == 0 || (rest == sizeof sm.buf - 1))
            break;   /* the end (or a line longer than the buffer: stop) */
        memmove(sm.buf, line, rest);
        fill = rest;
    }
    close(fd);
    l->anon = by[K_ANON] + by[K_BRK];
    l->brk = by[K_BRK];
    l->stack = by[K_STACK];
    l->mod = by[K_MOD];
    l->file = by[K_FILE];
    l->shm = by[K_SHM];
    l->pss = pss;
    l->swap = swap;
    l->rss = l->anon + l->stack + l->mod + l->file + l->shm + by[K_OWN];
    *own_image_rss = by[K_OWN];
    return 0;
}
