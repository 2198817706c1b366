/*
 * allocstats.h - the program's allocator describing itself (allocstats.c):
 * bytes in use, free but resident, metadata, retained and committed, for the
 * resident-memory ledger.
 */
#ifndef MT_RECORD_ALLOCSTATS_H
#define MT_RECORD_ALLOCSTATS_H

#include <stddef.h>

#include "rssformat.h"
#include "thread.h"

/* glibc's figures, from a mallinfo2 the caller made (rss.c paces it). */
struct mtr_glibc_stats {
    size_t uordblks, hblkhd, fordblks;
};

/* 1 if the program's allocator is glibc's malloc (then the caller passes
 * a mallinfo2 of its own to mtr_allocstats_read, or NULL when none was
 * taken). Writer thread. */
MT_HIDDEN int mtr_allocstats_glibc(void);
/* Fills l's alloc, a_inuse, a_free, a_meta, a_retained and a_commit from
 * the allocator found (jemalloc's mallctl, tcmalloc's MallocExtension,
 * mimalloc's mi_process_info, glibc through g). Writer thread. */
MT_HIDDEN void mtr_allocstats_read(mt_rssf_ledger *l, const struct mtr_glibc_stats *g);

#endif
