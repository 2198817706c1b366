/*
 * cfi_rules.c - the DWARF walk's CFI interpreter (lib/record/cfi.c) on
 * hand-written .eh_frame_hdr, CIE and FDE bytes with known answers (the
 * rule at each address of a function without frame pointer, one with, a
 * PLT entry, a signal frame, the outermost frame, malformed tables); the
 * step from a frame to its caller inside the stack's bounds only; and the
 * walk and its cache (lib/record/cfiwalk.c) on this program's own stack:
 * the return addresses a chain of calls knows, and the cache emptied by
 * dlclose.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "../../lib/record/cfi.h"
#include "../../lib/record/unwind.h"

/* A module image: .eh_frame_hdr at 0, .eh_frame after it. */
static unsigned char img[4096] __attribute__((aligned(16)));
static size_t len;
/* where the "functions" are: addresses in img's upper half */
#define CODE(off) ((uintptr_t)img + 2048 + (off))

static void put(const void *p, size_t n)
{
    memcpy(img + len, p, n);
    len += n;
}
static void u8(unsigned v) { unsigned char b = (unsigned char)v; put(&b, 1); }
static void u32(uint32_t v) { put(&v, 4); }
static void s32(int32_t v) { put(&v, 4); }
static void uleb(uint64_t v)
{
    do {
        unsigned b = v & 0x7f;
        v >>= 7;
        u8(b | (v ? 0x80 : 0));
    } while (v);
}
static void bytes(const char *s, size_t n) { put(s, n); }

/* A CIE with augmentation aug ("zR", "zPLR", "zRS") and the usual x86_64
 * initial rules (CFA = RSP+8, return address at CFA-8); returns its
 * offset. */
static size_t cie(const char *aug)
{
    size_t at = len;
    u32(0);                        /* length, patched */
    u32(0);                        /* CIE id */
    u8(1);                         /* version */
    bytes(aug, strlen(aug) + 1);
    uleb(1);                       /* code alignment */
    u8(0x78);                      /* data alignment -8 (sleb) */
    u8(16);                        /* return address register */
    size_t auglen_at = len;
    u8(0);                         /* augmentation data length, patched */
    size_t aug_start = len;
    for (const char *a = aug + 1; *a; a++) {
        if (*a == 'R')
            u8(0x1b);              /* FDE pointers: pcrel sdata4 */
        else if (*a == 'P') {
            u8(0x9b);              /* indirect pcrel sdata4 */
            s32(0x1234);
        } else if (*a == 'L')
            u8(0x1b);
    }
    img[auglen_at] = (unsigned char)(len - aug_start);
    u8(0x0c); uleb(7); uleb(8);    /* def_cfa rsp, 8 */
    u8(0x90); uleb(1);             /* offset r16 (RA) at cfa-8 */
    while ((len - at) % 8)
        u8(0);                     /* nop padding */
    uint32_t l = (uint32_t)(len - at - 4);
    memcpy(img + at, &l, 4);
    return at;
}

/* An FDE of the CIE at cie_at for [begin, begin+size), instructions ins;
 * with_lsda: the CIE has 'L' (8 bytes of augmentation data). */
static size_t fde(size_t cie_at, uintptr_t begin, uint32_t size, const char *ins, size_t n,
                  int with_lsda)
{
    size_t at = len;
    u32(0);
    u32((uint32_t)(len - cie_at));                 /* CIE pointer */
    s32((int32_t)(begin - ((uintptr_t)img + len))); /* pc_begin, pcrel */
    u32(size);
    if (with_lsda) {
        uleb(4);
        s32(0);
    } else {
        uleb(0);
    }
    put(ins, n);
    while ((len - at) % 8)
        u8(0);
    uint32_t l = (uint32_t)(len - at - 4);
    memcpy(img + at, &l, 4);
    return at;
}

static struct mtr_cfi_mod mod(void)
{
    struct mtr_cfi_mod m = { (uintptr_t)img, 1, { (uintptr_t)img }, { (uintptr_t)img + 2048 } };
    return m;
}

