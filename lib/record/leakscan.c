/*
 * leakscan.c - the marking of the leak scan (docs/leaks.md, "How it
 * works").
 *
 * Nodes are what can be lost; roots what is alive by itself.
 *
 * With glibc's malloc ("heap" mode) every block of the heap is a node,
 * sampled or not (leakheap.c finds them). A heap that does not walk
 * cleanly from its start to its end sends the whole scan to the
 * conservative mode.
 *
 * With another allocator, or when a walk fails ("conservative" mode), only
 * the sampled blocks are nodes: everything else that is writable counts as
 * a root, the allocator's free and unsampled memory included.
 *
 * Roots: every readable and writable mapping minus the nodes and the
 * recorder's own memory (its table of sampled blocks holds their
 * addresses), a thread's stack only from its stack pointer (less the red
 * zone) up, device mappings never; the saved registers of every thread;
 * and a heap block that holds a thread's stack pointer or thread pointer
 * (a stack or TLS in malloc'd memory). Roots are read with process_vm_readv,
 * so that a mapping that cannot be read (a file mapping past the end of its
 * file) is skipped instead of faulting.
 *
 * Any aligned word whose value falls inside a node (interior pointers
 * count) marks it, except, in heap mode, the exact address of a chunk's
 * header (malloc's lists and their stale copies, which would otherwise
 * hold the chunk before it); marked nodes are scanned in turn, from an
 * explicit stack. A sampled block is reachable if its node is marked,
 * lost if not.
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "leakmark.h"

#define RED_ZONE 128
#define READ_CHUNK ((size_t)1 << 20)
#define W mtr_lk_word
#define safe_read mtr_lk_safe_read
#define add_region mtr_lk_add_region
#define count_mem mtr_lk_count_mem
#define region_of mtr_lk_region_of

int mtr_lk_safe_read(void *dst, uintptr_t a, size_t n)
{
    struct iovec l = { dst, n }, r = { (void *)a, n };
    return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
}

void mtr_lk_count_mem(struct scan *s, size_t delta)
{
    s->memory += delta;
    if (s->memory > s->peak_memory)
        s->peak_memory = s->memory;
}

int mtr_lk_add_region(struct scan *s, const struct region *r)
{
    if (s->nreg == s->capreg) {
        size_t cap = s->capreg ? s->capreg * 2 : 256;
        struct region *v = mtr_lk_alloc(cap * sizeof *v);
        if (!v)
            return -1;
        if (s->nreg)
            memcpy(v, s->reg, s->nreg * sizeof *v);
        mtr_lk_free(s->reg, s->reg_bytes);
        count_mem(s, cap * sizeof *v - s->reg_bytes);
        s->reg = v;
        s->capreg = cap;
        s->reg_bytes = cap * sizeof *v;
    }
    s->reg[s->nreg++] = *r;
    return 0;
}

static int add_hole(struct scan *s, uintptr_t lo, uintptr_t hi)
{
    if (hi <= lo)
        return 0;
    if (s->nholes == s->capholes) {
        size_t cap = s->capholes ? s->capholes * 2 : 1024;
        uintptr_t *v = mtr_lk_alloc(cap * 2 * sizeof *v);
        if (!v)
            return -1;
        if (s->nholes)
            memcpy(v, s->holes, s->nholes * 2 * sizeof *v);
        mtr_lk_free(s->holes, s->capholes * 2 * sizeof *v);
        count_mem(s, (cap - s->capholes) * 2 * sizeof *v);
        s->holes = v;
        s->capholes = cap;
    }
    s->holes[2 * s->nholes] = lo;
    s->holes[2 * s->nholes + 1] = hi;
    s->nholes++;
    return 0;
}

static void hole_cb(void *ctx, uintptr_t lo, uintptr_t hi)
{
    struct scan *s = ctx;
    if (add_hole(s, lo, hi) != 0)
        s->failed = 1;
}

static int push(struct scan *s, uintptr_t lo, uintptr_t hi)
{
    if (s->sp + 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 65536;
        uintptr_t *v = mtr_lk_alloc(cap * sizeof *v);
        if (!v) {
            s->failed = 1;
            return -1;
        }
        if (s->sp)
            memcpy(v, s->stack, s->sp * sizeof *v);
        mtr_lk_free(s->stack, s->cap * sizeof *v);
        count_mem(s, (cap - s->cap) * sizeof *v);
        s->stack = v;
        s->cap = cap;
    }
    s->stack[s->sp++] = lo;
    s->stack[s->sp++] = hi;
    return 0;
}

/* ---- lookups and marking ---- */

