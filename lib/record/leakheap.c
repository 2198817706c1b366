/*
 * leakheap.c - glibc's heap as the leak scan's nodes (leakscan.c, "heap"
 * mode): the chunks of the main arena, walked by their size fields from
 * the start of [heap]; of every thread arena, a 64 MiB-aligned mapping that
 * starts with a heap_info header, walked from after it (after the arena's
 * malloc_state in its first heap); and the chunks malloc mapped by
 * themselves (IS_MMAPPED), at the start of an anonymous mapping or found
 * from a sampled block's header. A chunk is in use when the next chunk's
 * PREV_INUSE bit says so. Per arena two bitmaps, a bit per 16 bytes (where
 * a chunk starts, which are marked; free chunks marked from the start). A
 * heap that does not walk cleanly from its start to its end fails the
 * whole walk. Headers of mappings not yet known to be malloc's are read
 * through the kernel (mtr_lk_safe_read).
 */
#include <string.h>

#include "leakmark.h"

#define W mtr_lk_word
#define safe_read mtr_lk_safe_read
#define add_region mtr_lk_add_region
#define count_mem mtr_lk_count_mem
#define region_of mtr_lk_region_of

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
void mtr_lk_sampled_mmapped(struct scan *s, const struct mtr_lk_block *b, size_t n)
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
int mtr_lk_heap_nodes(struct scan *s, const struct mtr_lk_maps *maps)
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
            /* [heap] may show as several mappings end to end (grown after
             * a fork, the kernel could not merge them): one arena. */
            uintptr_t hi = m->hi;
            while (i + 1 < maps->n && maps->v[i + 1].kind == MTR_LK_HEAP && maps->v[i + 1].lo == hi &&
                   maps->v[i + 1].r && maps->v[i + 1].w)
                hi = maps->v[++i].hi;
            uintptr_t first = m->lo;
            if ((first + 16) & 15)
                first += 16 - ((first + 16) & 15);
            size_t w = bitmap_words(hi - m->lo);
            if (add_arena(s, m->lo, first, hi, next) != 0)
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
