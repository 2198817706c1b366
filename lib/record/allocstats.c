/*
 * allocstats.c - which allocator the program runs on and what it says of
 * itself (allocstats.h). Found once, on the writer thread, by name in the
 * global scope: jemalloc's mallctl ("epoch" to refresh, then
 * stats.allocated, .metadata, .resident, .retained), gperftools'
 * MallocExtension_GetNumericProperty (generic.current_allocated_bytes,
 * generic.heap_size, tcmalloc.pageheap_unmapped_bytes), mimalloc's
 * mi_process_info (its committed memory: a release build of mimalloc
 * counts no bytes in use) when malloc is mimalloc's, else glibc's malloc
 * when real.c found no other allocator (mallinfo2, taken by rss.c at its
 * own pace). docs/rss.md says how each becomes a row. Looked up with
 * defined.c's walk of the symbol tables, not dlsym, whose failure for a
 * missing name allocates from the program's heap (dlerror's buffer, kept
 * by the writer thread until it exits).
 */
#include <stdint.h>
#include <string.h>

#include "allocstats.h"
#include "defined.h"
#include "real.h"

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);
typedef int (*tcprop_fn)(const char *, size_t *);
typedef void (*miinfo_fn)(size_t *, size_t *, size_t *, size_t *, size_t *, size_t *, size_t *,
                          size_t *);

static struct {
    int found;
    mallctl_fn mallctl;
    tcprop_fn tcprop;
    miinfo_fn miinfo;
    int glibc;
} as;

static void find(void)
{
    if (as.found)
        return;
    as.found = 1;
    as.mallctl = (mallctl_fn)mtr_global_definition("mallctl");
    if (!as.mallctl)
        as.tcprop = (tcprop_fn)mtr_global_definition("MallocExtension_GetNumericProperty");
    /* mimalloc only when it is the program's malloc (real.c's image of
     * the allocator holds it), not a library that offers mi_malloc beside
     * glibc's */
    if (!as.mallctl && !as.tcprop) {
        as.miinfo = (miinfo_fn)mtr_global_definition("mi_process_info");
        uintptr_t a = (uintptr_t)as.miinfo;
        if (a < mtr_real.image_lo || a >= mtr_real.image_hi)
            as.miinfo = NULL;
    }
    as.glibc = !as.mallctl && !as.tcprop && !as.miinfo && mtr_real.image_lo == 0 &&
               mtr_real.image_hi == 0;
}

int mtr_allocstats_glibc(void)
{
    find();
    return as.glibc;
}

static int64_t je(const char *name)
{
    size_t v = 0, sz = sizeof v;
    return as.mallctl(name, &v, &sz, NULL, 0) == 0 && sz == sizeof v ? (int64_t)v : -1;
}

static int64_t tc(const char *name)
{
    size_t v = 0;
    return as.tcprop(name, &v) ? (int64_t)v : -1;
}

void mtr_allocstats_read(mt_rssf_ledger *l, const struct mtr_glibc_stats *g)
{
    find();
    if (as.mallctl) {
        strcpy(l->alloc, "jemalloc");
        uint64_t epoch = 1;
        size_t sz = sizeof epoch;
        as.mallctl("epoch", &epoch, &sz, &epoch, sz);
        int64_t allocated = je("stats.allocated"), meta = je("stats.metadata");
        int64_t resident = je("stats.resident"), retained = je("stats.retained");
        l->a_inuse = allocated;
        l->a_meta = meta;
        l->a_retained = retained;
        if (allocated >= 0 && meta >= 0 && resident >= allocated + meta)
            l->a_free = resident - allocated - meta;
    } else if (as.tcprop) {
        strcpy(l->alloc, "tcmalloc");
        int64_t allocated = tc("generic.current_allocated_bytes");
        int64_t heap = tc("generic.heap_size"), unmapped = tc("tcmalloc.pageheap_unmapped_bytes");
        l->a_inuse = allocated;
        l->a_retained = unmapped;
        if (allocated >= 0 && heap >= 0 && unmapped >= 0 && heap >= allocated + unmapped)
            l->a_free = heap - allocated - unmapped;
    } else if (as.miinfo) {
        strcpy(l->alloc, "mimalloc");
        size_t elapsed, user, sys, rss, peak_rss, commit = 0, peak_commit, faults;
        as.miinfo(&elapsed, &user, &sys, &rss, &peak_rss, &commit, &peak_commit, &faults);
        l->a_commit = commit > 0 ? (int64_t)commit : -1;
    } else if (as.glibc) {
        strcpy(l->alloc, "glibc");
        if (g) {
            l->a_inuse = (int64_t)(g->uordblks + g->hblkhd);
            l->a_free = (int64_t)g->fordblks;
        }
    }
}
