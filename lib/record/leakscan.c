/*
 * leakscan.c - the marking of the leak scan (docs/leaks.md, "How it
 * works").
 *
 * Nodes are what can be lost; roots what is alive by itself.
 *
 * With glibc's malloc ("heap" mode) every block of the heap is a node,
 * sampled or not: the chunks of the main arena (walked by their size fields
 * from the start of [heap]), of every thread arena (a 64 MiB-aligned
 * mapping that starts with a heap_info header) and the chunks malloc mapped
 * by themselves (IS_MMAPPED, at the start of an anonymous mapping). A chunk
 * is in use when the next chunk's PREV_INUSE bit says so. Per arena region
 * two bitmaps, a bit per 16 bytes: where an in-use chunk starts, and which
 * are marked. A heap that does not walk cleanly from its start to its end
 * sends the whole scan to the conservative mode.
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
 * count) marks it; marked nodes are scanned in turn, from an explicit
 * stack. A sampled block is reachable if its node is marked, lost if not.
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "leaks.h"

#define ARENA_ALIGN ((uintptr_t)64 << 20)   /* glibc's HEAP_MAX_SIZE on 64-bit */
#define MALLOC_STATE_SIZE 2200              /* sizeof(struct malloc_state), glibc >= 2.26 */
#define RED_ZONE 128
#define READ_CHUNK ((size_t)1 << 20)

struct region {
    uintptr_t lo, hi;      /* lookups in [lo, hi) */
    uintptr_t first, end;  /* arena: chunks lie in [first, end) */
    uintptr_t maxchunk;    /* arena: the largest chunk size */
    /* arena: word pairs, a cache line holding both bitmaps of a place:
     * start bit g: a chunk at lo + 16 g; mark bit g: that chunk is marked
     * (free chunks are, from the start: never scanned, never a verdict) */
    uint64_t *bits;
    int arena;
    int marked;            /* a single node: [lo, hi) */
};

_Static_assert(sizeof(struct region) % sizeof(uintptr_t) == 0, "regions sort as words");
#define START(r, w) ((r)->bits[2 * (w)])
#define MARK(r, w) ((r)->bits[2 * (w) + 1])

/* Memory latency, not bandwidth, bounds the marking: values that may be
 * pointers wait in a ring while their bitmap words are prefetched, and
 * marked nodes in another while their first lines are. */
#define CRING 16
#define SRING 8

struct scan {
    struct region *reg;
    size_t nreg, capreg, reg_bytes;
    uintptr_t gmin, gspan;
    uintptr_t *stack;      /* [lo, hi) pairs of marked nodes to scan */
    size_t sp, cap;
    uintptr_t *holes;      /* sorted [lo, hi) pairs that are not roots */
    size_t nholes, capholes;
    uint64_t *bits;        /* the arenas' bitmaps */
    size_t bits_bytes;
    size_t memory, peak_memory;
    uint64_t root_bytes, heap_bytes;
    int failed;
    pid_t pid;
    char *buf;
    struct { uintptr_t v; struct region *r; } cring[CRING];
    unsigned chead, cn;
    uintptr_t sring[SRING][2];
    unsigned shead, sn;
};

MT_NO_ASAN
static uintptr_t W(uintptr_t a)
{
    return *(const uintptr_t *)a;
}

/* n bytes at a into dst through the kernel: 0, or -1 when they cannot be
 * read (a guard region inside a mapping). For looking at memory not yet
 * known to be malloc's. */
static int safe_read(void *dst, uintptr_t a, size_t n)
{
    struct iovec l = { dst, n }, r = { (void *)a, n };
    return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
}

static void count_mem(struct scan *s, size_t delta)
{
    s->memory += delta;
    if (s->memory > s->peak_memory)
        s->peak_memory = s->memory;
}

static int add_region(struct scan *s, const struct region *r)
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

/* ---- the heap walk (glibc) ---- */

/* Walk the chunks of [c, end); with bits, record where chunks start and
 * mark the free ones (bit per 16 bytes from lo). 0 if the chunks tile the
 * range (ending at end, or at the fencepost of a heap malloc left), -1 if
 * not. */
