/*
 * big.h - the viewer on traces too big for a whole model (big.c): a folded
 * model (per-stack costs, no per-allocation records) plus what the page
 * needs beyond per-stack costs, summed while the trace is read: a
 * downsampled live-memory curve (mt_curve_grid), the size and lifetime histograms
 * and the figures of the stats panel. One such "fold" is built for the
 * whole trace when the viewer starts, and one per filter by reading the
 * trace again with the filter folded in (docs/viewer.md, "Big traces").
 */
#ifndef MT_VIEWER_BIG_H
#define MT_VIEWER_BIG_H

#include "memtrace/analyze.h"

typedef struct vfold vfold;

/* Read path folded with filter f (NULL: everything; not copied: it must
 * outlive the fold). base: the unfiltered fold (for live:peak), NULL when
 * building that one. index: when building that one, find the trace's
 * allocation index or write one (allocidx.h). progress: as
 * mt_model_options (may be NULL); warn, warn_ctx: the reader's warnings
 * (NULL: on stderr as "memtrace: warning: ..."). One read of the
 * file. Returns NULL with a malloc'd *err ("FILE: offset N: ..."), or NULL
 * with *err NULL when out of memory. */
vfold *vfold_load(const char *path, const mt_filter *f, const vfold *base, int index,
                  mt_progress_fn progress, void *progress_ctx, mt_warning_fn warn,
                  void *warn_ctx, char **err);
/* Prints on stderr what became of base's allocation index (written,
 * refused), once loading is over. */
void vfold_report_index(const vfold *base);
/* The fold of filter f beside base (the unfiltered fold): from base's
 * allocation index when it has a sound one (progress: bytes of the index),
 * else by reading base's trace again, quietly, while unchanged(uctx) says
 * the file is still the one base read (asked before and after the read).
 * NULL with *err as vfold_load, or with *changed = 1 (and nothing kept)
 * when the file changed. */
vfold *vfold_refold(const vfold *base, const mt_filter *f, int (*unchanged)(void *ctx),
                    void *uctx, mt_progress_fn progress, void *progress_ctx, char **err,
                    int *changed);
/* A read of base's trace with filter f for the caller's own sinks (called
 * on the read's thread as mt_read calls them; sinks_filtered as the
 * request's), from base's allocation index when it has a sound one, else
 * the trace, quietly: the same stack nodes as base's and every fold's of
 * the same trace. Its folded model (live at the end), or NULL with a
 * malloc'd *err (NULL: out of memory; the file no longer the one base
 * read says so). */
mt_model *vfold_read(const vfold *base, const mt_filter *f, const mt_sink *sinks, size_t n,
                     int sinks_filtered, char **err);
void vfold_free(vfold *v);
const mt_model *vfold_model(const vfold *v);
/* Bytes it holds (model and summaries), for the viewer's memory budget. */
size_t vfold_bytes(const vfold *v);

/* The engine's answers, computed from the summaries (free them with the
 * engine's functions). sel: the fold model's selection (mt_select_sites
 * with the fold's filter). base: the unfiltered fold (v itself when v is
 * unfiltered). The curve is downsampled (mt_curve_grid) and so is the filtered
 * peak of a filtered fold (within a fine bucket of time); the rest is
 * exact. */
mt_curve *vfold_curve(const vfold *v, const vfold *base, mt_timedelta t0, mt_timedelta t1,
                      size_t n);
mt_histogram *vfold_histogram(const vfold *v, mt_hist_kind kind);
void vfold_stats(const vfold *v, const vfold *base, const mt_selection *sel, mt_stats *out);

#endif
