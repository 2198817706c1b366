/*
 * elfrel.c - unit test of lib/common/elfrel.h, the recorder's walker of a
 * loaded module's GOT slots, on this test program itself (built
 * position-independent): its call of getppid is one PLT slot
 * (JUMP_SLOT) and its use of stderr one GOT slot (GLOB_DAT), each found
 * once and holding what the loader bound (dlsym's answer); the page
 * protection the walker reports for them is the one /proc/self/maps shows;
 * a write through mt_elfrel_put redirects the program's next getppid call
 * and a second one puts it back; stderr's slot, read-only after relocation
 * (RELRO), is written through a page made writable and read-only again; a callback's non-zero return stops the walk; a module without a
 * dynamic section is refused.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfrel.h"
#include "../check.h"

static int main_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    *(struct dl_phdr_info *)arg = *info;
    return 1;   /* the first one is the program */
}

struct seen {
    const char *name;
    int n;
    void **slot;
    int calls;
};

static int look(void *ctx, const char *name, void **slot)
{
    struct seen *s = ctx;
    s->calls++;
    if (strcmp(name, s->name) == 0) {
        s->n++;
        s->slot = slot;
    }
    return 0;
}

static int stop_at_first(void *ctx, const char *name, void **slot)
{
    (void)name;
    (void)slot;
    ++*(int *)ctx;
    return 7;
}

static pid_t fake_getppid(void)
{
    return 424242;
}

/* The permissions /proc/self/maps gives the page holding a, as PROT_*;
 * -1 if none. */
static int maps_prot(uintptr_t a)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    char line[512];
    int prot = -1;
    while (prot < 0 && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perm[5];
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perm) == 3 && a >= lo && a < hi)
            prot = (perm[0] == 'r' ? PROT_READ : 0) | (perm[1] == 'w' ? PROT_WRITE : 0) |
                   (perm[2] == 'x' ? PROT_EXEC : 0);
    }
    fclose(f);
    return prot;
}

int main(void)
{
    pid_t parent = getppid();   /* bound now, lazily or not */
    FILE *volatile err = stderr;
    (void)err;
    struct dl_phdr_info self;
    CHECK(dl_iterate_phdr(main_module, &self) == 1, "the program's module found");
    mt_elfrel d;
    CHECK(mt_elfrel_open(&d, self.dlpi_addr, self.dlpi_phdr, self.dlpi_phnum) == 0,
          "the program's dynamic section read");

    struct seen call = {"getppid", 0, NULL, 0};
    CHECK(mt_elfrel_each(&d, look, &call) == 0, "every slot walked");
    CHECK(call.n == 1, "getppid: one slot (%d)", call.n);
    CHECK(call.slot && *call.slot == dlsym(RTLD_DEFAULT, "getppid"),
          "getppid's slot holds the function the loader bound (%p, dlsym %p)",
          call.slot ? *call.slot : NULL, dlsym(RTLD_DEFAULT, "getppid"));
    struct seen data = {"stderr", 0, NULL, 0};
    mt_elfrel_each(&d, look, &data);
    CHECK(data.n == 1 && data.slot && *data.slot == dlsym(RTLD_DEFAULT, "stderr"),
          "stderr: one slot holding the variable's address (%d slots)", data.n);
    CHECK(call.calls == data.calls && call.calls >= 2,
          "the same %d slots on each walk", call.calls);
    if (call.slot && data.slot) {
        int p1 = mt_elfrel_prot(&d, (uintptr_t)call.slot);
        int p2 = mt_elfrel_prot(&d, (uintptr_t)data.slot);
        CHECK(p1 == maps_prot((uintptr_t)call.slot) && p2 == maps_prot((uintptr_t)data.slot),
              "the slots' protection is the one the loader left (%d and %d, maps %d and %d)",
              p1, p2, maps_prot((uintptr_t)call.slot), maps_prot((uintptr_t)data.slot));

        void *orig = *call.slot;
        CHECK(mt_elfrel_put(&d, call.slot, (void *)fake_getppid) == 0, "getppid's slot written");
        CHECK(getppid() == 424242, "the program's getppid call goes to the new target");
        CHECK(maps_prot((uintptr_t)call.slot) == p1, "the page's protection given back (%d)",
              maps_prot((uintptr_t)call.slot));
        CHECK(mt_elfrel_put(&d, call.slot, orig) == 0 && getppid() == parent,
              "written back: getppid answers the parent's pid again");

        /* stderr's slot (GLOB_DAT, in .got) is in the RELRO range */
        static FILE *other;
        void *was = *data.slot;
        CHECK(p2 == PROT_READ, "stderr's slot is read-only after relocation (RELRO: %d)", p2);
        CHECK(mt_elfrel_put(&d, data.slot, (void *)&other) == 0 && *data.slot == (void *)&other,
              "a read-only slot written (its page made writable for the write)");
        CHECK(maps_prot((uintptr_t)data.slot) == PROT_READ, "... and read-only again (%d)",
              maps_prot((uintptr_t)data.slot));
        mt_elfrel_put(&d, data.slot, was);
        CHECK(*data.slot == was, "stderr's slot written back");
    }

    int calls = 0;
    CHECK(mt_elfrel_each(&d, stop_at_first, &calls) == 7 && calls == 1,
          "a callback's non-zero answer stops the walk and is returned (%d calls)", calls);
    CHECK(mt_elfrel_put(&d, (void **)&calls, NULL) == -1 && calls == 1,
          "an address outside the module is not written");
    mt_elfrel none;
    CHECK(mt_elfrel_open(&none, self.dlpi_addr, self.dlpi_phdr, 0) == -1,
          "no program headers, no dynamic section: refused");
    return failures != 0;
}
