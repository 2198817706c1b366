/*
 * modules.c - the loaded modules: return address -> raw frame "module+0xoffset" (rawframe.h),
 * in the writer thread.
 *
 * The profiled process only learns which loaded module holds an address:
 * a table of the modules' executable segments, built from dl_iterate_phdr
 * and sorted by address, searched by bisection. It is rebuilt when the
 * loader's count of loads and unloads changed (checked after each dlclose,
 * and for an address outside every segment). Nothing is read from disk
 * but a module's size (stat) when it has no build-id, and its real path;
 * no debug information is loaded,
 * so the program's link map, memory and descriptors stay its own. Function
 * names, files, lines and inlined frames come later, outside the process
 * (`memtrace symbolize`, lib/symbolize/).
 *
 * Results are cached per code (the writer asks again whenever a code
 * falls out of its backtrace cache).
 *
 * Codes: a trace may describe a code only once (a code described again must
 * say the same), so a library unloaded and another (or the same one) loaded
 * at its place must not reuse the first one's codes. Each scan compares the
 * executable segments with the previous scan's; a segment gone since is
 * retired, which counts one more unload for every address it covered. A
 * return address's code is the address with that count in bits 48..62
 * (plain address while the count is 0, as in every trace without such a
 * reload); the dlclose wrapper makes the writer scan before it turns the
 * next record's addresses into codes (mtr_modules_unloaded). The count
 * stops at 0x7fff: from there, a range keeps its last code. A process with
 * a module above 2^48 keeps plain addresses as codes throughout.
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
    const char *path;    /* interned: with bias, what identifies a load */
    uintptr_t bias;
};

/* From `at` up to the next mark, addresses were unloaded `count` times. */
struct mark {
    uintptr_t at;
    uint32_t count;
};

#define COUNT_SHIFT 48
#define COUNT_MAX 0x7fffu
#define ADDR_MASK ((UINT64_C(1) << COUNT_SHIFT) - 1)

static unsigned long unloads;   /* dlclose calls, bumped after the real one */

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
    struct segment *prev;        /* the previous scan's, to see what went */
    size_t nprev, capprev;
    struct mark *marks;          /* sorted by at; none: every code is its address */
    size_t nmarks, capmarks;
    int wide;                    /* a module above 2^48: codes stay addresses */
    unsigned long seen_unloads;  /* `unloads` at the last scan */
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
                                                s->nmods, m->path, m->bias };
        if ((s->segs[s->nsegs - 1].hi - 1) >> COUNT_SHIFT)
            s->wide = 1;
    }
    s->nmods++;
    return 0;
}

