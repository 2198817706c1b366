/*
 * memtrace/stream.h - pieces for reports that read a trace once (or a few
 * times) with a folded model (mt_model_options.fold, on_fold, on_alloc)
 * instead of building the whole model: memory for the live blocks and the
 * distinct stacks, not for the events.
 *
 *   mt_stream_filter  a filter evaluated on one allocation at a time while
 *                     the model still grows (stack clauses memoised per
 *                     function and per trie node).
 *   mt_curve_acc      the live-memory curve from events in time order, in
 *                     a fixed number of buckets whose width doubles as the
 *                     time range grows; the same values as mt_query_curve
 *                     (which replays a whole model's events through one).
 *   mt_curve_grid     the live-memory curve from allocations in any order
 *                     (as they are folded), at a fixed resolution, for
 *                     any window later: a view through an mt_curve_acc.
 *   mt_scan_events    the allocations and collections of a trace in file
 *                     order without stacks (a cheap pass: the peak, a
 *                     curve of allocations an earlier pass chose);
 *                     mt_scan_peak, the peak's time by such a pass.
 *   mt_stats_acc      the figures of mt_query_stats and the histograms of
 *                     mt_query_histogram from finished allocations (those
 *                     queries feed one a selection's allocations).
 *   mt_read_figures   a selection's totals, curve or every allocation in
 *                     as few of those passes as the input allows, or the
 *                     whole model's selection when it cannot stream: the
 *                     planner of stats, lifetimes and plot.
 *
 * Stability: all of this header is [experimental] (memtrace/analyze.h,
 * "Stability"): these pieces become sinks of mt_read (analyze.h,
 * "Reading") and may change with it. Thread safety: each object is used by
 * one thread at a time unless a declaration says otherwise. Units: times in
 * microseconds, sizes in bytes, as analyze.h.
 */
#ifndef MEMTRACE_STREAM_H
#define MEMTRACE_STREAM_H

#include "memtrace/analyze.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Filters, one allocation at a time                                         */

typedef struct mt_stream_filter mt_stream_filter;
/* f may be NULL (everything passes); it must outlive the result. peak is
 * what live:peak stands for (any value when the filter does not use it,
 * mt_filter_uses_peak). NULL when out of memory. */
mt_stream_filter *mt_stream_filter_new(const mt_filter *f, mt_timedelta peak);
void mt_stream_filter_free(mt_stream_filter *sf);
/* Does allocation a of the growing model m pass? a->collect must be final
 * (a finished allocation, as on_fold gives it), unless
 * mt_stream_filter_at_alloc() says the collection does not matter.
 * Lifetimes of never-collected blocks count to mt_model_end(m), so call it
 * for them once the trace is read (the final on_fold calls). Returns 1 or 0,
 * or -1 when a regex went over its limits on a name (*err, when err is not
 * NULL: a malloc'd message; NULL: out of memory). hide: clauses remove
 * frames and keep every allocation: they only have their patterns checked. */
int mt_stream_filter_passes(mt_stream_filter *sf, const mt_model *m, const mt_alloc *a,
                            char **err);
/* 1 when the filter decides on an allocation without its collection time
 * (no live:, collect:, lifetime: clause): then the answer is known when the
 * allocation is read (mt_model_options.on_alloc). */
int mt_stream_filter_at_alloc(const mt_stream_filter *sf);
/* 1 when no clause can leave an allocation out (none, or only hide:). */
int mt_stream_filter_keeps_all(const mt_stream_filter *sf);
/* Match the patterns on every function and node the model has now (what
 * mt_select would do on the whole model: a name that makes a regex go
 * over its limits fails there even when no allocation needs it). Returns
 * 0, or -1 as mt_stream_filter_passes. */
int mt_stream_filter_sync(mt_stream_filter *sf, const mt_model *m, char **err);

/* ------------------------------------------------------------------------ */
/* Live-memory curve from events in time order                              */