struct region *mtr_lk_region_of(struct scan *s, uintptr_t v)
{
    size_t lo = 0, hi = s->nreg;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->reg[mid].lo <= v)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo)
        return NULL;
    struct region *r = &s->reg[lo - 1];
    return v < r->hi ? r : NULL;
}

/* In arena r, the chunk whose memory holds v: its address, or 0. Every
 * chunk starts a bit, so the header is not read (a pointer to the size
 * field of a chunk counts for the chunk before it). */
MT_NO_ASAN
static uintptr_t chunk_of(const struct region *r, uintptr_t v)
{
    if (v < r->first + 16 || v >= r->end)
        return 0;
    uintptr_t g = (v - 16 - r->lo) >> 4;
    uintptr_t gmin = (r->first - r->lo) >> 4;
    uintptr_t glimit = r->maxchunk >> 4;
    uintptr_t stop = g - gmin > glimit ? g - glimit : gmin;
    size_t wi = g >> 6;
    uint64_t b = START(r, wi);
    unsigned bit = g & 63;
    if (bit != 63)
        b &= ((uint64_t)2 << bit) - 1;
    while (!b) {
        if (wi == 0 || ((uintptr_t)wi << 6) <= stop)
            return 0;
        --wi;
        b = START(r, wi);
    }
    uintptr_t gc = ((uintptr_t)wi << 6) + 63 - (uintptr_t)__builtin_clzll(b);
    if (gc < gmin)
        return 0;
    return r->lo + (gc << 4);   /* (a free chunk is marked already) */
}

/* v points into region r: mark its node (and queue it) if it is not. */
MT_NO_ASAN
static void resolve(struct scan *s, uintptr_t v, struct region *r)
{
    if (!r->arena) {
        if (!r->marked) {
            r->marked = 1;
            push(s, r->lo, r->hi);
        }
        return;
    }
    if (!((v - r->lo) & 15)) {
        /* Exactly a chunk's start (its header): what malloc's own lists
         * hold (main_arena's bins, top and last_remainder, and the stale
         * links a recycled chunk still carries), not a reference to the
         * chunk before it, whose last usable word it also is. */
        uintptr_t g0 = (v - r->lo) >> 4;
        if (v >= r->first && v < r->end && ((START(r, g0 >> 6) >> (g0 & 63)) & 1))
            return;
    }
    uintptr_t c = chunk_of(r, v);
    if (!c)
        return;
    uintptr_t g = (c - r->lo) >> 4;
    uint64_t bit = (uint64_t)1 << (g & 63);
    if (MARK(r, g >> 6) & bit)
        return;
    MARK(r, g >> 6) |= bit;
    push(s, c, 0);   /* an arena chunk: its size is read when it is scanned */
}

static void resolve_oldest(struct scan *s)
{
    unsigned h = s->chead;
    s->chead = (h + 1) % CRING;
    s->cn--;
    resolve(s, s->cring[h].v, s->cring[h].r);
}

/* v may point into a node: into the ring, its bitmap word prefetched. */
static inline void consider(struct scan *s, uintptr_t v)
{
    if (v - s->gmin >= s->gspan)
        return;
    struct region *r = region_of(s, v);
    if (!r)
        return;
    if (r->arena && v >= r->first + 16 && v < r->end)
        __builtin_prefetch(&r->bits[2 * (((v - 16 - r->lo) >> 4) >> 6)], 1);
    if (s->cn == CRING)
        resolve_oldest(s);
    unsigned t = (s->chead + s->cn) % CRING;
    s->cring[t].v = v;
    s->cring[t].r = r;
    s->cn++;
}

static void flush_candidates(struct scan *s)
{
    while (s->cn)
        resolve_oldest(s);
}

/* Is the node holding v marked? -1: v is in no node. */
static int marked(struct scan *s, uintptr_t v)
{
    struct region *r = region_of(s, v);
    if (!r)
        return -1;
    if (!r->arena)
        return r->marked;
    uintptr_t c = chunk_of(r, v);
    if (!c)
        return -1;
    uintptr_t g = (c - r->lo) >> 4;
    return (int)(MARK(r, g >> 6) >> (g & 63)) & 1;
}

