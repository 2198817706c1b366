/*
 * memtrace/bind.h - the analysis library for other languages (Python's
 * memtrace package uses it through ctypes): plain arguments, no structures
 * to lay out, results as columns the caller sizes or as malloc'd JSON text
 * (free with mt_bind_free), the same text the CLI's --json prints.
 *
 * Experimental: follows the Python package. Not thread-safe per handle;
 * distinct handles may be used from distinct threads. Times are
 * mt_timedelta (microseconds since the trace's start).
 */
#ifndef MEMTRACE_BIND_H
#define MEMTRACE_BIND_H

#include <stddef.h>
#include <stdint.h>

#include "memtrace/analyze.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A selection of a loaded model with what it was made from. */
typedef struct mt_bind_sel mt_bind_sel;

/* The whole model of n traces (several: aggregated as the CLI does with
 * several FILEs). NULL on failure with a malloc'd message in *err. Reader
 * warnings go to stderr. */
mt_model *mt_bind_open(const char *const *paths, size_t n, char **err);
/* mt_bind_open with the reading's warnings (a damaged or cut trace, a
 * block freed twice, a profile without a sampling period) given back in
 * *warnings instead of stderr: one line each, in the order they came, as
 * malloc'd text (free with mt_bind_free), or NULL when there were none. */
mt_model *mt_bind_open_warned(const char *const *paths, size_t n, char **warnings, char **err);
/* The trace's header and counts as JSON (memtrace info --json's fields
 * that the model knows). */
char *mt_bind_info_json(const mt_model *m);
/* Selects with a filter as the CLI takes it (NULL or "": everything) and
 * live measured at `at` ("end", "peak", "2.5s"; NULL: end); sites != 0
 * cuts allocation plumbing off the stacks as top does. NULL on failure
 * with a malloc'd message in *err (a bad filter says where). The model
 * must outlive the selection. */
mt_bind_sel *mt_bind_select(const mt_model *m, const char *filter, const char *at, int sites,
                            char **err);
void mt_bind_sel_free(mt_bind_sel *b);
const mt_selection *mt_bind_selection(const mt_bind_sel *b);
/* Columns of the selected allocations in file order: idx (into
 * mt_model_allocs), site (the innermost frame of the selection's stack,
 * MT_NO_FRAME when empty) and stack (the selection's stack node). Any may
 * be NULL; at most cap rows written. Returns the number selected. */
size_t mt_bind_columns(const mt_bind_sel *b, uint32_t *idx, uint32_t *site, uint32_t *stack,
                       size_t cap);
/* The selection's stack `node` as "outer;...;inner" function names
 * (malloc'd). */
char *mt_bind_stack_text(const mt_bind_sel *b, uint32_t node);
/* The model's stacks nodes[0..n) (mt_alloc.stack: whole stacks, no
 * plumbing cut) as "outer;...;inner" texts, each ended by a NUL, in one
 * malloc'd buffer of *len bytes. NULL when out of memory. */
char *mt_bind_model_stacks(const mt_model *m, const uint32_t *nodes, size_t n, size_t *len);
/* `memtrace top --json` of the selection: by a measure name as --by takes
 * it ("alloc", "live", "count", ...), limit rows (0: all), callers per
 * site. NULL with *err on a bad measure. */
char *mt_bind_top_json(const mt_bind_sel *b, const char *by, size_t limit, size_t callers,
                       char **err);
/* `memtrace stats --json` of the selection. */
char *mt_bind_stats_json(const mt_bind_sel *b);
/* `memtrace diff --json` of two selections (base, new) by a measure
 * ("alloc", "live", "count", "live_count") and key ("site", "function",
 * "path"), live at each selection's `at`; alpha 0: 0.05. */
char *mt_bind_diff_json(const mt_bind_sel *base, const mt_bind_sel *new_, const char *by,
                        const char *key, double alpha, char **err);
/* The live-memory curve in n buckets over the whole trace: bucket start
 * times, the highest live bytes of all allocations and of the selected
 * ones in each. Returns n, or 0 when out of memory. */
size_t mt_bind_curve(const mt_bind_sel *b, size_t n, int64_t *time, double *total,
                     double *filtered);
