/*
 * modules.c - the loaded modules: return address -> raw frame "module+0xoffset" (rawframe.h),
 * in the writer thread.
 *
 * The profiled process only learns which loaded module holds an address:
 * a table of the modules' executable segments, built from dl_iterate_phdr
 * and sorted by address, searched by bisection. It is rebuilt when the
 * loader's count of loads and unloads changed or an address falls outside
 * every segment. Nothing is read from disk but a module's size (stat) when
 * it has no build-id, and its real path; no debug information is loaded,
 * so the program's link map, memory and descriptors stay its own. Function
 * names, files, lines and inlined frames come later, outside the process
 * (`memtrace symbolize`, lib/symbolize/).
 *
 * Results are cached per address (the writer asks again whenever a code
 * falls out of its backtrace cache).
 */
#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "ownheap.h"
#include "sort.h"
#include "rawframe.h"
#include "modules.h"
#include "thread.h"
#include "vec.h"

struct module {
    char *path;          /* absolute */
    const char *base;    /* its last component */
    uintptr_t bias;      /* load bias (dlpi_addr) */
    uint32_t fp;         /* fingerprint, 0 = unknown */
};

struct segment {
    uintptr_t lo, hi;    /* executable PT_LOAD, [lo, hi) */
    size_t module;
};

struct entry {
    mt_location_code code;   /* 0 = empty slot */
    mt_location loc;
    int known;
};

struct mtr_modules {
    struct module *mods;
    size_t nmods, capmods;
    struct segment *segs;
    size_t nsegs, capsegs;
    char **paths;                /* interned module paths */
    size_t npaths, cappaths;
    unsigned long long loads;    /* dlpi_adds + dlpi_subs at the last scan */
    struct entry *table;
    size_t cap, used;
};

/* ------------------------------------------------------------ modules */

static int count_loads(struct dl_phdr_info *info, size_t size, void *data)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        *(unsigned long long *)data = info->dlpi_adds + info->dlpi_subs;
    return 1;
}

static unsigned long long loads_now(void)
{
    unsigned long long n = 0;
    dl_iterate_phdr(count_loads, &n);
    return n;
}

/* The GNU build-id of a loaded module, from its PT_NOTE segments in memory. */
static size_t build_id(const struct dl_phdr_info *info, const unsigned char **out)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        const unsigned char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            size_t nsz = (nh->n_namesz + 3) & ~(size_t)3;
            size_t dsz = (nh->n_descsz + 3) & ~(size_t)3;
            const unsigned char *name = p + sizeof *nh;
            if (name + nsz + dsz > end)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                memcmp(name, "GNU", 4) == 0 && nh->n_descsz > 0) {
                *out = name + nsz;
                return nh->n_descsz;
            }
            p = name + nsz + dsz;
        }
    }
    return 0;
}

static char *intern(mtr_modules *s, const char *path)
{
    for (size_t i = 0; i < s->npaths; i++)
        if (strcmp(s->paths[i], path) == 0)
            return s->paths[i];
    if (MT_VEC_ROOM_IN(mtr_heap_realloc, s->paths, s->npaths, s->cappaths, 64) < 0)
        return NULL;
    char *c = mtr_heap_strdup(path);
    if (c)
        s->paths[s->npaths++] = c;
    return c;
}

static int add_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    mtr_modules *s = data;
    char path[PATH_MAX];
    const char *name = info->dlpi_name;
    if (!name || !*name) {
        /* The executable (the first object listed) or the vDSO without a name. */
        if (s->nmods != 0)
            return 0;
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n <= 0)
            return 0;
        path[n] = '\0';
    } else if (!realpath(name, path)) {
        snprintf(path, sizeof path, "%s", name);
    }
    if (path[0] != '/')
        return 0;   /* "linux-vdso.so.1": no file to read later */
    if (MT_VEC_ROOM_IN(mtr_heap_realloc, s->mods, s->nmods, s->capmods, 64) < 0)
        return 1;
    struct module *m = &s->mods[s->nmods];
    m->path = intern(s, path);
    if (!m->path)
        return 1;
    m->base = strrchr(m->path, '/') + 1;
    m->bias = info->dlpi_addr;
    const unsigned char *id = NULL;
    size_t idlen = build_id(info, &id);
    struct stat st;
    if (idlen)
        m->fp = mt_raw_fingerprint(id, idlen, 0);
    else
        m->fp = stat(m->path, &st) == 0 ? mt_raw_fingerprint(NULL, 0, (uint64_t)st.st_size) : 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        if (MT_VEC_ROOM_IN(mtr_heap_realloc, s->segs, s->nsegs, s->capsegs, 64) < 0)
            return 1;
        s->segs[s->nsegs++] = (struct segment){ info->dlpi_addr + ph->p_vaddr,
                                                info->dlpi_addr + ph->p_vaddr + ph->p_memsz,
                                                s->nmods };
    }
    s->nmods++;
    return 0;
}

