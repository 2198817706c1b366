/*
 * ledger.c - the resident-memory ledger (docs/rss.md): one reading of
 * TRACE.rss (smaps by kind, the allocator's statistics, the recorder's own)
 * and the samples live at its time, made into rows that add up to the
 * reading's RSS exactly, each with its source and its 95% interval, the
 * residual its own row, "unexplained".
 */
#include <math.h>
#include <string.h>

#include "memtrace/analyze.h"
#include "load.h"

int mt_ledger_live_samples(const mt_model *m, mt_timedelta t, uint64_t *heap, uint64_t *maps)
{
    *heap = *maps = 0;
    if (mt_model_is_folded(m))
        return -1;
    const mt_alloc *a = mt_model_allocs(m);
    size_t n = mt_model_n_allocs(m);
    for (size_t i = 0; i < n; i++) {
        if (a[i].time > t || a[i].collect <= t)
            continue;
        if (a[i].source == MT_SOURCE_MAJOR)
            *maps += a[i].n_samples;
        else
            *heap += a[i].n_samples;
    }
    return 0;
}

const mt_rss_reading *mt_rss_reading_at(const mt_rss *rss, mt_timedelta at)
{
    if (!rss || rss->nl == 0)
        return NULL;
    if (at == MT_TIME_END)
        return &rss->l[rss->nl - 1];
    if (at == MT_TIME_PEAK) {
        size_t best = 0;
        for (size_t i = 1; i < rss->nl; i++)
            if (rss->l[i].rss > rss->l[best].rss)
                best = i;
        return &rss->l[best];
    }
    size_t k = 0;
    for (size_t i = 0; i < rss->nl && rss->l[i].time <= at; i++)
        k = i;
    return &rss->l[k];
}

/* An estimate from n samples of bps bytes: the figure and its 95% interval
 * (no sample: up to the bytes that go unsampled with probability 5%). */
static void estimate(uint64_t n, double bps, double rate, double *b, double *lo, double *hi)
{
    *b = round((double)n * bps);   /* whole bytes: the rows add up exactly */
    if (rate >= 1) {
        *lo = *hi = *b;
        return;
    }
    double half = 1.959964 * sqrt((double)n) * bps;
    *lo = round(*b - half > 0 ? *b - half : 0);
    *hi = round(n ? *b + half : -log(0.05) * bps);
}

static mt_ledger_row *add(mt_ledger *L, const char *key, const char *name, const char *source,
                          const char *error, double b)
{
    mt_ledger_row *r = &L->row[L->n++];
    r->key = key;
    r->name = name;
    r->source = source;
    r->error = error;
    r->bytes = r->lo = r->hi = b;
    return r;
}