typedef struct mt_curve_acc mt_curve_acc;
/* n buckets (at least 1) starting at time 0, width
 * microseconds each (>= 1); when an event falls past the last bucket,
 * neighbouring buckets merge two by two and the width doubles, as often as
 * needed. A caller that knows the end E makes width ceil((E + 1) / n): the
 * buckets are then those of mt_query_curve(s, 0, E + 1, n). NULL when out
 * of memory. */
mt_curve_acc *mt_curve_acc_new(size_t n, mt_timedelta width);
void mt_curve_acc_free(mt_curve_acc *c);
/* One event at time t (times never decrease from call to call): the live
 * samples of all allocations change by d_total, those of the selected ones
 * by d_filtered; filtered_alloc: samples allocated by selected ones. */
void mt_curve_acc_event(mt_curve_acc *c, mt_timedelta t, int64_t d_total, int64_t d_filtered,
                        uint64_t filtered_alloc);
/* The curve so far, in bytes (bps: bytes per sample), as mt_query_curve
 * gives it: peak_filtered is the curve's exact highest, peak_filtered_est
 * its estimate for the trace's sample rate. NULL when out of memory; free
 * with mt_curve_free. */
mt_curve *mt_curve_acc_result(const mt_curve_acc *c, double bps, double rate);

/* The live-memory curve of allocations given in any order (each with its
 * collection time: as on_fold gives them), kept as the net change of live
 * samples and the samples allocated per fine bucket of time: 262,144 of
 * them from time 0, whose width (a power of two, from 1 us) doubles when a
 * time falls past the last one; about 4 MB. Read, it is the curve of
 * mt_curve_acc fed one event per fine bucket at the bucket's end, in time
 * order: exact at the fine buckets' ends, a lower bound in between; a
 * bucket of a view also counts the value carried into it. Units: samples
 * (bytes once a view is asked for with bytes per sample). */
typedef struct mt_curve_grid mt_curve_grid;
mt_curve_grid *mt_curve_grid_new(void);   /* NULL when out of memory */
void mt_curve_grid_free(mt_curve_grid *g);
size_t mt_curve_grid_bytes(void);         /* what one holds */
/* A block of samples allocated at time, collected at collect
 * (MT_TIME_NEVER: never). */
void mt_curve_grid_add(mt_curve_grid *g, mt_timedelta time, mt_timedelta collect,
                       uint64_t samples);
/* After the last add: the peak (highest live samples at a fine bucket's
 * end) and its estimate for the trace's sample rate, for
 * mt_curve_grid_peak. */
void mt_curve_grid_finish(mt_curve_grid *g, double rate);
/* The peak in samples; *time (may be NULL) the end of its fine bucket
 * minus 1 us; *est (may be NULL) its estimate, in samples. */
int64_t mt_curve_grid_peak(const mt_curve_grid *g, mt_timedelta *time, mt_peak *est);
/* The curve in n buckets of width w (>= 1) from t0 (as mt_curve_span lays
 * them out), in bytes (bps per sample): out[i] the highest live value at
 * the fine buckets' ends within bucket i and the value carried in;
 * alloc_out (may be NULL) the bytes allocated. Safe from several threads
 * at once once finished. Returns 0, or -1 when out of memory. */
int mt_curve_grid_curve(const mt_curve_grid *g, mt_timedelta t0, mt_timedelta w, size_t n,
                        double bps, double *out, double *alloc_out);

/* The peak's estimate (mt_peak) from a live-memory curve of one's own, as
 * every curve of the engine makes it: one call per time of the curve, in
 * time order, with the live samples before and after that time's events
 * and the samples they allocated. */
typedef struct mt_peak_acc mt_peak_acc;
mt_peak_acc *mt_peak_acc_new(void);  /* NULL when out of memory */
void mt_peak_acc_free(mt_peak_acc *p);
void mt_peak_acc_time(mt_peak_acc *p, mt_timedelta t, int64_t before, int64_t after,
                      uint64_t allocated);
/* The estimate for bps bytes per sample at the trace's sample rate. */
void mt_peak_acc_result(const mt_peak_acc *p, double bps, double rate, mt_peak *out);

/* ------------------------------------------------------------------------ */
/* Events without stacks                                                     */

