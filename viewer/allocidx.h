/*
 * allocidx.h - where the allocation index of a big trace lives and when
 * it is made (allocidx.c): found beside the trace (TRACE.mtidx) or in the
 * user's cache directory and checked before use, or written while the
 * trace is first read (on the thread that sums the fold). Filters are then
 * folded from it instead of reading the trace again (big.c).
 */
#ifndef MT_VIEWER_ALLOCIDX_H
#define MT_VIEWER_ALLOCIDX_H

#include "memtrace/stream.h"

typedef struct vidx vidx;

/* Before the unfiltered read of trace: an index found and whole (its
 * header names this trace), or a new file to write one into. NULL when
 * neither (each reason logged on stderr, one line). */
vidx *vidx_begin(const char *trace);
/* The writer to give every folded allocation to, or NULL (an index was
 * found, or writing failed). */
mt_alloc_index_writer *vidx_writer(vidx *x);
/* After the read: m the unfiltered folded model (NULL: the read failed).
 * Finishes the file being written, or checks the one found against m.
 * Returns the index to fold filters from, or NULL (why: vidx_report). */
const mt_alloc_index *vidx_end(vidx *x, const mt_model *m);
/* Prints what vidx_end had to say (once the progress line is done). */
void vidx_report(vidx *x);
/* A fold from the index failed on its records (why): logs it once, removes
 * the file (the next start writes a new one) and makes vidx_get NULL.
 * Thread safe. */
void vidx_broken(vidx *x, const char *why);
/* The index once vidx_end returned it and until vidx_broken, else NULL.
 * Thread safe. */
const mt_alloc_index *vidx_get(vidx *x);
const char *vidx_path(const vidx *x);
void vidx_free(vidx *x);

#endif
