/*
 * got.c - mtr_got_rebind (see got.h): finds the module's program headers
 * through its link map and dl_iterate_phdr, then points its GOT slots for
 * the named symbols at the new targets with lib/common's relocation walker
 * (elfrel.h).
 */
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "elfrel.h"
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

struct rebind {
    const mt_elfrel *d;
    const char *const *names;
    void *const *targets;
    size_t n;
    int written;
};

static int rebind_slot(void *ctx, const char *name, void **slot)
{
    struct rebind *rb = ctx;
    for (size_t i = 0; i < rb->n; i++)
        if (strcmp(name, rb->names[i]) == 0 && mt_elfrel_put(rb->d, slot, rb->targets[i]) == 0)
            rb->written++;
    return 0;
}

int mtr_got_rebind(void *handle, const char *const *names, void *const *targets, size_t n)
{
    struct link_map *lm = NULL;
    if (!handle || dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_ld)
        return 0;
    struct module m = { (uintptr_t)lm->l_addr, NULL, 0 };
    mt_elfrel d;
    if (!dl_iterate_phdr(find_module, &m) || mt_elfrel_open(&d, m.base, m.phdr, m.phnum) != 0)
        return 0;
    struct rebind rb = { &d, names, targets, n, 0 };
    mt_elfrel_each(&d, rebind_slot, &rb);
    return rb.written;
}