/* One event of mt_scan_events: an allocation (collect 0) or the collection
 * of a block (collect 1) at time t; seq is the allocation's index in the
 * file, as a folded model numbers it, alloc_time its allocation's time.
 * Returns 0, or -1 to stop. */
typedef int (*mt_scan_fn)(void *ctx, mt_timedelta t, uint64_t seq, uint64_t samples,
                          int collect, mt_timedelta alloc_time);
typedef struct mt_scan_result {
    mt_timedelta end;        /* as mt_model_end */
    int monotone;            /* times never decrease (mt_model_peak_known) */
    uint64_t n_allocs;
    uint64_t n_live;         /* blocks never collected */
    mt_timedelta first_live; /* the earliest allocation time among them */
} mt_scan_result;
/* Reads the trace at path with the codec alone (no backtraces: about as
 * fast as reading the file) and calls fn for every allocation and every
 * collection of a block it knows, in file order, matching blocks to their
 * collections as a folded model does; memory for the blocks live at once.
 * progress (may be NULL) as mt_model_options.on_progress. Returns 0, or -1
 * with *err (when not NULL) a malloc'd message, or NULL when fn stopped. */
int mt_scan_events(const char *path, mt_scan_fn fn, void *ctx, mt_progress_fn progress,
                   void *progress_ctx, mt_scan_result *out, char **err);
/* The time of the trace's peak of live memory (all blocks), as
 * mt_model_peak_time gives it, by mt_scan_events. Returns 0 (*peak set),
 * 1 when the trace's times go back (a folded model cannot know its peak:
 * use a whole model), or -1 with *err (when not NULL) a malloc'd message
 * when the trace cannot be read or out of memory. */
int mt_scan_peak(const char *path, mt_progress_fn progress, void *progress_ctx,
                 mt_timedelta *peak, char **err);

/* ------------------------------------------------------------------------ */
/* Totals and histograms from finished allocations                          */

typedef struct mt_stats_acc mt_stats_acc;
/* live_at: the time of the live_* costs (a time or MT_TIME_END; resolve
 * MT_TIME_PEAK first). NULL when out of memory. */
mt_stats_acc *mt_stats_acc_new(mt_timedelta live_at);
void mt_stats_acc_free(mt_stats_acc *s);
/* One selected, finished allocation (as on_fold gives it; never-collected
 * ones once the trace is read). Memory, for the exact median of
 * lifetimes: 32 KB per 4096 microseconds of lifetimes under about 4 s that
 * occur, 16 to 32 bytes per distinct longer lifetime of a freed block, and
 * at most 16 bytes per block never freed with a longer one (given in
 * allocation order, runs of one lifetime share them). Returns 0, or -1
 * when out of memory. */
int mt_stats_acc_add(mt_stats_acc *s, const mt_model *m, const mt_alloc *a);
/* For adding from another thread than the model's builder, or after the
 * model is gone: mt_stats_acc_bind copies what the costs need of m (bytes
 * per sample, sampling rate, word size) into s, once m's header is read
 * (returns 0, or -1 when out of memory); then mt_stats_acc_add_bound does
 * what mt_stats_acc_add does with end for mt_model_end (the lifetime of
 * blocks never collected), without reading the model. */
int mt_stats_acc_bind(mt_stats_acc *s, const mt_model *m);
int mt_stats_acc_add_bound(mt_stats_acc *s, const mt_alloc *a, mt_timedelta end);
/* Once the model is loaded: out as mt_query_stats fills it for a selection
 * of those allocations, except peak_filtered_* (the caller's, from a
 * mt_curve_acc, unless everything was selected: then the model's peak), and
 * the histograms when size/life are not NULL (free them with
 * mt_histogram_free). Returns 0, or -1 when out of memory. */
int mt_stats_acc_finish(const mt_stats_acc *s, const mt_model *m, mt_stats *out,
                        mt_histogram **size, mt_histogram **life);