MT_NO_ASAN
static int walk(uintptr_t c, uintptr_t end, uintptr_t lo, uint64_t *bits, uintptr_t *maxchunk)
{
    if (c & 15)
        return -1;
    while (c < end) {
        if (c + 16 > end)
            return -1;
        uintptr_t sz = W(c + 8) & ~(uintptr_t)7;
        if (sz == 0)
            return end - c < 64 ? 0 : -1;   /* the closing fencepost */
        if (sz & 15 || sz > end - c)
            return -1;
        uintptr_t next = c + sz;
        int inuse = next + 16 <= end && (W(next + 8) & 1);
        if (bits) {
            uintptr_t g = (c - lo) >> 4;
            uint64_t bit = (uint64_t)1 << (g & 63);
            bits[2 * (g >> 6)] |= bit;
            if (!inuse)
                bits[2 * (g >> 6) + 1] |= bit;
        }
        if (sz > *maxchunk)
            *maxchunk = sz;
        c = next;
    }
    return c == end ? 0 : -1;
}

static size_t bitmap_words(uintptr_t len);

/* An arena region [lo, end) whose chunks start at first; bits: its bitmaps,
 * zero (left zero if the chunks do not walk). */
static int add_arena(struct scan *s, uintptr_t lo, uintptr_t first, uintptr_t end,
                     uint64_t *bits)
{
    struct region r;
    memset(&r, 0, sizeof r);
    r.lo = lo;
    r.hi = end;
    r.first = first;
    r.end = end;
    r.arena = 1;
    r.bits = bits;
    if (walk(first, end, lo, bits, &r.maxchunk) != 0) {
        memset(bits, 0, 2 * bitmap_words(end - lo) * sizeof *bits);
        return -1;
    }
    return add_region(s, &r);
}

/* Bits needed for a region of len bytes: two bitmaps of len / 16 bits. */
static size_t bitmap_words(uintptr_t len)
{
    return (size_t)((len / 16 + 63) / 64);
}

/* A thread arena's heap at a (64 MiB-aligned) inside [a, limit): its
 * heap_info gives its size; the chunks start after the header (and after
 * the arena's malloc_state in the arena's first heap). */
MT_NO_ASAN
static int try_thread_heap(struct scan *s, uintptr_t a, uintptr_t limit, uint64_t **bits_next,
                           uint64_t *bits_end)
{
    uintptr_t h[4];
    if (limit - a < 4096 || safe_read(h, a, sizeof h) != 0)
        return -1;
    uintptr_t ar = h[0], size = h[2], mprot = h[3];
    if (!ar || size < 4096 || size > ARENA_ALIGN || (size & 4095) || size > limit - a ||
        mprot < size || mprot > ARENA_ALIGN)
        return -1;
    size_t words = bitmap_words(size);
    if (*bits_next + 2 * words > bits_end)
        return -1;
    static const uintptr_t infos[] = { 48, 32 };   /* sizeof(heap_info), >= 2.35 and before */
    for (int k = 0; k < 2; k++) {
        uintptr_t first;
        uintptr_t mc = 0;
        if (ar == a + infos[k]) {
            uintptr_t p = ar + MALLOC_STATE_SIZE;
            if ((p + 16) & 15)
                p += 16 - ((p + 16) & 15);
            first = p;
            if (walk(first, a + size, a, NULL, &mc) != 0) {
                /* Another malloc_state size: find the first chunk that tiles. */
                first = 0;
                for (uintptr_t q = ar + 1024; q < ar + 4096; q += 16)
                    if (mc = 0, walk(q, a + size, a, NULL, &mc) == 0) {
                        first = q;
                        break;
                    }
                if (!first)
                    continue;
            }
        } else {
            first = a + infos[k];
            if (walk(first, a + size, a, NULL, &mc) != 0)
                continue;
        }
        uint64_t *bits = *bits_next;
        *bits_next += 2 * words;
        if (add_arena(s, a, first, a + size, bits) != 0)
            return -1;
        return 0;
    }
    return -1;
}

/* Chunks malloc mapped by themselves, at the start of an anonymous mapping
 * (mappings next to each other show as one). */
MT_NO_ASAN
static void mmapped_chunks(struct scan *s, uintptr_t lo, uintptr_t hi)
{
    uintptr_t pos = lo;
    while (pos + 4096 <= hi) {
        uintptr_t h[2];
        if (safe_read(h, pos, sizeof h) != 0)
            return;
        uintptr_t ps = h[0], sz = h[1];
        if (ps != 0 || (sz & 7) != 2)
            return;
        sz &= ~(uintptr_t)7;
        if (!sz || (sz & 4095) || sz > hi - pos)
            return;
        struct region r;
        memset(&r, 0, sizeof r);
        r.lo = pos + 16;
        r.hi = pos + sz;
        if (add_region(s, &r) != 0)
            return;
        pos += sz;
    }
}

