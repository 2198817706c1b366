/*
 * cfiwalk.c - the DWARF walk's fast path (x86_64): a cache of unwind
 * rules keyed by code address, and the walk that uses it. A cached walk
 * is, per frame: one load from the cache, the CFA computed, the return
 * address and RBP read from the stack, inside the thread's bounds. A miss
 * finds the module with dl_iterate_phdr and asks cfi.c for the rule.
 *
 * The cache: 2^CACHE_BITS words in an anonymous mapping of its own (never
 * the program's heap), direct-mapped, overwritten on collision. A word
 * holds the address's tag and its rule together (cfi.h), so a reader never
 * sees a tag with another address's rule; loads and stores are relaxed
 * atomics. dlclose empties it (mtr_cfi_flush) so a rule never outlives
 * its code: a generation number, bumped before the emptying, lets a miss
 * that raced with it take back what it stored.
 *
 * A miss holds unwind.c's lock for reading, as libunwind's walks do
 * (dl_iterate_phdr takes the loader's lock; fork takes ours for writing,
 * so it never happens in the middle of one). A hit takes no lock.
 */
#include <link.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cfi.h"
#include "unwind.h"

#define CACHE_BITS 14
#define CACHE_SIZE ((size_t)1 << CACHE_BITS)
/* Addresses at or above 2^47 (never user code with 4-level paging) are
 * not cached: their tag would not fit. */
#define ADDR_BITS 47

static uint64_t *cache;                  /* NULL: every walk falls back */
static pthread_rwlock_t *miss_lock;
static unsigned long generation;

int mtr_cfi_setup(pthread_rwlock_t *lock)
{
#if defined(__x86_64__)
    void *p = (void *)syscall(SYS_mmap, NULL, CACHE_SIZE * sizeof(uint64_t),
                              PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    miss_lock = lock;
    __atomic_store_n(&cache, (uint64_t *)p, __ATOMIC_RELEASE);
    return 0;
#else
    (void)lock;
    return -1;
#endif
}

void mtr_cfi_flush(void)
{
    uint64_t *c = __atomic_load_n(&cache, __ATOMIC_ACQUIRE);
    if (!c)
        return;
    __atomic_add_fetch(&generation, 1, __ATOMIC_SEQ_CST);
    for (size_t i = 0; i < CACHE_SIZE; i++)
        __atomic_store_n(&c[i], 0, __ATOMIC_SEQ_CST);
}

struct find {
    uintptr_t pc;
    uint64_t rule;
};

/* dl_iterate_phdr's callback: the rule of f->pc if this module holds it. */
static int find_module(struct dl_phdr_info *info, size_t size, void *data)
{
    struct find *f = data;
    struct mtr_cfi_mod m = { 0, 0, { 0 }, { 0 } };
    int holds = 0;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD) {
            if (f->pc - lo < ph->p_memsz)
                holds = 1;
            if ((ph->p_flags & PF_R) && m.nseg < MTR_CFI_SEGS) {
                m.lo[m.nseg] = lo;
                m.hi[m.nseg] = lo + ph->p_memsz;
                m.nseg++;
            }
        } else if (ph->p_type == PT_GNU_EH_FRAME) {
            m.hdr = lo;
        }
    }
    if (!holds)
        return 0;
    f->rule = mtr_cfi_rule_at(&m, f->pc);
    return 1;
}

static MT_HOOK uint64_t miss(uint64_t *c, size_t i, uintptr_t key)
{
    struct find f = { key, MTR_CFI_FALLBACK };
    pthread_rwlock_rdlock(miss_lock);
    unsigned long g = __atomic_load_n(&generation, __ATOMIC_SEQ_CST);
    dl_iterate_phdr(find_module, &f);
    uint64_t word = ((uint64_t)(key >> CACHE_BITS) << MTR_CFI_RULE_BITS) | f.rule;
    __atomic_store_n(&c[i], word, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&generation, __ATOMIC_SEQ_CST) != g)
        __atomic_store_n(&c[i], 0, __ATOMIC_SEQ_CST);   /* a dlclose raced: forget it */
    pthread_rwlock_unlock(miss_lock);
    return f.rule;
}

uint64_t mtr_cfi_cached(uintptr_t key)
{
    uint64_t *c = __atomic_load_n(&cache, __ATOMIC_ACQUIRE);
    if (!c || key >> ADDR_BITS)
        return 0;
    uint64_t e = __atomic_load_n(&c[(key ^ (key >> CACHE_BITS)) & (CACHE_SIZE - 1)], __ATOMIC_RELAXED);
    return (e >> MTR_CFI_RULE_BITS) == (key >> CACHE_BITS) ? e & MTR_CFI_RULE_MASK : 0;
}

static inline __attribute__((always_inline)) uint64_t lookup(uint64_t *c, uintptr_t key)
{
    if (key >> ADDR_BITS)
        return MTR_CFI_FALLBACK;
    size_t i = (key ^ (key >> CACHE_BITS)) & (CACHE_SIZE - 1);
    uint64_t e = __atomic_load_n(&c[i], __ATOMIC_RELAXED);
    if ((e >> MTR_CFI_RULE_BITS) == (key >> CACHE_BITS) && mtr_cfi_kind(e))
        return e & MTR_CFI_RULE_MASK;
    return miss(c, i, key);
}

/* Reads the stack's slots of other frames: return addresses and saved RBPs,
 * never a program's variables. */
__attribute__((no_sanitize_address)) MT_HOOK int
mtr_cfi_backtrace(uintptr_t *buf, int cap, uintptr_t stop_lo, uintptr_t stop_len)
{
    uint64_t *c = __atomic_load_n(&cache, __ATOMIC_ACQUIRE);
    struct mtr_thread *t = &mtr_tls;
    uintptr_t lo = t->stack_lo, hi = t->stack_hi;
    /* this function keeps a frame pointer (__builtin_frame_address): its
     * CFA is RBP+16, the return address at RBP+8, the caller's RBP at RBP */
    uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
    if (!c || !hi || fp < lo || fp > hi - 16)
        return -1;
    uintptr_t pc = ((const uintptr_t *)fp)[1];
    uintptr_t rbp = ((const uintptr_t *)fp)[0];
    uintptr_t rsp = fp + 16;
    int n = 0;
    while (n < cap && pc != 0) {
        buf[n++] = pc;
        if (pc - stop_lo < stop_len)
            break;
        /* pc is a return address: its call instruction's rule */
        uint64_t r = lookup(c, pc - 1);
        unsigned k = mtr_cfi_kind(r);
        if (k == MTR_CFI_END)
            break;
        if (k != MTR_CFI_STEP || mtr_cfi_step(r, &pc, &rsp, &rbp, lo, hi) != 0)
            return -1;
    }
    return n;
}