static void consider_words(struct scan *s, const uintptr_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        consider(s, w[i]);
}

/* Scan a root range through process_vm_readv; unreadable pages are skipped. */
static void scan_root(struct scan *s, uintptr_t lo, uintptr_t hi)
{
    lo = (lo + 7) & ~(uintptr_t)7;
    hi &= ~(uintptr_t)7;
    while (lo < hi) {
        size_t n = hi - lo < READ_CHUNK ? hi - lo : READ_CHUNK;
        struct iovec l = { s->buf, n }, r = { (void *)lo, n };
        ssize_t got = process_vm_readv(s->pid, &l, 1, &r, 1, 0);
        if (got <= 0) {
            lo = (lo + 4096) & ~(uintptr_t)4095;
            continue;
        }
        consider_words(s, (const uintptr_t *)s->buf, (size_t)got / 8);
        s->root_bytes += (uint64_t)got;
        lo += (uintptr_t)got & ~(uintptr_t)7;
    }
}

/* Scan [lo, hi) less the holes. */
static void scan_root_less_holes(struct scan *s, uintptr_t lo, uintptr_t hi)
{
    size_t a = 0, b = s->nholes;   /* the first hole ending after lo */
    while (a < b) {
        size_t m = (a + b) / 2;
        if (s->holes[2 * m + 1] <= lo)
            a = m + 1;
        else
            b = m;
    }
    for (size_t i = a; i < s->nholes && lo < hi; i++) {
        uintptr_t hl = s->holes[2 * i], hh = s->holes[2 * i + 1];
        if (hl >= hi)
            break;
        if (hl > lo)
            scan_root(s, lo, hl);
        if (hh > lo)
            lo = hh;
    }
    if (lo < hi)
        scan_root(s, lo, hi);
}

/* Scan a queued node: [lo, hi), or (hi 0) the arena chunk at lo. */
MT_NO_ASAN
static void scan_node(struct scan *s, uintptr_t lo, uintptr_t hi)
{
    if (!hi) {
        hi = lo + (W(lo + 8) & ~(uintptr_t)7) + 8;
        lo += 16;
    }
    lo = (lo + 7) & ~(uintptr_t)7;
    s->heap_bytes += hi - lo;
    for (uintptr_t a = lo; a + 8 <= hi; a += 8)
        consider(s, W(a));
}

/* Scan every marked node, and what they mark, until nothing is left. */
static void drain(struct scan *s)
{
    for (;;) {
        while ((s->sp || s->sn) && !s->failed) {
            while (s->sn < SRING && s->sp) {
                uintptr_t hi = s->stack[--s->sp], lo = s->stack[--s->sp];
                __builtin_prefetch((const void *)lo);
                __builtin_prefetch((const void *)(lo + 64));
                unsigned t = (s->shead + s->sn) % SRING;
                s->sring[t][0] = lo;
                s->sring[t][1] = hi;
                s->sn++;
            }
            unsigned h = s->shead;
            s->shead = (h + 1) % SRING;
            s->sn--;
            scan_node(s, s->sring[h][0], s->sring[h][1]);
        }
        if (!s->cn || s->failed)
            return;
        flush_candidates(s);
    }
}

/* The lowest stack pointer that lies in m, if m is a stack (the main one,
 * or a mapping with a guard page right below it); else 0. */
static uintptr_t stack_floor(const struct mtr_lk_input *in, size_t i)
{
    const struct mtr_lk_map *m = &in->maps->v[i];
    int stacklike = m->kind == MTR_LK_STACK ||
                    (i > 0 && in->maps->v[i - 1].hi == m->lo && !in->maps->v[i - 1].r &&
                     !in->maps->v[i - 1].w);
    if (!stacklike)
        return 0;
    uintptr_t best = 0;
    for (size_t t = 0; t <= in->threads->n; t++) {
        uintptr_t sp = t < in->threads->n ? in->threads->v[t].sp : in->self_sp;
        if (sp >= m->lo && sp < m->hi && (!best || sp < best))
            best = sp;
    }
    if (!best)
        return 0;
    return best - RED_ZONE > m->lo ? best - RED_ZONE : m->lo;
}