/* A sampled block that is in no region yet may be a chunk malloc mapped by
 * itself in a mapping the kernel merged with its neighbour (so that the
 * chunk is not at the start of what /proc shows): its header says so. */
static struct region *region_of(struct scan *s, uintptr_t v);
static void sampled_mmapped_chunks(struct scan *s, const struct mtr_lk_block *b, size_t n)
{
    size_t before = s->nreg;
    for (size_t i = 0; i < n; i++) {
        uintptr_t h[2], c = b[i].addr - 16;
        if (region_of(s, b[i].addr) || safe_read(h, c, sizeof h) != 0)
            continue;
        uintptr_t ps = h[0], sz = h[1] & ~(uintptr_t)7;
        if ((h[1] & 7) != 2 || ps & 15 || ((c - ps) & 4095) || ((ps + sz) & 4095) || sz < 4096)
            continue;
        uintptr_t t[2];   /* the chunk's last word must be readable too */
        if (safe_read(t, c + sz - 16, sizeof t) != 0)
            continue;
        int dup = 0;
        for (size_t k = before; k < s->nreg && !dup; k++)
            dup = s->reg[k].lo == c + 16;
        struct region r;
        memset(&r, 0, sizeof r);
        r.lo = c + 16;
        r.hi = c + sz;
        if (!dup && add_region(s, &r) != 0)
            return;
    }
    if (s->nreg > before)
        mtr_lk_sort((uintptr_t *)s->reg, s->nreg, sizeof(struct region) / sizeof(uintptr_t));
}

/* The nodes of heap mode. 0, or -1: some heap does not walk. */
MT_NO_ASAN
static int heap_nodes(struct scan *s, const struct mtr_lk_maps *maps)
{
    /* The bitmaps: sized for every candidate region at once. */
    size_t words = 0;
    for (size_t i = 0; i < maps->n; i++) {
        const struct mtr_lk_map *m = &maps->v[i];
        if (!m->r || !m->w)
            continue;
        if (m->kind == MTR_LK_HEAP)
            words += 2 * bitmap_words(m->hi - m->lo);
        else if (m->anon && m->kind == MTR_LK_PLAIN)
            for (uintptr_t a = (m->lo + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1); a < m->hi && a >= m->lo;
                 a += ARENA_ALIGN)
                words += 2 * bitmap_words(m->hi - a < ARENA_ALIGN ? m->hi - a : ARENA_ALIGN);
    }
    s->bits_bytes = (words + 1) * 8;
    s->bits = mtr_lk_alloc(s->bits_bytes);
    if (!s->bits)
        return -1;
    count_mem(s, s->bits_bytes);
    uint64_t *next = s->bits, *bits_end = s->bits + words + 1;
    int main_seen = 0;
    for (size_t i = 0; i < maps->n; i++) {
        const struct mtr_lk_map *m = &maps->v[i];
        if (!m->r || !m->w)
            continue;
        if (m->kind == MTR_LK_HEAP) {
            if (main_seen++)
                return -1;
            uintptr_t first = m->lo;
            if ((first + 16) & 15)
                first += 16 - ((first + 16) & 15);
            size_t w = bitmap_words(m->hi - m->lo);
            if (add_arena(s, m->lo, first, m->hi, next) != 0)
                return -1;
            next += 2 * w;
        } else if (m->anon && m->kind == MTR_LK_PLAIN) {
            uintptr_t first_arena = 0;
            for (uintptr_t a = (m->lo + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1); a < m->hi && a >= m->lo;
                 a += ARENA_ALIGN)
                if (try_thread_heap(s, a, m->hi, &next, bits_end) == 0 && !first_arena)
                    first_arena = a;
            if (first_arena != m->lo)
                mmapped_chunks(s, m->lo, first_arena ? first_arena : m->hi);
        }
    }
    return 0;
}

/* ---- lookups and marking ---- */

/* The region whose range holds v, or NULL. */
static struct region *region_of(struct scan *s, uintptr_t v)
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
    int heap = in->glibc && heap_nodes(&s, in->maps) == 0;
    if (heap) {
        res->mode = "heap";
        mtr_lk_sort((uintptr_t *)s.reg, s.nreg, sizeof(struct region) / sizeof(uintptr_t));
        sampled_mmapped_chunks(&s, b, n);
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
