/*
 * elfrel.h - a loaded module's GOT slots that name symbols, read in place
 * from its dynamic section: its R_X86_64_JUMP_SLOT (PLT) and
 * R_X86_64_GLOB_DAT relocations, each with its symbol's name and its
 * slot's address; the protection the loader left on a slot's page; and the
 * write of a slot (a read-only RELRO page made writable for the write and
 * given its protection back). The one walker of the recorder's GOT
 * rewriting: got.c (libunwind's pipe) and attach.c (memtrace attach).
 *
 * Allocates nothing, takes no lock, calls only mprotect and getpagesize:
 * usable in the profiled process on any of its threads. x86-64 ELF (the
 * relocations' types are x86-64's). Header only.
 */
#ifndef MT_COMMON_ELFREL_H
#define MT_COMMON_ELFREL_H

#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct mt_elfrel {
    uintptr_t base;                 /* the module's load bias (dlpi_addr, l_addr) */
    const ElfW(Phdr) *phdr;
    size_t phnum;
    const ElfW(Sym) *symtab;
    const char *strtab;
    const ElfW(Rela) *rel[2];       /* DT_JMPREL (when RELA), DT_RELA */
    size_t relsz[2];
    uintptr_t relro_lo, relro_hi;   /* read-only after relocation, whole pages */
} mt_elfrel;

/* An address from the dynamic section: the loader relocated most of them
 * in place; a module whose section is read-only (the vDSO, some loaders)
 * still holds offsets. */
static inline uintptr_t mt_elfrel_addr(uintptr_t base, ElfW(Addr) v)
{
    return v < base ? base + v : v;
}

/* Reads the module loaded at base with these program headers. 0, or -1
 * when it has no dynamic section or no symbol or string table. */
static inline int mt_elfrel_open(mt_elfrel *d, uintptr_t base, const ElfW(Phdr) *phdr,
                                 size_t phnum)
{
    *d = (mt_elfrel){.base = base, .phdr = phdr, .phnum = phnum};
    const ElfW(Dyn) *dyn = NULL;
    uintptr_t page = (uintptr_t)getpagesize();
    for (size_t i = 0; i < phnum; i++) {
        const ElfW(Phdr) *ph = &phdr[i];
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(base + ph->p_vaddr);
        else if (ph->p_type == PT_GNU_RELRO) {
            /* as the loader protects it: its end rounded down */
            d->relro_lo = (base + ph->p_vaddr) & ~(page - 1);
            d->relro_hi = (base + ph->p_vaddr + ph->p_memsz) & ~(page - 1);
        }
    }
    if (!dyn)
        return -1;
    int pltrela = 1;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: d->symtab = (const ElfW(Sym) *)mt_elfrel_addr(base, dyn->d_un.d_ptr); break;
        case DT_STRTAB: d->strtab = (const char *)mt_elfrel_addr(base, dyn->d_un.d_ptr); break;
        case DT_JMPREL: d->rel[0] = (const ElfW(Rela) *)mt_elfrel_addr(base, dyn->d_un.d_ptr); break;
        case DT_PLTRELSZ: d->relsz[0] = dyn->d_un.d_val; break;
        case DT_PLTREL: pltrela = dyn->d_un.d_val == DT_RELA; break;
        case DT_RELA: d->rel[1] = (const ElfW(Rela) *)mt_elfrel_addr(base, dyn->d_un.d_ptr); break;
        case DT_RELASZ: d->relsz[1] = dyn->d_un.d_val; break;
        }
    }
    if (!pltrela)
        d->rel[0] = NULL;
    return d->symtab && d->strtab ? 0 : -1;
}

/* The protection of the page holding a, as the loader left it: read-only
 * in the RELRO range, else its segment's. -1 if no segment holds it. */
static inline int mt_elfrel_prot(const mt_elfrel *d, uintptr_t a)
{
    if (a >= d->relro_lo && a < d->relro_hi)
        return PROT_READ;
    for (size_t i = 0; i < d->phnum; i++) {
        const ElfW(Phdr) *ph = &d->phdr[i];
        uintptr_t lo = d->base + ph->p_vaddr;
        if (ph->p_type != PT_LOAD || a < lo || a >= lo + ph->p_memsz)
            continue;
        return (ph->p_flags & PF_R ? PROT_READ : 0) | (ph->p_flags & PF_W ? PROT_WRITE : 0) |
               (ph->p_flags & PF_X ? PROT_EXEC : 0);
    }
    return -1;
}

/* Calls fn(ctx, name, slot) for each JUMP_SLOT and GLOB_DAT relocation of
 * a named symbol whose slot lies in one of the module's segments, PLT
 * relocations first, each table in its order. Stops at the first non-zero
 * return of fn and returns it; 0 when every one was seen. */
typedef int (*mt_elfrel_fn)(void *ctx, const char *name, void **slot);
static inline int mt_elfrel_each(const mt_elfrel *d, mt_elfrel_fn fn, void *ctx)
{
    for (int t = 0; t < 2; t++) {
        if (!d->rel[t])
            continue;
        size_t n = d->relsz[t] / sizeof(ElfW(Rela));
        for (size_t k = 0; k < n; k++) {
            const ElfW(Rela) *r = &d->rel[t][k];
            unsigned type = (unsigned)ELF64_R_TYPE(r->r_info);
            if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
                continue;
            size_t s = ELF64_R_SYM(r->r_info);
            if (!s)
                continue;
            uintptr_t at = d->base + r->r_offset;
            if (mt_elfrel_prot(d, at) < 0)
                continue;   /* a relocation outside the module's segments */
            int rc = fn(ctx, d->strtab + d->symtab[s].st_name, (void **)at);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* Writes v into the module's slot at (one mt_elfrel_each gave), making a
 * read-only (RELRO) page writable for the write and giving it its
 * protection back. 0, or -1 when it was not written (not in the module,
 * or mprotect refused). */
static inline int mt_elfrel_put(const mt_elfrel *d, void **at, void *v)
{
    uintptr_t a = (uintptr_t)at, page = (uintptr_t)getpagesize();
    int prot = mt_elfrel_prot(d, a);
    if (prot < 0)
        return -1;
    if (prot & PROT_WRITE) {
        __atomic_store_n(at, v, __ATOMIC_RELEASE);
        return 0;
    }
    void *pg = (void *)(a & ~(page - 1));
    if (mprotect(pg, page, prot | PROT_WRITE) != 0)
        return -1;
    __atomic_store_n(at, v, __ATOMIC_RELEASE);
    mprotect(pg, page, prot);
    return 0;
}

#endif
