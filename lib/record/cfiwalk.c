/*
 * cfiwalk.c - the DWARF walk's fast path (x86_64): a cache of unwind
 * rules keyed by return address, and the walk that uses it. The walk
 * skips the recorder's own frames by their frame pointers, then for each
 * of the program's frames looks the rule up (once for a run of frames
 * returning to one address), computes the CFA and reads the return
 * address and RBP from the stack, inside the thread's bounds. A miss
 * finds the module with dl_iterate_phdr and asks cfi.c for the rule of
 * the call instruction before the return address.
 *
 * The cache: 2^CACHE_BITS words in an anonymous mapping of its own (never
 * the program's heap), direct-mapped, overwritten on collision. A word
 * holds the address's tag and its rule together (cfi.h), so a reader never
 * sees a tag with another address's rule; loads and stores are relaxed
 * atomics. dlclose empties it (mtr_cfi_flush) so a rule never outlives
 * its code: a generation number, bumped before the emptying, lets a miss
 * that raced with it take back what it stored.
 *
 * Before it starts, a walk prefetches the cache words of the last walk's
 * return addresses (hint[]): cold after the program ran between two
 * samples, they would otherwise be waited for one frame at a time.
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
_Static_assert(ADDR_BITS - CACHE_BITS <= 64 - MTR_CFI_RULE_BITS, "a cache word holds the whole tag");

static uint64_t *cache;                  /* NULL: every walk falls back */
/* The word of return address key: the index folds the bits above it in,
 * so that the same offsets in two modules seldom share a word. */
#define SLOT(key) (((key) ^ ((key) >> CACHE_BITS)) & (CACHE_SIZE - 1))
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
    /* relaxed stores, then one locked operation (a second bump: a miss
     * seeing either forgets what it stored); a fence per word made a
     * dlclose 170 us slower, and TSan builds refuse a bare fence */
    for (size_t i = 0; i < CACHE_SIZE; i++)
        __atomic_store_n(&c[i], 0, __ATOMIC_RELAXED);
    __atomic_add_fetch(&generation, 1, __ATOMIC_SEQ_CST);
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
    struct find f = { key - 1, MTR_CFI_FALLBACK };   /* the call instruction's rule */
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
    uint64_t e = __atomic_load_n(&c[SLOT(key)], __ATOMIC_RELAXED);
    return (e >> MTR_CFI_RULE_BITS) == (key >> CACHE_BITS) ? e & MTR_CFI_RULE_MASK : 0;
}

static inline __attribute__((always_inline)) uint64_t lookup(uint64_t *c, uintptr_t key)
{
    if (key >> ADDR_BITS)
        return MTR_CFI_FALLBACK;
    size_t i = SLOT(key);
    uint64_t e = __atomic_load_n(&c[i], __ATOMIC_RELAXED);
    if ((e >> MTR_CFI_RULE_BITS) == (key >> CACHE_BITS) && mtr_cfi_kind(e))
        return e & MTR_CFI_RULE_MASK;
    return miss(c, i, key);
}

/* The return addresses of the last walk (any thread's, innermost first):
 * a hint only. The next walk first asks memory for their cache words all at
 * once: between two samples the program has pushed the cache out of the
 * processor's caches, and the walk itself can load a frame's word only
 * once it has the previous frame's rule, one wait after another. Most of a
 * stack is its caller's, the same as the last sample's. */
#define HINT_FRAMES 32
static uintptr_t hint[HINT_FRAMES];
static unsigned hint_n;

extern char __start_mt_hooks[] MT_HIDDEN;
extern char __stop_mt_hooks[] MT_HIDDEN;
extern char __start_mt_tstart[] MT_HIDDEN;
extern char __stop_mt_tstart[] MT_HIDDEN;

/* Reads the stack's slots of other frames: return addresses and saved RBPs,
 * never a program's variables. */
__attribute__((no_sanitize_address)) MT_HOOK int mtr_cfi_backtrace(uintptr_t *out, size_t max, int *truncated)
{
    uint64_t *c = __atomic_load_n(&cache, __ATOMIC_ACQUIRE);
    struct mtr_thread *t = &mtr_tls;
    const uintptr_t lo = t->stack_lo, hi = t->stack_hi;
    const uintptr_t hooks_lo = (uintptr_t)__start_mt_hooks;
    const uintptr_t hooks_len = (uintptr_t)__stop_mt_hooks - hooks_lo;
    const uintptr_t ts_lo = (uintptr_t)__start_mt_tstart;
    const uintptr_t ts_len = (uintptr_t)__stop_mt_tstart - ts_lo;
    uintptr_t fp = (uintptr_t)__builtin_frame_address(0);

    *truncated = 0;
    if (!c || !hi)
        return -1;
    unsigned hn = __atomic_load_n(&hint_n, __ATOMIC_RELAXED);
    for (unsigned k = 0; k < hn && k < HINT_FRAMES; k++) {
        uintptr_t a = __atomic_load_n(&hint[k], __ATOMIC_RELAXED);
        __builtin_prefetch(&c[SLOT(a)]);
    }
    /* The recorder's own frames (this one included) keep frame pointers
     * (the Makefile builds lib/record with -fno-omit-frame-pointer): the
     * chain, not the cache, up to the program's first frame, whose RSP is
     * the last of them's CFA (RBP+16) and whose RBP is saved at RBP. */
    uintptr_t pc;
    for (;;) {
        if (fp < lo || fp > hi - 16)
            return -1;
        pc = ((const uintptr_t *)fp)[1];
        if (pc - hooks_lo >= hooks_len)
            break;
        uintptr_t next = ((const uintptr_t *)fp)[0];
        if (next <= fp || (next & 7))
            return -1;
        fp = next;
    }
    uintptr_t rbp = ((const uintptr_t *)fp)[0];
    uintptr_t rsp = fp + 16;
    size_t n = 0;
    uintptr_t last_pc = 0;
    uint64_t last_r = 0;
    for (;;) {
        if (pc == 0 || pc - ts_lo < ts_len)
            break;               /* the end, or our thread trampoline */
        if (n == max) {
            *truncated = 1;
            break;
        }
        out[n++] = pc;
        /* the rule of the frame that returns to pc; a run of frames
         * returning to one address (recursion) looks it up once */
        if (pc != last_pc) {
            last_pc = pc;
            last_r = lookup(c, pc);
        }
        uint64_t r = last_r;
        unsigned k = mtr_cfi_kind(r);
        if (k == MTR_CFI_END)
            break;
        if (k != MTR_CFI_STEP || mtr_cfi_step(r, &pc, &rsp, &rbp, lo, hi) != 0)
            return -1;
    }
    size_t keep = n < HINT_FRAMES ? n : HINT_FRAMES;
    for (size_t k = 0; k < keep; k++)
        __atomic_store_n(&hint[k], out[k], __ATOMIC_RELAXED);
    __atomic_store_n(&hint_n, (unsigned)keep, __ATOMIC_RELAXED);
    return (int)n;
}
