/*
 * got.c - mtr_got_rebind (see got.h): finds the module's dynamic section
 * through its link map and its RELRO range through dl_iterate_phdr, then
 * walks its PLT and dynamic relocations for the named symbols.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "got.h"

struct module {
    uintptr_t base;
    const ElfW(Phdr) *phdr;
    size_t phnum;
};

static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct module *m = arg;
    if (info->dlpi_addr != m->base || !info->dlpi_phdr)
        return 0;
    m->phdr = info->dlpi_phdr;
    m->phnum = info->dlpi_phnum;
    return 1;
}

/* The loader relocated most dynamic addresses in place; a read-only
 * dynamic section still holds offsets. */
static uintptr_t dyn_addr(uintptr_t base, ElfW(Addr) v)
{
    return v < base ? base + v : v;
}

static void write_slot(void **at, void *v, uintptr_t relro_lo, uintptr_t relro_hi)
{
    uintptr_t a = (uintptr_t)at, page = (uintptr_t)getpagesize();
    if (a < relro_lo || a >= relro_hi) {
        __atomic_store_n(at, v, __ATOMIC_RELEASE);
        return;
    }
    void *pg = (void *)(a & ~(page - 1));
    if (mprotect(pg, page, PROT_READ | PROT_WRITE) != 0)
        return;
    __atomic_store_n(at, v, __ATOMIC_RELEASE);
    mprotect(pg, page, PROT_READ);
}

int mtr_got_rebind(void *handle, const char *const *names, void *const *targets, size_t n)
{
    struct link_map *lm = NULL;
    if (!handle || dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_ld)
        return 0;
    struct module m = { (uintptr_t)lm->l_addr, NULL, 0 };
    if (!dl_iterate_phdr(find_module, &m))
        return 0;
    uintptr_t relro_lo = 0, relro_hi = 0, page = (uintptr_t)getpagesize();
    for (size_t i = 0; i < m.phnum; i++)
        if (m.phdr[i].p_type == PT_GNU_RELRO) {
            relro_lo = (m.base + m.phdr[i].p_vaddr) & ~(page - 1);
            relro_hi = (m.base + m.phdr[i].p_vaddr + m.phdr[i].p_memsz + page - 1) & ~(page - 1);
        }
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Rela) *rel[2] = { NULL, NULL };
    size_t relsz[2] = { 0, 0 };
    int pltrela = 1;
    for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)dyn_addr(m.base, d->d_un.d_ptr); break;
        case DT_STRTAB: strtab = (const char *)dyn_addr(m.base, d->d_un.d_ptr); break;
        case DT_JMPREL: rel[0] = (const ElfW(Rela) *)dyn_addr(m.base, d->d_un.d_ptr); break;
        case DT_PLTRELSZ: relsz[0] = d->d_un.d_val; break;
        case DT_PLTREL: pltrela = d->d_un.d_val == DT_RELA; break;
        case DT_RELA: rel[1] = (const ElfW(Rela) *)dyn_addr(m.base, d->d_un.d_ptr); break;
        case DT_RELASZ: relsz[1] = d->d_un.d_val; break;
        }
    }
    if (!symtab || !strtab)
        return 0;
    if (!pltrela)
        rel[0] = NULL;
    int written = 0;
    for (int t = 0; t < 2; t++) {
        if (!rel[t])
            continue;
        for (size_t k = 0; k < relsz[t] / sizeof(ElfW(Rela)); k++) {
            const ElfW(Rela) *r = &rel[t][k];
            unsigned type = (unsigned)ELF64_R_TYPE(r->r_info);
            if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
                continue;
            const char *name = strtab + symtab[ELF64_R_SYM(r->r_info)].st_name;
            for (size_t i = 0; i < n; i++)
                if (strcmp(name, names[i]) == 0) {
                    write_slot((void **)(m.base + r->r_offset), targets[i], relro_lo, relro_hi);
                    written++;
                }
        }
    }
    return written;
}