/* ------------------------------------------------------------------------ */
/* The allocation index (allocindex.c)                                       */
/*
 * Every allocation of an unfiltered folded read, written as on_fold gives
 * them (node of the model's trie, times, size, samples, source), so that a
 * filter is later folded from the index instead of the trace: the same
 * model and the same on_fold calls, in the same order, as a read of the
 * trace with mt_model_options.fold_filter. About 12 bytes an allocation.
 * An index names the trace it was made from (size, modification time, a
 * hash of its first and last 64 KB) and the model's trie; one that does
 * not match, or is damaged, is refused with a reason. */

#define MT_ALLOC_INDEX_VERSION 2

/* What identifies a trace file for its index. */
typedef struct mt_alloc_index_id {
    uint64_t size, hash;
    int64_t mtime_sec, mtime_nsec;
} mt_alloc_index_id;
/* Returns 0, or -1 when the file cannot be read (errno). */
int mt_alloc_index_trace_id(const char *trace, mt_alloc_index_id *id);

typedef struct mt_alloc_index_writer mt_alloc_index_writer;
/* Writes into fd, an empty file open for writing (positioned writes: the
 * caller's offset does not matter). NULL when out of memory. */
mt_alloc_index_writer *mt_alloc_index_writer_new(int fd);
/* One allocation, as on_fold gives it (an unfiltered fold: every one).
 * Returns 0, or -1 once a write failed (later ones are dropped). */
int mt_alloc_index_writer_add(mt_alloc_index_writer *w, const mt_alloc *a, uint64_t seq);
/* After the read of m (folded, unfiltered) from the trace id names: writes
 * the header and frees w. Returns 0, or -1 when a write failed or not
 * every allocation of m was added (the file is then no index). */
int mt_alloc_index_writer_finish(mt_alloc_index_writer *w, const mt_model *m,
                                 const mt_alloc_index_id *id);
void mt_alloc_index_writer_abort(mt_alloc_index_writer *w);

typedef struct mt_alloc_index mt_alloc_index;
/* Takes fd (an index file open for reading; closed on failure) when its
 * header is whole and names the trace id. NULL with a malloc'd *why (when
 * why is not NULL and memory allows) otherwise. The records are checked as
 * they are folded. */
mt_alloc_index *mt_alloc_index_open_fd(int fd, const mt_alloc_index_id *id, char **why);
/* 1 when the index was made from a model like m (the unfiltered folded
 * model of the same trace: counts and trie); 0 with *why otherwise. */
int mt_alloc_index_matches(const mt_alloc_index *x, const mt_model *m, char **why);
uint64_t mt_alloc_index_file_bytes(const mt_alloc_index *x);
void mt_alloc_index_close(mt_alloc_index *x);

typedef struct mt_alloc_index_fold_options {
    const mt_filter *filter;     /* as mt_model_options.fold_filter (NULL: none) */
    mt_timedelta peak;           /* what live:peak stands for */
    /* as mt_model_options.on_fold (may be NULL) */
    int (*on_fold)(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq);
    void *ctx;
    mt_progress_fn progress;     /* bytes of the index folded (may be NULL) */
    void *progress_ctx;
} mt_alloc_index_fold_options;
/* The folded model the read of the trace with o->filter would give,
 * folded from index x of base (the unfiltered folded model it matches).
 * It shares base's trie and names: free it with mt_model_free before base
 * (mt_model_memory counts only its own bytes). Safe to call from several threads at once. NULL with a
 * malloc'd *err ("allocation index: REASON at byte N": damaged or
 * changed file), with *err "stopped by the caller" when on_fold returned
 * -1, or with *err NULL when out of memory. */
mt_model *mt_alloc_index_fold(const mt_alloc_index *x, const mt_model *base,
                              const mt_alloc_index_fold_options *o, char **err);