/* STEP with CFA = (rbp ? RBP : RSP) + off, RBP saved at slot (0: unchanged) */
static uint64_t step(int rbp, unsigned off, unsigned slot)
{
    return MTR_CFI_STEP | (rbp ? 4u : 0u) | (slot ? 8u | (slot << 4) : 0u) | ((uint64_t)(off / 8) << 12);
}

/* A chain of calls whose innermost walks its own stack. */
static uintptr_t ra_of[4];
static int walked;
static uintptr_t frames[64];

__attribute__((noinline)) static void chain3(void)
{
    ra_of[3] = (uintptr_t)__builtin_return_address(0);
    int tr;
    walked = mtr_cfi_backtrace(frames, 64, &tr);
    __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) static void chain2(void)
{
    ra_of[2] = (uintptr_t)__builtin_return_address(0);
    chain3();
    __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) static void chain1(void)
{
    ra_of[1] = (uintptr_t)__builtin_return_address(0);
    chain2();
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    /* Function A, -O2 without frame pointer:
     *   +0 push rbx     +1 sub rsp,32     +5 ... +0x20 remember; add rsp,32
     *   +0x24 pop rbx   +0x25 ret         +0x26 restore_state ... +0x40 */
    static const char a_ins[] = {
        0x41, 0x0e, 16, (char)0x83, 2,      /* advance 1; def_cfa_offset 16; rbx at cfa-16 */
        0x44, 0x0e, 48,                     /* advance 4; def_cfa_offset 48 */
        0x5b, 0x0a, 0x0e, 16,               /* advance 0x1b (to +0x20); remember; def_cfa_offset 16 */
        0x44, 0x0e, 8,                      /* advance 4 (+0x24); def_cfa_offset 8 */
        0x42, 0x0b,                         /* advance 2 (+0x26); restore_state */
        0x2e, 0x10,                         /* GNU_args_size 16 */
    };
    /* Function B, frame pointer: +0 push rbp, +1 mov rbp,rsp, +4 body,
     * +0x30 leave (def_cfa rsp 8, restore rbp), +0x31 ret */
    static const char b_ins[] = {
        0x41, 0x0e, 16, (char)0x86, 2,      /* advance 1; def_cfa_offset 16; rbp at cfa-16 */
        0x43, 0x0d, 6,                      /* advance 3; def_cfa_register rbp */
        0x6c, 0x0c, 7, 8, (char)0xc6,       /* advance 0x2c (+0x30); def_cfa rsp 8; restore rbp */
    };
    /* PLT-like: CFA = an expression */
    static const char plt_ins[] = { 0x46, 0x0f, 3, 0x77, 8, 0x1c };
    /* _start: return address undefined */
    static const char start_ins[] = { 0x07, 16 };
    /* unknown opcode 0x3f */
    static const char bad_ins[] = { 0x41, 0x3f };
    /* RBP saved in another register */
    static const char reg_ins[] = { 0x41, 0x09, 6, 3 };
    /* an RSP-based CFA that is not a multiple of 8, then the return address
     * at CFA-16; a deep remember stack */
    static const char odd_ins[] = { 0x41, 0x0e, 13, 0x41, 0x0e, 16, (char)0x90, 2 };
    static const char deep_ins[] = { 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x41 };

    /* header: version, eh_frame_ptr pcrel sdata4, count udata4, table datarel sdata4 */
    u8(1); u8(0x1b); u8(0x03); u8(0x3b);
    s32(0);                                 /* eh_frame_ptr (unused), patched below */
    size_t count_at = len;
    u32(0);
    size_t table_at = len;
    len += 9 * 8;                           /* nine entries */
    size_t c_zr = cie("zR"), c_zplr = cie("zPLR"), c_sig = cie("zRS");
    struct { uintptr_t begin; size_t fde; } e[9];
    e[0].begin = CODE(0x000); e[0].fde = fde(c_zr, CODE(0x000), 0x40, a_ins, sizeof a_ins, 0);
    e[1].begin = CODE(0x040); e[1].fde = fde(c_zplr, CODE(0x040), 0x40, b_ins, sizeof b_ins, 1);
    e[2].begin = CODE(0x080); e[2].fde = fde(c_zr, CODE(0x080), 0x10, plt_ins, sizeof plt_ins, 0);
    e[3].begin = CODE(0x090); e[3].fde = fde(c_sig, CODE(0x090), 0x10, "", 0, 0);
    e[4].begin = CODE(0x0a0); e[4].fde = fde(c_zr, CODE(0x0a0), 0x10, start_ins, sizeof start_ins, 0);
    e[5].begin = CODE(0x0b0); e[5].fde = fde(c_zr, CODE(0x0b0), 0x10, bad_ins, sizeof bad_ins, 0);
    e[6].begin = CODE(0x0c0); e[6].fde = fde(c_zr, CODE(0x0c0), 0x10, reg_ins, sizeof reg_ins, 0);
    e[7].begin = CODE(0x0d0); e[7].fde = fde(c_zr, CODE(0x0d0), 0x10, odd_ins, sizeof odd_ins, 0);
    e[8].begin = CODE(0x0e0); e[8].fde = fde(c_zr, CODE(0x0e0), 0x10, deep_ins, sizeof deep_ins, 0);
    u32(0);                                 /* .eh_frame's terminator */
    uint32_t count = 9;
    memcpy(img + count_at, &count, 4);
    for (int i = 0; i < 9; i++) {
        int32_t b = (int32_t)(e[i].begin - (uintptr_t)img), f = (int32_t)e[i].fde;
        memcpy(img + table_at + 8 * i, &b, 4);
        memcpy(img + table_at + 8 * i + 4, &f, 4);
    }
    CHECK(len < 2048, "the image fits (%zu bytes)", len);
    struct mtr_cfi_mod m = mod();

    /* A: RSP-based, RBP unchanged throughout */
    CHECK(mtr_cfi_rule_at(&m, CODE(0x00)) == step(0, 8, 0), "A at entry: CFA = RSP+8");
    CHECK(mtr_cfi_rule_at(&m, CODE(0x01)) == step(0, 16, 0), "A after push rbx: CFA = RSP+16");
    CHECK(mtr_cfi_rule_at(&m, CODE(0x04)) == step(0, 16, 0), "A just before sub: still RSP+16");
    CHECK(mtr_cfi_rule_at(&m, CODE(0x05)) == step(0, 48, 0), "A in its body: CFA = RSP+48");
    CHECK(mtr_cfi_rule_at(&m, CODE(0x1f)) == step(0, 48, 0), "A at the body's last byte: RSP+48");
    CHECK(mtr_cfi_rule_at(&m, CODE(0x20)) == step(0, 16, 0), "A in its epilogue: RSP+16");
    CHECK(mtr_cfi_rule_at(&m, CODE(0x24)) == step(0, 8, 0), "A at ret: RSP+8");
    CHECK(mtr_cfi_rule_at(&m, CODE(0x26)) == step(0, 48, 0), "A after restore_state: RSP+48 again");
    CHECK(mtr_cfi_rule_at(&m, CODE(0x3f)) == step(0, 48, 0), "A's last byte: RSP+48");
    /* B: frame pointer, through a CIE with a personality and an LSDA */
    CHECK(mtr_cfi_rule_at(&m, CODE(0x40)) == step(0, 8, 0), "B at entry: RSP+8");
    CHECK(mtr_cfi_rule_at(&m, CODE(0x41)) == step(0, 16, 2), "B after push rbp: RSP+16, RBP at CFA-16");
    CHECK(mtr_cfi_rule_at(&m, CODE(0x44)) == step(1, 16, 2), "B's body: CFA = RBP+16, RBP at CFA-16");
    CHECK(mtr_cfi_rule_at(&m, CODE(0x6f)) == step(1, 16, 2), "B before leave: RBP+16");
    CHECK(mtr_cfi_rule_at(&m, CODE(0x70)) == step(0, 8, 0), "B after leave: RSP+8, RBP restored (unchanged)");
    /* what the fast path leaves to libunwind, and the outermost frame */
    CHECK(mtr_cfi_rule_at(&m, CODE(0x80)) == step(0, 8, 0), "PLT entry's first byte: RSP+8");
    CHECK(mtr_cfi_rule_at(&m, CODE(0x86)) == MTR_CFI_FALLBACK, "PLT entry: a CFA expression falls back");
    CHECK(mtr_cfi_rule_at(&m, CODE(0x90)) == MTR_CFI_FALLBACK, "a signal frame ('S') falls back");
    CHECK(mtr_cfi_rule_at(&m, CODE(0xa5)) == MTR_CFI_END, "return address undefined: the outermost frame");
    CHECK(mtr_cfi_rule_at(&m, CODE(0xb0)) == step(0, 8, 0), "before an unknown opcode: its row holds");
    CHECK(mtr_cfi_rule_at(&m, CODE(0xb1)) == MTR_CFI_FALLBACK, "an unknown opcode falls back");
    CHECK(mtr_cfi_rule_at(&m, CODE(0xc1)) == MTR_CFI_FALLBACK, "RBP in another register falls back");
    CHECK(mtr_cfi_rule_at(&m, CODE(0xd0)) == step(0, 8, 0), "the CIE's initial rules alone: RSP+8");
    CHECK(mtr_cfi_rule_at(&m, CODE(0xd1)) == MTR_CFI_FALLBACK, "a CFA offset not a multiple of 8 falls back");
    CHECK(mtr_cfi_rule_at(&m, CODE(0xd2)) == MTR_CFI_FALLBACK, "return address not at CFA-8 falls back");
    CHECK(mtr_cfi_rule_at(&m, CODE(0xe1)) == MTR_CFI_FALLBACK, "remember_state nine deep falls back");
    CHECK(mtr_cfi_rule_at(&m, CODE(0xf0)) == MTR_CFI_FALLBACK, "past the last FDE's range: no rule");
    CHECK(mtr_cfi_rule_at(&m, CODE(0) - 1) == MTR_CFI_FALLBACK, "before the first function: no rule");

    /* malformed tables: never a read outside the segment */
    struct mtr_cfi_mod small = m;
    small.hi[0] = (uintptr_t)img + e[1].fde + 8;   /* B's FDE cut by the segment's end */
    CHECK(mtr_cfi_rule_at(&small, CODE(0x44)) == MTR_CFI_FALLBACK, "an FDE past its segment's end falls back");
    small.hi[0] = (uintptr_t)img + table_at + 8 * 4;   /* the table cut */
    CHECK(mtr_cfi_rule_at(&small, CODE(0x44)) == MTR_CFI_FALLBACK, "a table past its segment's end falls back");
    struct mtr_cfi_mod none = m;
    none.hdr = 0;
    CHECK(mtr_cfi_rule_at(&none, CODE(0x44)) == MTR_CFI_FALLBACK, "a module without .eh_frame_hdr falls back");
    unsigned char save[4];
    memcpy(save, img + e[0].fde + 4, 4);
    uint32_t wild = 0x7fffff00;
    memcpy(img + e[0].fde + 4, &wild, 4);
    CHECK(mtr_cfi_rule_at(&m, CODE(0x05)) == MTR_CFI_FALLBACK, "a CIE pointer out of the image falls back");
    memcpy(img + e[0].fde + 4, save, 4);
    memcpy(save, img + c_zr + 8, 1);
    img[c_zr + 8] = 2;
    CHECK(mtr_cfi_rule_at(&m, CODE(0x05)) == MTR_CFI_FALLBACK, "a CIE of an unknown version falls back");
    memcpy(img + c_zr + 8, save, 1);
    CHECK(mtr_cfi_rule_at(&m, CODE(0x05)) == step(0, 48, 0), "the image restored reads as before");
    img[0] = 2;
    CHECK(mtr_cfi_rule_at(&m, CODE(0x05)) == MTR_CFI_FALLBACK, "an .eh_frame_hdr of another version falls back");
    img[0] = 1;

    /* the step, on a fake stack: [rsp] holds B's frame */
    uintptr_t stack[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
    uintptr_t lo = (uintptr_t)stack, hi = (uintptr_t)(stack + 8);
    stack[4] = 0x1111;               /* saved RBP at CFA-16 */
    stack[5] = 0x2222;               /* return address at CFA-8 */
    uintptr_t pc = 0, rsp = (uintptr_t)&stack[2], rbp = (uintptr_t)&stack[4];
    int rc = mtr_cfi_step(step(1, 16, 2), &pc, &rsp, &rbp, lo, hi);
    CHECK(rc == 0 && pc == 0x2222 && rsp == (uintptr_t)&stack[6] && rbp == 0x1111,
          "step, CFA = RBP+16: return address, caller's RSP and RBP read (pc %#lx rbp %#lx)",
          (unsigned long)pc, (unsigned long)rbp);
    pc = 0, rsp = (uintptr_t)&stack[2], rbp = 77;
    rc = mtr_cfi_step(step(0, 32, 0), &pc, &rsp, &rbp, lo, hi);
    CHECK(rc == 0 && pc == 0x2222 && rsp == (uintptr_t)&stack[6] && rbp == 77,
          "step, CFA = RSP+32, RBP unchanged");
    pc = 5, rsp = (uintptr_t)&stack[2], rbp = 77;
    rc = mtr_cfi_step(step(0, 56, 0), &pc, &rsp, &rbp, lo, hi);
    CHECK(rc == -1 && pc == 5 && rbp == 77, "step: a return address at the stack's top end is refused");
    rc = mtr_cfi_step(step(0, 48, 0), &pc, &rsp, &rbp, lo, hi);
    CHECK(rc == 0, "step: the last slot inside the stack is read");
    pc = 5, rsp = (uintptr_t)&stack[2], rbp = 77;
    rc = mtr_cfi_step(step(0, 16, 5), &pc, &rsp, &rbp, lo, hi);
    CHECK(rc == -1 && pc == 5 && rbp == 77, "step: a saved RBP below the stack is refused");
    static volatile uintptr_t wild_rbp[2] = { (uintptr_t)-64, 0 };   /* unknown to the compiler */
    rsp = (uintptr_t)&stack[2], rbp = wild_rbp[0];
    rc = mtr_cfi_step(step(1, 16, 0), &pc, &rsp, &rbp, lo, hi);
    CHECK(rc == -1 && pc == 5, "step: a CFA that wraps around is refused");
    rsp = (uintptr_t)&stack[2], rbp = wild_rbp[1];
    rc = mtr_cfi_step(step(1, 16, 0), &pc, &rsp, &rbp, lo, hi);
    CHECK(rc == -1 && pc == 5, "step: an RBP-based CFA from RBP 0 is refused");

    /* the walk and its cache on this program's own stack */
    mtr_unwind_init_main_thread();
    static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
    CHECK(mtr_cfi_setup(&lock) == 0, "the rule cache is mapped");
    chain1();
    CHECK(walked >= 4, "the walk went through (%d frames)", walked);
    CHECK(walked >= 4 && frames[1] == ra_of[3] && frames[2] == ra_of[2] && frames[3] == ra_of[1],
          "the walk's frames are the chain's return addresses, innermost first");
    int again = walked;
    chain1();
    CHECK(walked == again && frames[1] == ra_of[3], "walked again from the cache: the same frames");
    CHECK(mtr_cfi_kind(mtr_cfi_cached(ra_of[2])) == MTR_CFI_STEP, "the rule of a return address is cached");
    uintptr_t stop[64];
    int tr = 0;
    int cut = mtr_cfi_backtrace(stop, 2, &tr);
    CHECK(cut == 2 && tr == 1, "the walk stops at its capacity, truncated (%d)", cut);
    /* a thread whose bounds are unknown, or a stack cut short: libunwind's */
    uintptr_t keep_hi = mtr_tls.stack_hi;
    mtr_tls.stack_hi = 0;
    chain1();
    CHECK(walked == -1, "no known stack bounds: the walk is left to libunwind (%d)", walked);
    mtr_tls.stack_hi = (uintptr_t)__builtin_frame_address(0);   /* main's frame is outside */
    chain1();
    CHECK(walked == -1, "a frame beyond the stack's bounds: the walk is left to libunwind (%d)", walked);
    mtr_tls.stack_hi = keep_hi;
    chain1();
    CHECK(walked == again, "the bounds back: the whole walk again (%d)", walked);
    /* dlclose (lib/record/exec.c's wrapper, linked into this test) empties it */
    void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
    if (h)
        dlclose(h);
    CHECK(h && mtr_cfi_cached(ra_of[2]) == 0, "dlclose empties the rule cache");
    return failures != 0;
}