static int by_lo(const void *a, const void *b)
{
    const struct segment *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Rebuilds the tables. Paths are interned for the module table's lifetime:
 * cached locations point at them, and a library loaded again and again
 * costs one string. */
static void scan(mtr_modules *s)
{
    s->loads = loads_now();
    s->nmods = 0;
    s->nsegs = 0;
    dl_iterate_phdr(add_module, s);
    mtr_sort(s->segs, s->nsegs, sizeof *s->segs, by_lo);
}

static const struct module *find(mtr_modules *s, uintptr_t pc)
{
    size_t lo = 0, hi = s->nsegs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->segs[mid].lo <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || pc >= s->segs[lo - 1].hi)
        return NULL;
    MT_ASSERT(s->segs[lo - 1].lo <= pc && s->segs[lo - 1].module < s->nmods);
    return &s->mods[s->segs[lo - 1].module];
}

mtr_modules *mtr_modules_new(void)
{
    mtr_modules *s = mtr_heap_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    scan(s);
    return s;
}

/* ------------------------------------------------------------ cache */

static struct entry *slot(mtr_modules *s, mt_location_code code)
{
    MT_ASSERT(s->cap != 0 && (s->cap & (s->cap - 1)) == 0 && s->used < s->cap);
    size_t i = (size_t)((code * 0x9e3779b97f4a7c15ULL) >> 20) & (s->cap - 1);
    while (s->table[i].code && s->table[i].code != code)
        i = (i + 1) & (s->cap - 1);
    return &s->table[i];
}

static int grow(mtr_modules *s)
{
    size_t ocap = s->cap;
    struct entry *old = s->table;
    size_t ncap = ocap ? ocap * 2 : 1024;
    struct entry *t = mtr_heap_calloc(ncap, sizeof *t);
    if (!t)
        return -1;
    s->table = t;
    s->cap = ncap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].code)
            *slot(s, old[i].code) = old[i];
    mtr_heap_free(old);
    return 0;
}

static int describe(mtr_modules *s, uintptr_t pc, mt_location *loc)
{
    /* The call instruction lies before the return address: look up pc - 1
     * (a call at the very end of a segment returns just past it). */
    const struct module *m = find(s, pc - 1);
    if (!m && loads_now() != s->loads) {
        scan(s);   /* a library loaded or unloaded since the last scan */
        m = find(s, pc - 1);
    }
    if (!m)
        return -1;
    char buf[PATH_MAX + 32];
    snprintf(buf, sizeof buf, "%s+0x%llx", m->base, (unsigned long long)(pc - m->bias));
    char *name = mtr_heap_strdup(buf);
    if (!name)
        return -1;
    loc->filename = m->path;
    loc->defname = name;
    loc->line = 0;
    mt_raw_fingerprint_split(m->fp, &loc->start_char, &loc->end_char);
    return 0;
}

int mtr_modules_resolve(void *ctx, mt_location_code code, const mt_location **locs, size_t *n)
{
    mtr_modules *s = ctx;
    MT_ASSERT(mtr_tls.busy > 0);   /* recorder code: what it allocates is never sampled */
    if (!s || code == 0)
        return -1;
    if ((s->used + 1) * 2 > s->cap && grow(s) != 0)
        return -1;
    struct entry *e = slot(s, code);
    if (!e->code) {
        e->code = code;
        e->known = describe(s, (uintptr_t)code, &e->loc) == 0;
        s->used++;
    }
    if (!e->known)
        return -1;
    *locs = &e->loc;
    *n = 1;
    return 0;
}