/* ------------------------------------------------------------------------ */
/* A selection's figures in as few passes as the input allows (figures.c)    */
/*
 * A streaming report (stats, lifetimes, plot) states what it needs of the
 * allocations a filter selects; mt_read_figures plans the passes: the
 * unfiltered peak first when the live time or the filter names it, the
 * trace's end first when the figures need it before the first allocation
 * (a curve's buckets, a scatter's axes), a second pass when the selection
 * is only known once blocks end (its own peak, its curve), and the codec
 * alone wherever a pass needs no stacks (one file). An input that cannot
 * take those passes (a pipe read twice, times that go back) is read into
 * the whole model instead, decided before anything is handed to the
 * caller (on_selected, on_axes); then the figures are a selection of it
 * (mt_figures.sel) and the caller reports from that. The forced route
 * whole (mt_read_force) always takes the whole model. */

#define MT_FIGURES_STATS 1u   /* totals and histograms of the selection at live_at */
#define MT_FIGURES_PEAK 2u    /* with STATS: the peaks (the trace's and the selection's own) */
#define MT_FIGURES_CURVE 4u   /* the live-memory curve in curve_buckets buckets */
#define MT_FIGURES_AXES 8u    /* on_axes before the first on_selected */

typedef struct mt_figures_request {
    const char *const *paths;     /* the traces, merged into one stream */
    size_t n;
    int by_process;               /* an outermost frame per process */
    const struct mt_filter *filter; /* the selection (NULL: every allocation) */
    mt_timedelta live_at;         /* the totals' live time (MT_TIME_PEAK: the peak's) */
    unsigned need;                /* MT_FIGURES_* */
    size_t curve_buckets;         /* MT_FIGURES_CURVE */
    /* MT_FIGURES_CURVE: the buckets' width from time 0 when the caller
     * fixes it (no pass for the trace's end first); 0: the trace's end
     * over curve_buckets, plus one */
    mt_timedelta curve_width;
    /* a model of the same traces the caller holds, for their info (bytes
     * per sample, rate, end), or NULL: with curve_width, the curve of one
     * file is then drawn by the codec alone, with no model read
     * (mt_figures.m NULL), for every allocation and for a filter whose
     * clauses look at times alone (alloc:, live:, collect:, lifetime:; a
     * block never collected lives to the info's end), when no
     * on_selected is given */
    const mt_model *info;
    /* MT_FIGURES_AXES: the trace's end and the longest lifetime of a
     * selected block, once, before the pass that calls on_selected;
     * returns 0, or -1 when out of memory. */
    int (*on_axes)(void *ctx, mt_timedelta end, mt_timedelta max_life);
    /* every selected allocation as it finishes, in file order, in one pass
     * (may be NULL); returns 0, or -1 to stop the read */
    int (*on_selected)(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq);
    void *ctx;
    mt_warning_fn on_warning;     /* NULL: to stderr; each said once */
    void *warning_ctx;
    mt_progress_fn on_progress;
    void *progress_ctx;
} mt_figures_request;

typedef struct mt_figures {
    mt_model *m;                  /* the model read (folded, or whole; NULL: see info) */
    /* the whole model's selection (the input could not stream): the
     * figures below are not set, the caller queries it; else NULL */
    mt_selection *sel;
    mt_stats stats;               /* MT_FIGURES_STATS */
    mt_histogram *sizes, *lifetimes;
    mt_timedelta live_at;         /* the request's, the peak's time for MT_TIME_PEAK */
    mt_curve *curve;              /* MT_FIGURES_CURVE */
    uint64_t n_selected;          /* allocations selected */
    const char *profile;          /* on refusal: the path that is a pprof profile */
} mt_figures;

/* Plans and runs the reads. Returns 0 with *out set (free it with
 * mt_figures_free), or 1 (the input: a pprof profile, out->profile set,
 * *err NULL; else *err a malloc'd reason) or 2 (the filter: a regex over
 * its limits, *err set). On failure out->m may still hold the whole
 * model, whose selection failed. */
int mt_read_figures(const mt_figures_request *rq, mt_figures *out, char **err);
/* The path of n traces that mt_read_figures refuses before reading them
 * (a pprof profile: no times, no allocations), or NULL; a caller may ask
 * before it compiles its filter, to say that first. */
const char *mt_read_figures_refuses(const char *const *paths, size_t n);
void mt_figures_free(mt_figures *fig);

#ifdef __cplusplus
}
#endif
#endif