int mtr_lk_mark(const struct mtr_lk_input *in, struct mtr_lk_block *b, size_t n,
                struct mtr_lk_result *res)
{
    struct scan s;
    memset(&s, 0, sizeof s);
    s.pid = getpid();
    res->mode = "conservative";
    s.buf = mtr_lk_alloc(READ_CHUNK);
    if (!s.buf)
        return -1;
    count_mem(&s, READ_CHUNK);
    int heap = in->glibc && mtr_lk_heap_nodes(&s, in->maps) == 0;
    if (heap) {
        res->mode = "heap";
        mtr_lk_sort((uintptr_t *)s.reg, s.nreg, sizeof(struct region) / sizeof(uintptr_t));
        mtr_lk_sampled_mmapped(&s, b, n);
    } else {
        /* Conservative: the sampled blocks are the nodes. */
        s.nreg = 0;
        mtr_lk_free(s.bits, s.bits_bytes);
        s.bits = NULL;
        for (size_t i = 0; i < n; i++) {
            struct region r;
            memset(&r, 0, sizeof r);
            r.lo = b[i].addr;
            r.hi = b[i].end;
            if (r.hi > r.lo && (!s.nreg || s.reg[s.nreg - 1].hi <= r.lo))
                if (add_region(&s, &r) != 0)
                    s.failed = 1;
        }
    }
    for (size_t i = 0; i < s.nreg && !s.failed; i++)
        if (add_hole(&s, s.reg[i].lo, s.reg[i].hi) != 0)
            s.failed = 1;
    for (size_t i = 0; i < in->nexcl; i++)
        add_hole(&s, in->excl[2 * i], in->excl[2 * i + 1]);
    mtr_lk_own_ranges(hole_cb, &s);
    if (s.failed)
        goto out;
    mtr_lk_sort(s.holes, s.nholes, 2);
    if (s.nreg) {
        s.gmin = s.reg[0].lo;
        s.gspan = s.reg[s.nreg - 1].hi - s.gmin;
    }

    /* Roots: registers, heap-held stacks and TLS, then memory. */
    for (size_t t = 0; t < in->threads->n; t++) {
        const struct mtr_lk_thread *th = &in->threads->v[t];
        consider_words(&s, (const uintptr_t *)th->words, th->nwords);
        consider(&s, th->sp);
        consider(&s, th->tp);
        consider(&s, th->tp - 8);
    }
    consider_words(&s, (const uintptr_t *)in->self_words, in->self_nwords);
    consider(&s, in->self_tp);
    consider(&s, in->self_tp - 8);
    for (size_t i = 0; i < in->maps->n; i++) {
        const struct mtr_lk_map *m = &in->maps->v[i];
        if (!m->r || !m->w || m->kind == MTR_LK_SPECIAL || m->kind == MTR_LK_DEVICE)
            continue;
#if defined(__SANITIZE_ADDRESS__) && defined(__x86_64__)
        /* A sanitizer build of the recorder (tests only): AddressSanitizer's
         * shadow, terabytes of flags, holds no pointer. */
        if (m->lo >= 0x7fff8000 && m->hi <= 0x10007fff8000)
            continue;
#endif
        uintptr_t lo = m->lo, floor = stack_floor(in, i);
        if (floor)
            lo = floor & ~(uintptr_t)7;
        scan_root_less_holes(&s, lo, m->hi);
        drain(&s);
    }
    drain(&s);
    if (s.failed)
        goto out;
    for (size_t i = 0; i < n; i++) {
        int k = marked(&s, b[i].addr);
        b[i].verdict = k < 0 ? MTR_LK_UNKNOWN : k ? MTR_LK_REACHABLE : MTR_LK_LOST;
    }
out:
    res->memory = s.peak_memory;
    res->root_bytes = s.root_bytes;
    res->heap_bytes = s.heap_bytes;
    int failed = s.failed;
    mtr_lk_free(s.buf, READ_CHUNK);
    mtr_lk_free(s.bits, s.bits_bytes);
    mtr_lk_free(s.reg, s.reg_bytes);
    mtr_lk_free(s.holes, s.capholes * 2 * sizeof(uintptr_t));
    mtr_lk_free(s.stack, s.cap * sizeof(uintptr_t));
    return failed ? -1 : 0;
}
