/*
 * attach.c - the recorder loaded into a running process by 'memtrace
 * attach' (programs/cmd_attach.c): the entries the injector calls, and the
 * redirection of the program's calls to the malloc family and to
 * mmap/munmap/mremap/mprotect (commits in a reservation, mmap.c) through
 * the modules' GOT entries.
 *
 * A library loaded with dlopen (RTLD_LOCAL) does not interpose by symbol:
 * every module already bound malloc to the allocator. So each loaded
 * module's R_X86_64_JUMP_SLOT and R_X86_64_GLOB_DAT relocations that name
 * one of the redirected functions get the recorder's entry written into
 * their slot (a RELRO page is made writable for the write and read-only
 * again; lib/common/elfrel.h walks the relocations and writes the slots),
 * the old value remembered. That includes this library's own slots,
 * so that its wrappers reach each other as they do when preloaded, and the
 * allocator's object (its calls through its PLT went to a preloaded
 * recorder too). Modules loaded later are patched by the writer thread
 * within a few tens of milliseconds (mtr_attach_tick: dl_iterate_phdr's
 * count of loaded objects changed). dlopen is not wrapped: glibc's dlopen
 * looks at its caller to search RUNPATH.
 *
 * The allocator underneath is the program's: the first definition of
 * malloc in the global scope (real.c, mtr_real_resolve_global; never a
 * non-PIE executable's PLT stub, which would call back into the slot
 * redirected here), not what follows this library. A block allocated before the attach is not in the sampled-block
 * table, so free and realloc pass it to the allocator.
 *
 * Detach writes every remembered slot back (only in modules still loaded,
 * only where the slot still holds the recorder's entry, inside
 * dl_iterate_phdr so that no module is unmapped meanwhile), then ends the
 * recording as 'ctl stop' does and removes the fatal-signal handlers
 * tracing installed. The library stays loaded and dormant: a thread may
 * still be inside one of its wrappers, which go on to the allocator.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memtrace/record.h"
#include "attach.h"
#include "elfrel.h"
#include "fatal.h"
#include "real.h"
#include "recconf.h"
#include "thread.h"
#include "tracer.h"

#define API __attribute__((visibility("default")))

/* The redirected functions, by name (malloc_usable_size stays the
 * allocator's, as under the preload: interpose.c). */
static const char *const names[] = {
    "malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign",
    "aligned_alloc", "memalign", "valloc", "pvalloc", "free_sized", "free_aligned_sized",
    "mmap", "mmap64", "munmap", "mremap", "mprotect",
};
#define NNAMES (sizeof names / sizeof names[0])

static void *ours[NNAMES];   /* this library's definitions */

struct slot {
    uintptr_t module;   /* the module's load address */
    void **at;
    void *orig;
    void *ours;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *slots;
static size_t nslots, capslots;
static int patched;                    /* redirection in place */
static unsigned long long seen_adds;   /* dl_iterate_phdr's count at the last scan */

static int find_ours(void)
{
    Dl_info info;
    struct link_map *self = NULL;
    if (!dladdr1((void *)find_ours, &info, (void **)&self, RTLD_DL_LINKMAP) || !self)
        return -1;
    for (size_t i = 0; i < NNAMES; i++) {
        ours[i] = dlsym(self, names[i]);   /* self is first in its own search list */
        if (!ours[i])
            return -1;
    }
    return 0;
}

static int name_index(const char *s)
{
    if (s[0] != 'm' && s[0] != 'c' && s[0] != 'r' && s[0] != 'f' && s[0] != 'p' &&
        s[0] != 'a' && s[0] != 'v')
        return -1;
    for (size_t i = 0; i < NNAMES; i++)
        if (strcmp(s, names[i]) == 0)
            return (int)i;
    return -1;
}

static int remember(uintptr_t module, void **at, void *orig, void *mine)
{
    for (size_t i = 0; i < nslots; i++)
        if (slots[i].at == at) {   /* a module loaded again where one was */
            slots[i].module = module;
            slots[i].orig = orig;
            slots[i].ours = mine;
            return 0;
        }
    if (nslots == capslots) {
        size_t cap = capslots ? capslots * 2 : 256;
        struct slot *n = mtr_real.realloc(slots, cap * sizeof *n);
        if (!n)
            return -1;
        slots = n;
        capslots = cap;
    }
    slots[nslots++] = (struct slot){ module, at, orig, mine };
    return 0;
}

/* Reads the module's relocations (elfrel.h); -1 for the vDSO and a
 * module without them. */
static int read_module(struct dl_phdr_info *info, mt_elfrel *d)
{
    const char *name = info->dlpi_name;
    if (strstr(name, "linux-vdso") || strstr(name, "linux-gate"))
        return -1;
    return mt_elfrel_open(d, info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum);
}

/* One GOT slot of a loaded module: ours written into it when it names a
 * redirected function, its value remembered. 1 stops the scan (out of
 * memory for the remembered slots). */
static int patch_slot(void *ctx, const char *name, void **at)
{
    const mt_elfrel *d = ctx;
    int idx = name_index(name);
    if (idx < 0)
        return 0;
    void *cur = __atomic_load_n(at, __ATOMIC_ACQUIRE);
    if (cur == ours[idx])
        return 0;
    if (remember(d->base, at, cur, ours[idx]) != 0)
        return 1;
    mt_elfrel_put(d, at, ours[idx]);
    return 0;
}

static int patch_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    mt_elfrel d;
    if (read_module(info, &d) != 0)
        return 0;
    return mt_elfrel_each(&d, patch_slot, &d);
}

