/*
 * defined.c - finding where a function is defined in the process's global
 * scope (see defined.h): the loaded objects' dynamic symbol tables read
 * through their hash tables, as the loader reads them, so that an
 * undefined symbol (a non-PIE executable's canonical PLT address) is never
 * taken for a definition.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "defined.h"

struct symtab {
    uintptr_t base;
    const ElfW(Sym) *sym;
    const char *str;
    const uint32_t *gnu;     /* DT_GNU_HASH */
    const uint32_t *sysv;    /* DT_HASH */
    const ElfW(Half) *versym;
};

/* Most entries of the dynamic section are relocated in place; a module
 * whose section is read-only (the vDSO) still has offsets. */
static uintptr_t dyn_ptr(uintptr_t base, ElfW(Addr) v)
{
    return v < base ? base + v : v;
}

static int read_symtab(const struct dl_phdr_info *info, struct symtab *t)
{
    memset(t, 0, sizeof *t);
    t->base = info->dlpi_addr;
    const ElfW(Dyn) *dyn = NULL;
    for (unsigned i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn)
        return -1;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        uintptr_t p = dyn_ptr(t->base, dyn->d_un.d_ptr);
        switch (dyn->d_tag) {
        case DT_SYMTAB: t->sym = (const ElfW(Sym) *)p; break;
        case DT_STRTAB: t->str = (const char *)p; break;
        case DT_GNU_HASH: t->gnu = (const uint32_t *)p; break;
        case DT_HASH: t->sysv = (const uint32_t *)p; break;
        case DT_VERSYM: t->versym = (const ElfW(Half) *)p; break;
        }
    }
    return t->sym && t->str && (t->gnu || t->sysv) ? 0 : -1;
}

/* A definition the loader would bind a call to: defined in a section (or
 * absolute), a function, global or weak, not a hidden version. */
static int defines(const struct symtab *t, uint32_t i, const char *name)
{
    const ElfW(Sym) *s = &t->sym[i];
    unsigned type = ELF64_ST_TYPE(s->st_info), bind = ELF64_ST_BIND(s->st_info);
    if (s->st_shndx == SHN_UNDEF || s->st_value == 0)
        return 0;
    if (type != STT_FUNC && type != STT_GNU_IFUNC)
        return 0;
    if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE)
        return 0;
    if (t->versym && (t->versym[i] & 0x8000))
        return 0;
    return strcmp(t->str + s->st_name, name) == 0;
}

static uint32_t gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h;
}

static uint32_t sysv_hash(const char *s)
{
    uint32_t h = 0;
    for (; *s; s++) {
        h = (h << 4) + (unsigned char)*s;
        uint32_t g = h & 0xf0000000u;
        if (g)
            h ^= g >> 24;
        h &= ~g;
    }
    return h;
}

/* The index of name's definition in t, or 0. */
static uint32_t find(const struct symtab *t, const char *name)
{
    if (t->gnu) {
        uint32_t nbuckets = t->gnu[0], symoffset = t->gnu[1], bloom_size = t->gnu[2];
        if (nbuckets == 0)
            return 0;
        const uint32_t *buckets =
            t->gnu + 4 + bloom_size * (sizeof(ElfW(Addr)) / sizeof(uint32_t));
        const uint32_t *chain = buckets + nbuckets;
        uint32_t h = gnu_hash(name);
        uint32_t i = buckets[h % nbuckets];
        if (i < symoffset)
            return 0;
        for (;; i++) {
            uint32_t h2 = chain[i - symoffset];
            if ((h | 1) == (h2 | 1) && defines(t, i, name))
                return i;
            if (h2 & 1)
                return 0;
        }
    }
    uint32_t nbucket = t->sysv[0], nchain = t->sysv[1];
    if (nbucket == 0)
        return 0;
    const uint32_t *bucket = t->sysv + 2, *chain = bucket + nbucket;
    for (uint32_t i = bucket[sysv_hash(name) % nbucket], n = 0; i && i < nchain && n < nchain;
         i = chain[i], n++)
        if (defines(t, i, name))
            return i;
    return 0;
}

struct query {
    const char *name;
    void *found;
    int ifunc;
    const char *object;   /* the defining object's name (for an IFUNC) */
};

static int is_recorder(const struct symtab *t)
{
    return find(t, "memtrace_attach_start") != 0;
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct query *q = arg;
    struct symtab t;
    if (strstr(info->dlpi_name, "linux-vdso") || read_symtab(info, &t) != 0)
        return 0;
    uint32_t i = find(&t, q->name);
    if (!i || is_recorder(&t))
        return 0;
    q->found = (void *)(t.base + t.sym[i].st_value);
    q->ifunc = ELF64_ST_TYPE(t.sym[i].st_info) == STT_GNU_IFUNC;
    q->object = info->dlpi_name;
    return 1;
}

void *mtr_global_definition(const char *name)
{
    struct query q = { name, NULL, 0, NULL };
    if (!dl_iterate_phdr(visit, &q))
        return NULL;
    if (!q.ifunc)
        return q.found;
    /* An IFUNC: its resolver chooses; dlsym on the defining object's own
     * handle runs it (that object comes first in its own search list). */
    void *h = dlopen(q.object && q.object[0] ? q.object : NULL, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return NULL;
    void *f = dlsym(h, name);
    dlclose(h);
    return f;
}

int mtr_is_definition(const void *f)
{
    if (!f)
        return 0;
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (dladdr1(f, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && info.dli_saddr == f &&
        sym->st_shndx == SHN_UNDEF)
        return 0;   /* an undefined symbol's canonical address: a PLT stub */
    /* A PLT stub's code: [endbr64] [bnd] jmp *disp32(%rip). No allocator's
     * entry is a bare jump through a memory slot. */
    const unsigned char *c = f;
    if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
        c += 4;
    if (c[0] == 0xf2)
        c++;
    return !(c[0] == 0xff && c[1] == 0x25);
}