void mt_ledger_make(const mt_rss_reading *rd, uint64_t heap_samples, uint64_t map_samples,
                    double bps, double rate, mt_ledger *L)
{
    memset(L, 0, sizeof *L);
    L->reading = rd;
    L->rss = (double)rd->rss;
    L->pss = (double)rd->pss;
    L->swap = (double)rd->swap;
    L->retained = (double)rd->a_retained;
    L->live_heap_samples = (double)heap_samples;
    L->live_map_samples = (double)map_samples;
    int je = strcmp(rd->alloc, "jemalloc") == 0, tc = strcmp(rd->alloc, "tcmalloc") == 0;

    mt_ledger_row *h = add(L, "live_heap", "live heap", "samples of malloc blocks live then",
                           "95% interval of the sampling", 0);
    estimate(heap_samples, bps, rate, &h->bytes, &h->lo, &h->hi);
    if (h->hi > L->rss)
        h->hi = L->rss;   /* no more can be resident (a trace sampled at almost 0) */
    if (rd->a_inuse >= 0) {
        mt_ledger_row *o = add(L, "allocator_in_use_unsampled", "allocator: in use, beyond the samples",
                               je ? "jemalloc stats.allocated - live heap"
                               : tc ? "tcmalloc generic.current_allocated_bytes - live heap"
                                    : "glibc mallinfo2 uordblks + hblkhd - live heap",
                               "the live heap's interval, mirrored; holds headers, rounding, "
                               "blocks from before the recording",
                               (double)rd->a_inuse - h->bytes);
        o->lo = (double)rd->a_inuse - h->hi;
        o->hi = (double)rd->a_inuse - h->lo;
    }
    if (rd->a_free >= 0)
        add(L, "allocator_free_resident", "allocator: free but resident",
            je ? "jemalloc stats.resident - allocated - metadata"
            : tc ? "tcmalloc heap_size - allocated - unmapped"
                 : "glibc mallinfo2 fordblks",
            je ? "upper bound: stats.resident is a maximum"
            : tc ? "exact as the allocator counts"
                 : "upper bound: free chunks' pages given back (malloc_trim) still count",
            (double)rd->a_free);
    /* mimalloc counts its committed memory, not its bytes in use: what it
     * holds beyond the live heap is its free but resident memory, with
     * the live heap's interval mirrored (the two add up to its figure) */
    int mi = rd->a_inuse < 0 && rd->a_free < 0 && rd->a_commit >= 0;
    if (mi) {
        /* committed pages never touched are not resident: no more than
         * the private anonymous memory the program's mappings leave */
        double maps, maps_lo, maps_hi, commit = (double)rd->a_commit;
        estimate(map_samples, bps, rate, &maps, &maps_lo, &maps_hi);
        if (rd->anon >= 0 && commit > (double)rd->anon - maps)
            commit = (double)rd->anon - maps;
        if (commit < h->bytes)
            commit = h->bytes;
        mt_ledger_row *f = add(L, "allocator_free_resident", "allocator: free but resident",
                               "mimalloc committed (at most the anonymous memory) - live heap",
                               "upper bound: size-class rounding and blocks from before the "
                               "recording count; the live heap's interval, mirrored",
                               commit - h->bytes);
        f->lo = commit - h->hi > 0 ? commit - h->hi : 0;
        f->hi = commit - h->lo;
    }
    if (rd->a_meta >= 0)
        add(L, "allocator_metadata", "allocator: metadata", "jemalloc stats.metadata",
            "exact as the allocator counts", (double)rd->a_meta);
    mt_ledger_row *mp = add(L, "program_maps", "program's own mappings",
                            "samples of mmap blocks live then",
                            "95% interval; mapped bytes: pages never touched are not resident", 0);
    estimate(map_samples, bps, rate, &mp->bytes, &mp->lo, &mp->hi);
    if (mp->hi > L->rss)
        mp->hi = L->rss;
    add(L, "stacks", "thread stacks", "smaps: [stack] and anonymous maps above a guard page",
        "exact resident; the kind is told by the guard page", (double)rd->stack);
    add(L, "modules", "modules' code and data", "smaps: executables and shared objects, their bss",
        "exact resident", (double)rd->mod);
    add(L, "file_maps", "file maps", "smaps: other file-backed maps", "exact resident",
        (double)rd->file);
    add(L, "shared_memory", "shared memory", "smaps: shared anonymous, /dev/shm, memfd, SysV",
        "exact resident (whole, not shared out: see PSS)", (double)rd->shm);
    add(L, "recorder", "memtrace's own (subtract it)", "mincore of its regions, smaps of its library",
        "exact resident", rd->own > 0 ? (double)rd->own : 0);
    double sum = 0;
    for (size_t i = 0; i < L->n; i++)
        sum += L->row[i].bytes;
    mt_ledger_row *u = add(L, "unexplained", "unexplained", "RSS - the rows above",
                           "the sampled rows' errors; below 0 when an upper bound overcounts",
                           L->rss - sum);
    /* The errors that reach the residual: the program's mappings', and the
     * live heap's unless the allocator's in-use row takes it back. */
    u->lo = u->bytes - (mp->hi - mp->bytes);
    u->hi = u->bytes + (mp->bytes - mp->lo);
    if (rd->a_inuse < 0 && !mi) {
        u->lo -= h->hi - h->bytes;
        u->hi += h->bytes - h->lo;
    }
    L->unexplained = u->bytes;
}