void mt_bind_free(void *p);
/* sizeof(mt_alloc) and the offsets of its fields time, collect, size,
 * n_samples, stack, source, carried (out[0..6]): a binding that reads
 * mt_model_allocs() in place checks its layout against these. */
size_t mt_bind_alloc_layout(size_t out[7]);
/* Added: the same for the first n (at most 8) of those fields and domain
 * (out[7]: mt_alloc.domain, an index into mt_model_domains()). */
size_t mt_bind_alloc_offsets(size_t *out, size_t n);

/* Added: big traces without the whole model. Each query reads the traces
 * again, folded (mt_read: memory for the live blocks and the distinct
 * stacks, not for the events), and answers as the whole model's selection
 * would. The opening read's warnings go to stderr
 * (mt_bind_open_folded_warned: given back); the queries' reads of the same
 * traces say none (they would repeat the open's: a warning per open, as
 * mt_bind_open gives). */

/* The traces read folded: every allocation's cost per stack, live at the
 * end, whole stacks; its header, counts, end, peak, frames and stack nodes
 * are the whole model's (mt_bind_info_json, mt_bind_model_stacks).
 * *folded = 1. When the traces cannot be read folded (a pipe, times that go
 * back somewhere) the whole model instead, *folded = 0. NULL with *err on
 * failure. */
mt_model *mt_bind_open_folded(const char *const *paths, size_t n, int *folded, char **err);
/* mt_bind_open_folded with the reading's warnings given back in *warnings
 * as mt_bind_open_warned gives them (NULL when there were none). */
mt_model *mt_bind_open_folded_warned(const char *const *paths, size_t n, int *folded,
                                     char **warnings, char **err);
/* mt_bind_select of the traces read again, folded for this filter and
 * time (base: their mt_bind_open_folded model, which serves the selection
 * without a read for an empty filter at the end). The selection owns the
 * model it reads. */
mt_bind_sel *mt_bind_select_read(const mt_model *base, const char *const *paths, size_t n,
                                 const char *filter, const char *at, int sites, char **err);
/* A selection for mt_bind_diff_json of the traces read again, folded with
 * the sums the comparison needs by measure `by` (as mt_bind_diff_json
 * takes it) for its side: 0 base, 1 new. */
mt_bind_sel *mt_bind_select_diff_read(const mt_model *base, const char *const *paths, size_t n,
                                      const char *filter, const char *at, const char *by,
                                      int side, char **err);
/* mt_bind_curve of the traces read again, as mt_read_figures plans it (the
 * codec alone for every allocation of one file, base giving the info; one
 * folded pass, two when the filter needs the blocks' ends: live:,
 * collect:, lifetime:). Returns the number of buckets written, 0 with *err
 * on failure. */
size_t mt_bind_curve_read(const mt_model *base, const char *const *paths, size_t n,
                          const char *filter, size_t buckets, int64_t *time, double *total,
                          double *filtered, char **err);
/* mt_bind_stats_json of the traces read again, as mt_read_figures plans
 * the statistics of `memtrace stats` (the peak first for live:peak or at
 * peak; once more for the selection's own peak when the filter needs the
 * blocks' ends). NULL with *err on failure. */
char *mt_bind_stats_read(const mt_model *base, const char *const *paths, size_t n,
                         const char *filter, const char *at, char **err);
/* The allocations that pass a filter (live measured at `at`), read from
 * the traces folded and kept alone: in file order, as mt_alloc records
 * whose stack nodes are those of the base's trie, with each one's site
 * (as mt_bind_columns gives it); frames, sources and domains are named by
 * mt_bind_rows_model. NULL with *err on failure. */
typedef struct mt_bind_rows mt_bind_rows;
mt_bind_rows *mt_bind_rows_read(const char *const *paths, size_t n, const char *filter,
                                const char *at, char **err);
size_t mt_bind_rows_n(const mt_bind_rows *r);
const mt_alloc *mt_bind_rows_allocs(const mt_bind_rows *r);
const uint32_t *mt_bind_rows_sites(const mt_bind_rows *r);
const mt_model *mt_bind_rows_model(const mt_bind_rows *r);
void mt_bind_rows_free(mt_bind_rows *r);

#ifdef __cplusplus
}
#endif
#endif