static int by_lo(const void *a, const void *b)
{
    const struct segment *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* ------------------------------------------------------------ unloads */

/* The number of marks at or below addr. */
static size_t marks_upto(const mtr_modules *s, uintptr_t addr)
{
    size_t lo = 0, hi = s->nmarks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->marks[mid].at <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A mark at addr, carrying the count in force there. */
static int split_at(mtr_modules *s, uintptr_t addr)
{
    size_t i = marks_upto(s, addr);
    if (i > 0 && s->marks[i - 1].at == addr)
        return 0;
    if (MT_VEC_ROOM_IN(mtr_heap_realloc, s->marks, s->nmarks, s->capmarks, 16) < 0)
        return -1;
    memmove(&s->marks[i + 1], &s->marks[i], (s->nmarks - i) * sizeof *s->marks);
    s->marks[i] = (struct mark){ addr, i > 0 ? s->marks[i - 1].count : 0 };
    s->nmarks++;
    return 0;
}

/* [lo, hi) was unloaded: its addresses get codes not used before. (Out of
 * memory, they keep their codes: the old library's names may then stay.) */
static void retire(mtr_modules *s, uintptr_t lo, uintptr_t hi)
{
    if (s->wide || split_at(s, lo) != 0 || split_at(s, hi) != 0)
        return;
    for (size_t i = marks_upto(s, lo) - 1; i < s->nmarks && s->marks[i].at < hi; i++)
        if (s->marks[i].count < COUNT_MAX)
            s->marks[i].count++;
}

static int same_load(const struct segment *a, const struct segment *b)
{
    return a->lo == b->lo && a->hi == b->hi && a->path == b->path && a->bias == b->bias;
}

/* Retires each segment of the previous scan that this one lacks. */
static void retire_gone(mtr_modules *s)
{
    for (size_t i = 0; i < s->nprev; i++) {
        const struct segment *g = &s->prev[i];
        size_t lo = 0, hi = s->nsegs;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (s->segs[mid].lo < g->lo)
                lo = mid + 1;
            else
                hi = mid;
        }
        int kept = 0;
        for (size_t j = lo; j < s->nsegs && s->segs[j].lo == g->lo && !kept; j++)
            kept = same_load(&s->segs[j], g);
        if (!kept)
            retire(s, g->lo, g->hi);
    }
}

/* Rebuilds the tables. Paths are interned for the module table's lifetime:
 * cached locations point at them, and a library loaded again and again
 * costs one string. */
static void scan(mtr_modules *s)
{
    struct segment *t = s->prev;
    size_t tcap = s->capprev;
    s->prev = s->segs;
    s->capprev = s->capsegs;
    s->nprev = s->nsegs;
    s->segs = t;
    s->capsegs = tcap;
    s->seen_unloads = __atomic_load_n(&unloads, __ATOMIC_ACQUIRE);
    s->loads = loads_now();
    s->nmods = 0;
    s->nsegs = 0;
    dl_iterate_phdr(add_module, s);
    mtr_sort(s->segs, s->nsegs, sizeof *s->segs, by_lo);
    retire_gone(s);
}

void mtr_modules_unloaded(void)
{
    __atomic_add_fetch(&unloads, 1, __ATOMIC_RELEASE);
}

void mtr_modules_codes(mtr_modules *s, const uint64_t *frames, size_t n, uint64_t *out)
{
    if (s && __atomic_load_n(&unloads, __ATOMIC_ACQUIRE) != s->seen_unloads)
        scan(s);   /* a dlclose since: retire what went before coding what came */
    for (size_t i = 0; i < n; i++) {
        uint64_t pc = frames[n - 1 - i];
        if (s && s->nmarks && pc > 4096 && !(pc >> COUNT_SHIFT)) {
            size_t k = marks_upto(s, (uintptr_t)pc - 1);
            if (k > 0)
                pc |= (uint64_t)s->marks[k - 1].count << COUNT_SHIFT;
        }
        out[i] = pc;
    }
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

/* The module that held code's address when the code was made, or NULL: none,
 * or it went since (the code's count of unloads is no longer its range's). */
static const struct module *module_of(mtr_modules *s, uint64_t code, uintptr_t *pc)
{
    *pc = (uintptr_t)code;
    if (s->nmarks && !s->wide) {
        *pc = (uintptr_t)(code & ADDR_MASK);
        size_t k = marks_upto(s, *pc - 1);
        if (code >> COUNT_SHIFT != (k > 0 ? s->marks[k - 1].count : 0))
            return NULL;   /* no name rather than the next library's */
    }
    /* The call instruction lies before the return address: look up pc - 1
     * (a call at the very end of a segment returns just past it). */
    return find(s, *pc - 1);
}

static int describe(mtr_modules *s, uint64_t code, mt_location *loc)
{
    if (__atomic_load_n(&unloads, __ATOMIC_ACQUIRE) != s->seen_unloads)
        scan(s);   /* a dlclose since the last scan: the table must not name
                    * a new library's address after the one that was there */
    uintptr_t pc;
    const struct module *m = module_of(s, code, &pc);
    if (!m && loads_now() != s->loads) {
        scan(s);   /* a library loaded (or unloaded) since the last scan */
        m = module_of(s, code, &pc);
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
        e->known = describe(s, code, &e->loc) == 0;
        s->used++;
    }
    if (!e->known)
        return -1;
    *locs = &e->loc;
    *n = 1;
    return 0;
}