static int restore_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    mt_elfrel d;
    if (read_module(info, &d) != 0)
        return 0;
    for (size_t i = 0; i < nslots; i++) {
        struct slot *s = &slots[i];
        if (s->module != info->dlpi_addr || !s->at)
            continue;
        if (__atomic_load_n(s->at, __ATOMIC_ACQUIRE) == s->ours)
            mt_elfrel_put(&d, s->at, s->orig);
        s->at = NULL;
    }
    return 0;
}

static int count_adds(struct dl_phdr_info *info, size_t size, void *arg)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
        *(unsigned long long *)arg = info->dlpi_adds;
    return 1;
}

/* Patches what is loaded now. lock held. */
static void scan(void)
{
    unsigned long long adds = 0;
    dl_iterate_phdr(count_adds, &adds);
    seen_adds = adds;
    dl_iterate_phdr(patch_one, NULL);
}

/* The writer thread, at every turn (outside its lock): patch the modules
 * loaded since the last look. */
void mtr_attach_tick(void)
{
    if (!__atomic_load_n(&patched, __ATOMIC_ACQUIRE))
        return;
    unsigned long long adds = 0;
    dl_iterate_phdr(count_adds, &adds);
    if (adds == __atomic_load_n(&seen_adds, __ATOMIC_RELAXED))
        return;
    mtr_enter();
    if (pthread_mutex_trylock(&lock) == 0) {
        if (patched)
            scan();
        pthread_mutex_unlock(&lock);
    }
    mtr_leave();
}

static int scan_at_stop;   /* memtrace_attach_start's "leaks" */

static void unpatch(void)
{
    dl_iterate_phdr(restore_one, NULL);
    nslots = 0;   /* slots of modules unloaded meanwhile are forgotten */
    __atomic_store_n(&patched, 0, __ATOMIC_RELEASE);
}

/* What the injector calls, on a program thread it borrowed (stopped in a
 * system call, so it holds no lock of the program's).
 *
 * memtrace_attach_start(CONFIG): start recording as CONFIG says, the
 * recorder's configuration in its text form (recconf.h: "rate=R depth=N
 * unwind=M leaks=1 file=PATH", PATH absolute), then redirect; with leaks,
 * memtrace_attach_stop scans for leak verdicts first. Returns
 * 0, or: 1 already recording (attached or started otherwise), 2 preloaded
 * or linked (the recorder interposes already: use 'memtrace ctl'), 3 bad
 * request, 4 the recording did not start (the process's stderr says
 * why), 5 the library cannot find its own entries, 6 the program's
 * allocator cannot be told from a PLT stub (nothing redirected). */
API int memtrace_attach_start(const char *spec)
{
    mt_recconf conf;
    char why[160];
    if (mt_recconf_parse(&conf, spec, why, sizeof why) != 0 || conf.file[0] != '/')
        return 3;
    /* the scan is the detach's (memtrace_attach_stop), not the exit's */
    int leaks = conf.leaks;
    conf.leaks = 0;
    mtr_enter();
    pthread_mutex_lock(&lock);
    int rc = 0;
    if (patched || mtr_tracer_active()) {
        rc = 1;
        goto out;
    }
    void *first = dlsym(RTLD_DEFAULT, "memtrace_attach_start");
    if (first && first != (void *)memtrace_attach_start) {
        rc = 2;   /* another recorder comes first: preloaded or linked */
        goto out;
    }
    if (!ours[0] && find_ours() != 0) {
        rc = 5;
        goto out;
    }
    mtr_real_resolve_global();
    if (mtr_real_checked() != 0) {
        rc = 6;   /* the allocator would be reached through a redirected slot */
        goto out;
    }
    mtr_tracer_set_attached(1);
    if (mtr_tracer_begin(&conf, conf.file, 1, 0) != 0) {
        mtr_tracer_set_attached(0);
        rc = 4;
        goto out;
    }
    __atomic_store_n(&patched, 1, __ATOMIC_RELEASE);
    scan_at_stop = leaks;
    scan();
out:
    pthread_mutex_unlock(&lock);
    mtr_leave();
    return rc;
}

/* Put every slot back, end the recording. Returns 0, 1 if nothing was
 * attached, 2 if the trace could not be completed. */
API int memtrace_attach_stop(void)
{
    mtr_enter();
    pthread_mutex_lock(&lock);
    int rc = 1;
    if (patched) {
        /* verdicts on the blocks sampled since the attach, while they are
         * still recorded (the program's threads stop for the scan alone) */
        if (scan_at_stop)
            mtr_tracer_scan_now();
        scan_at_stop = 0;
        unpatch();
        /* A writer that kept its lock for the 2 s the stop waits (a loaded
         * machine) gets one more turn: a recording left running would keep
         * its thread in the process. */
        int r = memtrace_stop_tracing();
        if (r != 0 && mtr_tracer_active())
            r = memtrace_stop_tracing();
        rc = r == 0 ? 0 : 2;
        mtr_tracer_set_attached(0);
        mtr_fatal_remove();
    }
    pthread_mutex_unlock(&lock);
    mtr_leave();
    return rc;
}
