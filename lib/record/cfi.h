/*
 * cfi.h - the DWARF walk's fast path on x86_64 (cfi.c, cfiwalk.c): the
 * unwind rule of a code address, read from its module's .eh_frame and
 * packed in one word, and the step from one frame to its caller that such
 * a rule allows. Only the shapes compilers emit for ordinary code have a
 * rule: CFA = RSP+off or RBP+off, the return address at CFA-8, RBP
 * unchanged or saved at CFA+k. Anything else is "fallback": the whole walk
 * is then done by libunwind (unwind.c).
 */
#ifndef MT_RECORD_CFI_H
#define MT_RECORD_CFI_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "thread.h"

/* A rule in the low MTR_CFI_RULE_BITS bits of a word (the cache keeps the
 * address's tag above them):
 *   bits 0-1   kind: MTR_CFI_STEP, MTR_CFI_END (the return address is
 *              undefined: the outermost frame) or MTR_CFI_FALLBACK; 0 = none
 *   bit 2      the CFA is RBP+off (else RSP+off)
 *   bit 3      RBP was saved at CFA-8*slot (else it is unchanged)
 *   bits 4-11  slot (1..255)
 *   bits 12-30 off/8 */
#define MTR_CFI_STEP 1u
#define MTR_CFI_END 2u
#define MTR_CFI_FALLBACK 3u
#define MTR_CFI_RULE_BITS 31
#define MTR_CFI_RULE_MASK ((UINT64_C(1) << MTR_CFI_RULE_BITS) - 1)
#define MTR_CFI_MAX_OFF (((int64_t)1 << 19) * 8 - 8)
#define MTR_CFI_MAX_SLOT 255

static inline unsigned mtr_cfi_kind(uint64_t r) { return (unsigned)(r & 3); }
static inline int mtr_cfi_cfa_rbp(uint64_t r) { return (int)((r >> 2) & 1); }
static inline int mtr_cfi_rbp_saved(uint64_t r) { return (int)((r >> 3) & 1); }
static inline unsigned mtr_cfi_rbp_slot(uint64_t r) { return (unsigned)((r >> 4) & 0xff); }
static inline uint64_t mtr_cfi_cfa_off(uint64_t r) { return ((r >> 12) & 0x7ffff) * 8; }

/* One step: from the frame of a code address whose rule is r (kind
 * MTR_CFI_STEP), whose RSP and RBP are *rsp and *rbp, to its caller: *pc
 * becomes the return address, *rsp the CFA, *rbp the caller's RBP. Every
 * read lies inside the stack [lo, hi); -1 (nothing changed) when one would
 * not. */
static inline __attribute__((always_inline)) int
mtr_cfi_step(uint64_t r, uintptr_t *pc, uintptr_t *rsp, uintptr_t *rbp, uintptr_t lo, uintptr_t hi)
{
    const uintptr_t span = hi - lo - 8;   /* a slot at a is inside when a - lo <= span */
    uintptr_t cfa = (mtr_cfi_cfa_rbp(r) ? *rbp : *rsp) + (uintptr_t)mtr_cfi_cfa_off(r);
    uintptr_t ra_at = cfa - 8;
    if (ra_at - lo > span)
        return -1;
    uintptr_t bp = *rbp;
    if (mtr_cfi_rbp_saved(r)) {
        uintptr_t at = cfa - 8 * (uintptr_t)mtr_cfi_rbp_slot(r);
        if (at - lo > span)
            return -1;
        __builtin_memcpy(&bp, (const void *)at, sizeof bp);   /* any alignment */
    }
    __builtin_memcpy(pc, (const void *)ra_at, sizeof *pc);
    *rsp = cfa;
    *rbp = bp;
    return 0;
}

/* A loaded module's readable memory and its .eh_frame_hdr: every read of
 * the unwind tables stays inside one of these segments. */
#define MTR_CFI_SEGS 8
struct mtr_cfi_mod {
    uintptr_t hdr;                   /* .eh_frame_hdr's address; 0: none */
    int nseg;
    uintptr_t lo[MTR_CFI_SEGS], hi[MTR_CFI_SEGS];
};

/* The rule at code address pc of module m: its FDE found through the
 * binary-search table of .eh_frame_hdr, the CIE's and the FDE's
 * instructions run up to pc. MTR_CFI_FALLBACK when there is no FDE, the
 * tables are malformed or the rule is not of the simple shapes. */
MT_HIDDEN uint64_t mtr_cfi_rule_at(const struct mtr_cfi_mod *m, uintptr_t pc);
/* The same for the FDE at address fde (unit tests). */
MT_HIDDEN uint64_t mtr_cfi_rule_fde(const struct mtr_cfi_mod *m, uintptr_t fde, uintptr_t pc);

/* The walk (cfiwalk.c). setup maps the cache and remembers the lock a
 * miss holds for reading (unwind.c's, which fork takes for writing);
 * -1 when the cache cannot be mapped (then every walk falls back). */
MT_HIDDEN int mtr_cfi_setup(pthread_rwlock_t *miss_lock);
/* The walk of mtr_unwind's DWARF mode: the return addresses of the
 * calling thread's stack, innermost first, from the first that is not the
 * recorder's own (the hook section's) up to the outermost frame or our
 * thread trampoline (excluded), at most max (*truncated set when there
 * were more); -1 when some frame needs libunwind (a rule that is not
 * simple, a read outside the stack, a thread without known bounds). */
MT_HIDDEN int mtr_cfi_backtrace(uintptr_t *out, size_t max, int *truncated);
/* Forgets every rule: a module is being unloaded (dlclose). */
MT_HIDDEN void mtr_cfi_flush(void);
/* The rule cached for return address ra, 0 if none (unit tests). */
MT_HIDDEN uint64_t mtr_cfi_cached(uintptr_t ra);

#endif
