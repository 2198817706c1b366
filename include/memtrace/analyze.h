/*
 * memtrace/analyze.h - the analysis engine: a compact in-memory model of a
 * trace, the filter language, and the queries every report is built from
 * (live-memory curve, peak, call trees, call graph, callers/callees,
 * histograms, totals). The CLI reports and the web viewer both sit on it.
 *
 * docs/api-analyze.md documents this interface with examples and
 * docs/filters.md the filter language.
 *
 * ---------------------------------------------------------------------
 * Layers of objects
 *
 *   mt_model      built once from a trace (one pass). Immutable afterwards.
 *   mt_filter     a compiled filter string. Immutable; independent of models.
 *   mt_selection  a filter applied to a model: which allocations pass, the
 *                 stacks with hidden frames removed, and the per-stack costs.
 *                 Immutable once built; refers to (does not own) its model.
 *   results       every query returns a freshly malloc'd result the caller
 *                 frees with the matching mt_*_free function.
 *
 * Thread safety: a model, filter or selection is never modified after it
 * is returned, so any number of threads may run queries on the same model
 * and selections at the same time (queries only read them and allocate
 * their own results). Building a model, compiling a filter and making a
 * selection allocate new objects and may also run concurrently. Freeing an
 * object must not race with its use; a model must outlive its selections.
 *
 * Units: times are mt_timedelta (microseconds since the trace start);
 * sizes are bytes. "Estimated" values are extrapolated from the samples
 * with the statmemprof estimator:
 *
 *     bytes = n_samples / sample_rate * word_size / 8
 *
 * (word_size is 64 for OCaml traces, 8 for C traces), and
 *
 *     objects = n_samples / (sample_rate * words_sampled)
 *
 * where words_sampled is the block's length in words, plus one header word
 * for OCaml Minor/Major blocks. Both are unbiased. A figure built from k
 * samples has a relative standard error of about 1/sqrt(k): see
 * mt_noise().
 *
 * Live: a block is live at time t when it was allocated at or before t and
 * not collected by t (alloc <= t < collect). Never-collected blocks are
 * live until (and at) the end of the trace.
 *
 * Stability: the declarations are stable (kept source-compatible) unless
 * marked [experimental] (a field or function) or inside a section marked
 * so (its title says it): those may change between releases. The reading
 * section (mt_read, mt_sink) at the end is experimental.
 * ---------------------------------------------------------------------
 */
#ifndef MEMTRACE_ANALYZE_H
#define MEMTRACE_ANALYZE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "memtrace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Model                                                                     */

/* Special times accepted wherever a time is asked for. */
#define MT_TIME_NEVER INT64_MAX        /* "not collected" / "not promoted" */
#define MT_TIME_END (INT64_MAX - 1)    /* the end of the trace (last event) */
#define MT_TIME_PEAK (INT64_MAX - 2)   /* the time of peak live memory */

typedef uint32_t mt_func_id;   /* index into mt_model_funcs() */
typedef uint32_t mt_frame_id;  /* index into mt_model_frames() */
typedef uint32_t mt_node_id;   /* index into a stack trie; 0 is the root (empty stack) */

/* A function: what a frame's name and file resolve to. Identical
 * (name, filename) pairs share one id. Codes the trace does not describe
 * get a function named after their code ("0x55d0c0de1234") and filename "";
 * raw frames of a trace not yet symbolized are named "module+0xoffset" with
 * the module's path as filename (docs/format.md). */
typedef struct mt_func {
    const char *name;
    const char *filename;
} mt_func;

/* One stack frame: one source location of a backtrace code. A code that
 * stands for several inlined locations gives several consecutive frames
 * (outermost first), inline_index 0 .. inline_count-1. */
typedef struct mt_frame {
    mt_func_id func;
    uint32_t line;           /* 0 when unknown */
    uint16_t start_char, end_char;
    uint16_t inline_index;   /* position among the code's locations, outermost 0 */
    uint16_t inline_count;   /* number of locations of the code (>= 1) */
    uint64_t code;           /* the backtrace code (a return address in C traces) */
} mt_frame;

/* Stacks deeper than MT_STACK_MAX_DEPTH frames (a recursion gone wild, or
 * a hostile trace) are cut in every selection, hence in every query and
 * report: such a stack keeps its MT_STACK_MAX_DEPTH - 1 innermost frames
 * under one outermost frame whose function is named MT_TRUNCATED_NAME
 * (file "", line 0), the marker every report shows for a stack cut at a
 * depth limit (the recorder writes the same when it hits its own). The
 * model itself keeps whole stacks (filters see every frame). When a trace
 * has so many distinct cut stacks that their copies would pass
 * MT_STACK_CUT_BUDGET trie nodes, later ones keep only
 * MT_STACK_CUT_SHORT - 1 frames. */
#define MT_STACK_MAX_DEPTH 1024
#define MT_STACK_CUT_BUDGET 1000000
#define MT_STACK_CUT_SHORT 64
#define MT_TRUNCATED_NAME "[truncated]"

/* A node of a stack trie: the stack made of the parent's stack plus one
 * frame (callee side). Node 0 is the empty stack (parent 0, depth 0). Nodes
 * are numbered so that a parent always comes before its children. */
typedef struct mt_node {
    mt_node_id parent;
    mt_frame_id frame;       /* unused for node 0 */
    uint32_t depth;          /* number of frames */
} mt_node;

/* One sampled allocation. */
typedef struct mt_alloc {
    mt_timedelta time;       /* allocation time */
    mt_timedelta collect;    /* collection time, or MT_TIME_NEVER */
    mt_timedelta promote;    /* promotion time (OCaml), or MT_TIME_NEVER */
    uint64_t size;           /* block size in bytes (length * word_size / 8) */
    uint64_t n_samples;      /* sample points in the block (>= 1) */
    mt_node_id stack;        /* allocation stack in the model's trie */
    uint8_t source;          /* mt_source */
    /* [experimental] 1 for a block carried over from the previous piece of a
     * rotated recording (mt_event.carried): live from the piece's start,
     * where its time is, but allocated before it. Costs count it as live,
     * never as allocated (alloc_*, samples) nor temporary. */
    uint8_t carried;
    /* Added: the leak scan's verdict on the block, MT_VERDICT_* (trace.h):
     * lost or reachable for a block still live at the scan, NONE for every
     * other block and every block of a trace without verdicts. */
    uint8_t verdict;
    /* Added: the OCaml 5 domain that allocated the block (mt_event.domain),
     * as an index into mt_model_domains(): 0 in v1/v2 traces, C traces and
     * several traces read as one (their events are merged into one stream
     * without domains). In the struct's last padding byte: sizeof(mt_alloc)
     * is unchanged. */
    uint8_t domain;
} mt_alloc;

typedef struct mt_model mt_model;

/* Called while the model is being built: done and total are byte offsets. */
typedef void (*mt_progress_fn)(void *ctx, uint64_t done, uint64_t total);

/* How a model is built: mt_read fills these from its request (the
 * builder that takes them is private to the analysis library); the
 * request's, the sinks' and the streams' documentation refers to them. */
typedef struct mt_model_options {
    mt_warning_fn on_warning;   /* the reader's, builder's, merger's warnings; NULL: stderr */
    void *warning_ctx;
    mt_progress_fn on_progress; /* NULL: none; called about every 1 MB */
    void *progress_ctx;
    /* 0: keep whole stacks. N > 0: keep only the N innermost backtrace
     * codes of each allocation (a "shallow" model: much faster to build
     * and smaller; allocation sites and their direct callers stay exact
     * with N >= 2, but inside:/hide: and trees only see those frames). */
    size_t max_depth;
    /* Folded model (fold != 0): memory in proportion to the live blocks and
     * the distinct stacks, not to the events. No per-allocation records are
     * kept: each allocation is folded into its stack's cost when it is
     * freed (or at the end) if it passes fold_filter (NULL: all) with live
     * measured at fold_live_at. Such a model answers only
     * mt_select_sites() with that same filter and time (then every stack
     * query works), the totals and counts, and the peak when the trace's
     * times never decrease (mt_model_peak_known); mt_model_n_allocs() is 0
     * and the curve, histograms and per-allocation queries are empty.
     * When fold_live_at is MT_TIME_PEAK or the filter uses live:peak
     * (mt_filter_uses_peak), the peak must be given in fold_peak with
     * fold_peak_known = 1: read it with a first folded model
     * (mt_model_peak_time), then fold again. */
    int fold;
    const struct mt_filter *fold_filter;
    mt_timedelta fold_live_at;
    int fold_peak_known;
    mt_timedelta fold_peak;
    /* Folded models: called once for every allocation folded (one that
     * passed fold_filter's allocation-level clauses; the stack-level ones,
     * inside: and hide:, are the callee's to apply), when it is collected
     * or, for the blocks never collected, at the end in allocation order.
     * a->collect is set (MT_TIME_NEVER: still live at the end); seq is the
     * allocation's index in the file. The model is still being built: its
     * nodes, frames and funcs up to a->stack are valid (and those of
     * allocations read ahead: up to 32 events, or a few thousand with two
     * read_threads), and mt_model_end() is the latest time of the events
     * handled so far, not counting those read ahead (the trace's end in
     * the final calls).
     * Returns 0, or -1 to stop: the load then fails with the error
     * "stopped by the caller". */
    int (*on_fold)(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq);
    void *fold_ctx;
    /* Folded models: called with fold_ctx for every allocation as it is
     * read (a->collect is MT_TIME_NEVER then), in file order. With on_fold,
     * whose calls during the read come at the collections, a caller sees
     * both ends of every block in file order (the live-memory curve of
     * streaming reports, include/memtrace/stream.h). Returns 0, or -1 to
     * stop, as on_fold. */
    int (*on_alloc)(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq);
    /* [experimental] Folded models: 2 reads on two threads, a reading thread that
     * decodes the trace and finds each allocation's stack, and the
     * caller's thread, which folds and calls on_fold, on_alloc,
     * on_progress and the reader's warning callback (in file order, as
     * with one thread); 1 reads on the caller's thread alone; 0 (the
     * default) is 2 when more than one processor is available to the
     * process, unless the route one-thread or two-threads is forced
     * (mt_read_force). The model is the same either way. Whole models are read on
     * the caller's thread. */
    int read_threads;
} mt_model_options;

/* A model comes from mt_read ("Reading", below): the one way in, whole or
 * folded as the request and the input allow. Every model, of any kind, is
 * freed with mt_model_free. */
void mt_model_free(mt_model *m);
/* Added: 1 if the model's trace has leak verdicts (docs/leaks.md), with
 * *time (may be NULL) the scan's time; 0 if not (also for several traces
 * read as one). */
int mt_model_scan(const mt_model *m, mt_timedelta *time);

/* Trace header: strings owned by the model. */
const mt_trace_info *mt_model_info(const mt_model *m);
/* Added: the domain numbers of the model's allocations (mt_event.domain,
 * as `memtrace dump` prints them) by mt_alloc.domain index, in the order
 * they first allocated: out[0..cap) filled, the count returned (at most
 * MT_MAX_DOMAINS; 0 for a model without allocations). */
#define MT_MAX_DOMAINS 256
size_t mt_model_domains(const mt_model *m, unsigned *out, size_t cap);

/* Arrays owned by the model, valid until mt_model_free. */
size_t mt_model_n_allocs(const mt_model *m);
const mt_alloc *mt_model_allocs(const mt_model *m);      /* in file order */
size_t mt_model_n_funcs(const mt_model *m);
const mt_func *mt_model_funcs(const mt_model *m);
size_t mt_model_n_frames(const mt_model *m);
const mt_frame *mt_model_frames(const mt_model *m);
size_t mt_model_n_nodes(const mt_model *m);
const mt_node *mt_model_nodes(const mt_model *m);

/* What made an allocation, as reports name it: in C traces (word size 8)
 * "malloc" (source External: the malloc family, operator new) or "mmap"
 * (source Major: an anonymous mapping the program made itself); in OCaml
 * traces the source, "minor", "major" or "external". docs/format.md. */
const char *mt_alloc_kind_name(const mt_model *m, const mt_alloc *a);
/* The name of a source in this model's trace (as mt_alloc_kind_name). */
const char *mt_source_kind_name(const mt_model *m, unsigned source);

/* ------------------------------------------------------------------------ */
/* Resident memory                                                           */
/*
 * The recorder samples the process's resident set size (RSS) over time
 * into TRACE.rss beside the trace (docs/format.md, "Resident memory").
 * Figures not sampled at a point are -1.
 */
typedef struct mt_rss_point {
    mt_timedelta time;       /* since the trace's start */
    int64_t rss;             /* resident bytes */
    int64_t heap;            /* glibc malloc's bytes in use (mallinfo2), or -1 */
    int64_t mapped;          /* of which in blocks malloc mapped itself, or -1 */
    int64_t peak;            /* the kernel's high-water mark (VmHWM), or -1 */
} mt_rss_point;

/* [experimental] One reading of the resident-memory ledger (version 2
 * files, docs/rss.md): the process's RSS split by kind of mapping from
 * /proc/self/smaps, the allocator's own statistics and the recorder's own
 * memory. Bytes; -1 when not taken. rss = anon + stack + mod + file + shm +
 * own exactly. */
typedef struct mt_rss_reading {
    mt_timedelta time;       /* since the trace's start */
    int64_t rss, pss, swap;
    int64_t anon;            /* private anonymous and [heap] (not stacks, not own) */
    int64_t brk;             /* of which [heap] */
    int64_t stack;           /* main and thread stacks */
    int64_t threads;         /* a count */
    int64_t mod;             /* loaded modules' code and data */
    int64_t file;            /* other file maps */
    int64_t shm;             /* shared memory */
    int64_t own;             /* the recorder's own, resident */
    int64_t a_inuse, a_free, a_meta, a_retained;  /* the allocator's */
    int64_t a_commit;        /* committed by it: in use, free, metadata (mimalloc) */
    int64_t cost_us;         /* what the reading cost the recorder */
    char alloc[16];          /* "glibc", "jemalloc", "tcmalloc", "mimalloc" or "" */
} mt_rss_reading;

typedef struct mt_rss {
    mt_rss_point *p;         /* in time order */
    size_t n;
    int64_t peak_rss;        /* largest RSS seen (samples and high-water marks) */
    mt_timedelta peak_time;  /* when the largest sample was taken */
    /* Added: the ledger's readings, in time order (none in version 1). */
    mt_rss_reading *l;
    size_t nl;
} mt_rss;

/* Reads TRACE_PATH.rss for model m. Returns NULL if there is none (no
 * warning) or it belongs to another recording (warning); damage (a bad
 * line) gives a warning "FILE: line N: reason" and what came before it. */
mt_rss *mt_rss_load(const char *trace_path, const mt_model *m, mt_warning_fn warn, void *ctx);
/* [experimental] The same for a model of several traces (mt_read of several paths): when
 * they are all of the model's process (the pieces of a rotated recording),
 * every trace's own .rss, each checked against that trace's header, joined
 * in time order; otherwise the first trace's, as mt_rss_load. */
mt_rss *mt_rss_load_many(const char *const *trace_paths, size_t n, const mt_model *m,
                         mt_warning_fn warn, void *ctx);
void mt_rss_free(mt_rss *r);

/* [experimental] The resident-memory ledger (docs/rss.md): rows that add
 * up to a reading's RSS, each with its source and its 95% interval; the
 * residual is the row "unexplained". */
typedef struct mt_ledger_row {
    const char *key;         /* JSON name: "live_heap", "unexplained", ... */
    const char *name;        /* for people: "live heap (samples)" */
    const char *source;      /* where the figure comes from */
    const char *error;       /* what its error is */
    double bytes, lo, hi;    /* the figure and its 95% interval (lo = hi = bytes: exact) */
} mt_ledger_row;

#define MT_LEDGER_MAX_ROWS 16
typedef struct mt_ledger {
    const mt_rss_reading *reading;   /* the reading it explains */
    mt_ledger_row row[MT_LEDGER_MAX_ROWS];   /* the rows that sum to rss */
    size_t n;
    double rss, pss, swap, retained; /* -1 when not taken; retained: not resident */
    double unexplained;              /* = row "unexplained" */
    double live_heap_samples, live_map_samples;
    /* Set by the caller for the reading with the largest RSS (--at peak),
     * else 0: how many readings there were, and the process's true peak
     * RSS (its high-water mark, VmHWM; -1 unknown), which may fall between
     * two readings. */
    size_t readings;
    double true_peak_rss;
} mt_ledger;

/* Live sampled bytes at time t of a whole model (every allocation), as
 * samples: malloc blocks (C traces: source external) in *heap, the
 * program's own mappings (source major) in *maps. -1 for a folded model. */
int mt_ledger_live_samples(const mt_model *m, mt_timedelta t, uint64_t *heap, uint64_t *maps);
/* The reading of rss at: MT_TIME_PEAK the one with the largest RSS,
 * MT_TIME_END the last, else the last at or before at (the first if none
 * is); NULL if rss has no readings. */
const mt_rss_reading *mt_rss_reading_at(const mt_rss *rss, mt_timedelta at);
/* The ledger of reading r with heap_samples and map_samples sample points
 * live then, each standing for bps bytes at sampling rate rate. */
void mt_ledger_make(const mt_rss_reading *r, uint64_t heap_samples, uint64_t map_samples,
                    double bps, double rate, mt_ledger *out);

/* Estimated bytes one sample stands for: word_size / 8 / sample_rate. */
double mt_model_bytes_per_sample(const mt_model *m);
/* Estimates for one allocation. */
double mt_alloc_bytes(const mt_model *m, const mt_alloc *a);
double mt_alloc_objects(const mt_model *m, const mt_alloc *a);

/* The peak of live memory as estimated from the samples (docs/estimates.md).
 * The estimate (bytes) is the highest value of the estimated curve
 * (curve_max): the live bytes at the time the curve peaks, which can read
 * high where the curve stays near its top while blocks are replaced; [lo,
 * hi] is a 95% interval for the true peak whose lower bound allows for
 * that (readings: the effectively independent readings of the top) and is
 * never below the end's fixed-time bound. At rate 1 (every byte sampled)
 * bytes, lo, hi and curve_max are the exact peak and sd is 0. */
typedef struct mt_peak {
    double bytes;            /* the estimate: the curve's highest */
    double lo, hi;           /* 95% interval */
    double curve_max;        /* highest value of the estimated curve */
    double sd;               /* standard error of the curve at its highest */
    double readings;         /* effectively independent readings of the top (>= 1) */
    double samples;          /* samples live at the curve's highest */
    double end;              /* the curve's value at its end (its last time) */
} mt_peak;

/* A peak estimated in samples (bytes per sample 1), in bytes. */
void mt_peak_scale(mt_peak *p, double bps);

/* Time of the last event (the end of the trace), in microseconds. */
mt_timedelta mt_model_end(const mt_model *m);
/* Peak of the total live-memory curve: time and the curve's highest value
 * (biased upward where memory stays near its peak: mt_model_peak gives the
 * estimate). The first time the peak is reached. The first call of these, of mt_model_live_at
 * or of a curve query builds the model's time-sorted event list (about 16
 * bytes per event; thread-safe, once). */
mt_timedelta mt_model_peak_time(const mt_model *m);
double mt_model_peak_bytes(const mt_model *m);
/* The estimate of that peak with its interval (mt_peak): what reports
 * show. mt_model_peak_bytes is the curve's highest value (its curve_max). */
void mt_model_peak(const mt_model *m, mt_peak *out);
/* Estimated bytes live at time t (any time, or MT_TIME_END/MT_TIME_PEAK). */
double mt_model_live_at(const mt_model *m, mt_timedelta t);
/* Resolve MT_TIME_END / MT_TIME_PEAK to a time; other values unchanged. */
mt_timedelta mt_model_resolve_time(const mt_model *m, mt_timedelta t);
/* Events read: allocations, promotions, collections. */
void mt_model_event_counts(const mt_model *m, uint64_t *allocs, uint64_t *promotes,
                           uint64_t *collects);
/* 0 when the peak is unknown: a folded model of a trace whose times
 * decrease somewhere. */
int mt_model_peak_known(const mt_model *m);
/* [experimental] pprof profiles as input (docs/profiles-input.md):
 * mt_read reads a pprof profile (profile.proto, gzipped or not) as a
 * folded model of its per-stack costs, live measured at its end. It
 * refuses what a profile cannot answer (no times: whole models, --at,
 * time, size and kind clauses). mt_path_is_profile: 1 when the file looks
 * like a profile rather than a trace (by its first bytes). */
int mt_path_is_profile(const char *path);
enum {
    MT_PROFILE_SAMPLED = 1,     /* a profile whose error is derived (Go's heap profiles, memtrace's) */
    MT_PROFILE_NO_ERROR = 2     /* a profile whose sampling is unknown: no error */
};
/* 0 for a trace, else MT_PROFILE_*. */
int mt_model_profile(const mt_model *m);
/* What the profile measures: MT_PROFILE_HAS_ALLOC (alloc_*), MT_PROFILE_HAS_LIVE (inuse_*). */
#define MT_PROFILE_HAS_ALLOC 1u
#define MT_PROFILE_HAS_LIVE 2u
unsigned mt_model_profile_measures(const mt_model *m);
/* What kind of profile, in words (owned by the model); NULL for a trace. */
const char *mt_model_profile_kind(const mt_model *m);
/* Bytes of memory the model uses (for the record). */
size_t mt_model_memory(const mt_model *m);

/* Frames of a trie node's stack (model trie), outermost first, into out
 * (capacity cap). Returns the depth (may exceed cap: then only cap written). */
size_t mt_model_stack(const mt_model *m, mt_node_id node, mt_frame_id *out, size_t cap);

/* Relative standard error of an estimate made of k samples: 1/sqrt(k)
 * (1.0 for k = 0). Reports mark an entry "noisy" when this is above
 * MT_NOISY (k < 25), "mostly noise" above MT_NOISE (k < 4). */
double mt_noise(uint64_t k);
/* The same at a known sample rate: sqrt((1 - rate) / k), 0 at rate 1 (every
 * byte sampled: the figure is exact, even 0 of it). */
double mt_noise_at(uint64_t k, double rate);
#define MT_NOISY 0.2
#define MT_NOISE 0.5

/* ------------------------------------------------------------------------ */
/* Filters                                                                   */
/*
 * A filter is a string of clauses separated by spaces, all of which must
 * hold ("and"). It is meant to be typed on a command line and carried in a
 * URL query string as is (spaces as '+' or %20). docs/filters.md has the
 * full grammar with examples. Summary:
 *
 *   alloc:RANGE         allocated in a time range          alloc:1s-3s
 *   live:TIME           live at a time                      live:2.5s
 *   live:RANGE          live at some point of a range       live:1s-2s
 *   live:peak           live at the time of peak memory
 *   live:end            live at the end of the trace (never collected)
 *   collect:RANGE       collected in a time range           collect:-500ms
 *   collect:never       never collected
 *   size:RANGE          block size in bytes                 size:>=4k  size:64-1M
 *   lifetime:RANGE      time from allocation to collection  lifetime:>1s
 *                       (never-collected blocks: to the end of the trace)
 *   source:LIST         minor, major, external              source:minor,major
 *   kind:LIST           malloc, mmap (what made the block)  kind:mmap
 *   inside:PATTERN      some frame's function matches       inside:parse_
 *   hide:PATTERN        remove matching frames from stacks, keeping their cost
 *   !CLAUSE             negation (not hide:)                !inside:Stdlib__List
 *
 *   RANGE    A-B, A-, -B, >=A, >A, <=B, <B, or A (exactly A)
 *   TIME     a number with a unit: us, ms, s, m, h; bare numbers are seconds
 *   SIZE     a number with a unit: B, k (KiB), M, G (also kB/KiB, MB/MiB, ...);
 *            bare numbers are bytes
 *   PATTERN  a word (substring of the function name), "a quoted string"
 *            (substring, may hold spaces; \" and \\ escapes), or /regex/
 *            (PCRE2 syntax, may hold spaces; \/ for /). A regex is
 *            bounded: source and compiled size at parse time, backtracking
 *            steps, depth, memory per name and total time when applied
 *            (then mt_select_err fails with a message).
 *
 * A filter is independent of any model; compile it once, apply it to any
 * model with mt_select.
 */

typedef struct mt_filter mt_filter;

/* Parse a time as the filter language writes it ("3s", "250ms", "1.5",
 * "peak", "end"; the last two give MT_TIME_PEAK / MT_TIME_END). Returns 0,
 * or -1 with a malloc'd message in *err (when err is not NULL). */
int mt_parse_time(const char *text, mt_timedelta *out, char **err);

/* Parse a filter. The empty string (or NULL) is the filter that keeps
 * everything. On error returns NULL and, when err is not NULL, stores a
 * malloc'd message like
 *     "filter: column 7: unknown unit 'q' in time '3q' (use us, ms, s, m, h)"
 * and, when err_pos is not NULL, the 0-based byte offset of the problem. */
mt_filter *mt_filter_parse(const char *text, char **err, size_t *err_pos);
void mt_filter_free(mt_filter *f);
/* The filter in canonical form (malloc'd; the caller frees). */
char *mt_filter_to_string(const mt_filter *f);
/* Does the filter look at call stacks (inside:, hide:)? If not, a shallow
 * model (mt_model_options.max_depth) gives it the same selection. */
int mt_filter_uses_stacks(const mt_filter *f);
/* 1 when the filter has a live:peak clause (a folded model cannot fold it). */
int mt_filter_uses_peak(const mt_filter *f);

/* ------------------------------------------------------------------------ */
/* Selections                                                                */

typedef struct mt_selection mt_selection;

/* What is costed by a node of a tree, a graph or a table. Every query
 * reports all of these at once. live_* are "at the selection's live time"
 * (see mt_select). */
/* Temporary allocations: sampled blocks freed within MT_TEMPORARY_US
 * microseconds of their allocation (docs/names.md says why). */
#define MT_TEMPORARY_US 1000

typedef struct mt_cost {
    double alloc_bytes;      /* estimated bytes allocated */
    double alloc_objects;    /* estimated blocks allocated */
    double live_bytes;       /* estimated bytes live at the live time */
    double live_objects;     /* estimated blocks live at the live time */
    uint64_t samples;        /* sample points behind alloc_bytes (noise: mt_noise) */
    uint64_t live_samples;   /* sample points behind live_bytes */
    uint64_t allocs;         /* sampled blocks */
    double temp_bytes;       /* estimated bytes in temporary blocks (MT_TEMPORARY_US) */
    double temp_objects;     /* estimated temporary blocks */
    uint64_t temp_samples;   /* sample points behind temp_* */
    /* Estimated variances of the block counts (alloc_objects, live_objects,
     * temp_objects): a count weighs each sample by 1 / (rate * words of its
     * block), so a few samples of small blocks carry most of it and its
     * error is far above the bytes' 1/sqrt(samples) (mt_cost_rse). */
    double alloc_objects_var, live_objects_var, temp_objects_var;
    /* Variances of alloc_bytes and live_bytes where they are not samples
     * times one size (a Go heap profile: an object of s bytes sampled with
     * probability p weighs s/p, so a site mixing sizes sums each one's
     * variance; docs/profiles-input.md); 0 for a trace, whose bytes' error
     * is 1/sqrt(samples). mt_cost_rse and mt_cost_samples use them. */
    double alloc_bytes_var, live_bytes_var;
} mt_cost;

/* Apply a filter (NULL: keep everything) to a model. live_at is the time
 * at which live_* costs are measured: a time, MT_TIME_END (what is never
 * collected) or MT_TIME_PEAK. Returns NULL only when out of memory.
 * Costs O(number of allocations + trie nodes). */
mt_selection *mt_select(const mt_model *m, const mt_filter *f, mt_timedelta live_at);
/* Same, and when err is not NULL: on failure *err is a malloc'd message
 * ("filter: regular expression /.../ needs more than ... on a name", or
 * NULL when out of memory). A regex over one of its limits on a name of
 * the model fails the selection (mt_select then returns NULL too). */
mt_selection *mt_select_err(const mt_model *m, const mt_filter *f, mt_timedelta live_at,
                            char **err);
void mt_selection_free(mt_selection *s);

const mt_model *mt_selection_model(const mt_selection *s);
/* The live time, resolved (never MT_TIME_END/PEAK). */
mt_timedelta mt_selection_live_at(const mt_selection *s);
/* Does allocation i (index into mt_model_allocs) pass the filter? */
int mt_selection_has(const mt_selection *s, size_t i);
/* Totals of the allocations that pass. */
mt_cost mt_selection_total(const mt_selection *s);

/* The selection's stack trie: the model's stacks with hidden frames
 * removed (the model's own trie when nothing is hidden). */
size_t mt_selection_n_nodes(const mt_selection *s);
const mt_node *mt_selection_nodes(const mt_selection *s);
/* Stack (selection trie node) of allocation i. */
mt_node_id mt_selection_stack_of(const mt_selection *s, size_t i);
/* Added: the selection trie node of a model trie node (any model node:
 * a folded model's allocation given to a sink names its stack so). */
mt_node_id mt_selection_node_of(const mt_selection *s, mt_node_id model_node);
/* Cost of the allocations whose stack is exactly this node (self cost). */
const mt_cost *mt_selection_node_cost(const mt_selection *s, mt_node_id n);
/* Frames of a selection trie node, outermost first (as mt_model_stack). */
size_t mt_selection_stack(const mt_selection *s, mt_node_id node, mt_frame_id *out,
                          size_t cap);

/* Calls fn once per distinct stack with a non-zero cost (selection trie
 * nodes whose self cost has allocs > 0), in order of first allocation. Stop early by
 * returning non-zero (which is then returned). */
typedef int (*mt_stack_fn)(void *ctx, mt_node_id node, const mt_cost *cost);
int mt_selection_each_stack(const mt_selection *s, mt_stack_fn fn, void *ctx);

/* ------------------------------------------------------------------------ */
/* Queries. Each returns a malloc'd result (NULL only when out of memory)
 * that the caller frees with the given function.                            */

/* Live-memory curve over [t0, t1] (MT_TIME_END allowed for t1) in n
 * buckets of equal width: per bucket the highest estimated live bytes
 * reached in it, for every allocation (total) and for the selected ones
 * (filtered). bucket i covers [time[i], time[i] + width). */
typedef struct mt_curve {
    size_t n;
    mt_timedelta t0, width;
    mt_timedelta *time;      /* bucket starts */
    double *total;           /* max live bytes, all allocations */
    double *filtered;        /* max live bytes, selected allocations */
    double *filtered_alloc;  /* bytes allocated in the bucket by selected allocations */
    double peak_filtered;    /* highest filtered live bytes, exact (not bucketed) */
    mt_timedelta peak_filtered_time;
    mt_peak peak_filtered_est; /* the estimate of that peak (mt_peak; curve_max is
                                * peak_filtered) */
} mt_curve;
mt_curve *mt_query_curve(const mt_selection *s, mt_timedelta t0, mt_timedelta t1, size_t n);
/* An empty curve (values 0, time[] set) of n buckets of the given width
 * from t0; NULL when out of memory. For code that fills curves itself. */
mt_curve *mt_curve_new(mt_timedelta t0, mt_timedelta width, size_t n);
/* The same for the buckets mt_query_curve gives for [t0, t1) of m's times
 * (MT_TIME_END and MT_TIME_PEAK resolved, width rounded up). */
mt_curve *mt_curve_span(const mt_model *m, mt_timedelta t0, mt_timedelta t1, size_t n);
void mt_curve_free(mt_curve *c);

/* Call trees aggregated by function. Node 0 is the root (all selected
 * allocations). Children of a node are listed first_child -> next_sibling
 * in decreasing order of the sort metric.
 *  MT_TREE_TOP_DOWN: root's children are the outermost frames (main), a
 *    node's children its callees; self = allocated directly in this
 *    function at this path.
 *  MT_TREE_BOTTOM_UP: root's children are allocation sites (innermost
 *    frames), a node's children its callers; self is the cost of stacks
 *    that end (outermost) there.
 * Nodes whose total is below min_fraction of the root (by the sort metric)
 * are dropped (their cost stays in their parent's total). */
typedef enum mt_tree_dir { MT_TREE_TOP_DOWN = 0, MT_TREE_BOTTOM_UP = 1 } mt_tree_dir;
typedef enum mt_metric {
    MT_METRIC_ALLOC_BYTES = 0,
    MT_METRIC_ALLOC_OBJECTS = 1,
    MT_METRIC_LIVE_BYTES = 2,
    MT_METRIC_LIVE_OBJECTS = 3,
    MT_METRIC_SAMPLES = 4,
    MT_METRIC_TEMP_OBJECTS = 5, /* temporary blocks (freed within MT_TEMPORARY_US) */
    MT_METRIC_TEMP_BYTES = 6    /* bytes in temporary blocks */
} mt_metric;
/* The value of a metric in a cost. */
double mt_cost_get(const mt_cost *c, mt_metric metric);
/* The sample points behind that value (for mt_noise); for bytes that carry
 * a variance of their own (alloc_bytes_var), the effective samples
 * value^2 / variance. */
uint64_t mt_cost_samples(const mt_cost *c, mt_metric metric);
/* The relative standard error of that value: mt_noise(samples) for bytes
 * and samples (sqrt(variance) / value for bytes that carry a variance),
 * sqrt(variance) / value for block counts (0 when exact: rate
 * 1; 1.0 for a value of 0). Reports mark it as mt_noise's (MT_NOISY,
 * MT_NOISE). */
double mt_cost_rse(const mt_cost *c, mt_metric metric);
/* Parse "alloc", "alloc_bytes", "count"/"alloc_objects", "live"/"live_bytes",
 * "live_objects", "samples", "temporary"/"temp_objects", "temp_bytes".
 * Returns -1 when unknown. */
int mt_metric_parse(const char *name);
const char *mt_metric_name(mt_metric metric);

typedef struct mt_tree_node {
    mt_func_id func;         /* unused for node 0 */
    uint32_t parent;         /* index in nodes; 0 for the root */
    uint32_t first_child;    /* 0: none */
    uint32_t next_sibling;   /* 0: none */
    uint32_t depth;
    mt_cost self;
    mt_cost total;
} mt_tree_node;
typedef struct mt_tree {
    size_t n;
    mt_tree_node *nodes;
    int truncated;           /* 1: stopped at MT_TREE_MAX_NODES (raise min_fraction) */
} mt_tree;
/* A tree grows at most to this many nodes: with min_fraction 0 a trace of
 * millions of distinct deep stacks would otherwise need a node per frame of
 * every stack (use min_fraction 0.001 or so for big traces). */
#define MT_TREE_MAX_NODES 2000000
mt_tree *mt_query_tree(const mt_selection *s, mt_tree_dir dir, mt_metric sort,
                       double min_fraction);
void mt_tree_free(mt_tree *t);

/* Allocation sites: one row per innermost frame (function + line), with
 * its cost, sorted by the metric, plus for each the callers through which
 * it is reached (the next outer frames, top max_callers). */
typedef struct mt_site_caller {
    mt_frame_id frame;       /* the calling frame; (mt_frame_id)-1: none (root) */
    mt_cost cost;
} mt_site_caller;
typedef struct mt_site {
    mt_frame_id frame;       /* a representative frame: function and line of the site */
    mt_cost cost;
    size_t n_callers;        /* all callers; only min(n, max_callers) stored */
    mt_site_caller *callers; /* sorted by the metric */
} mt_site;
typedef struct mt_sites {
    size_t n;
    mt_site *sites;
    mt_cost total;           /* of the whole selection */
} mt_sites;
mt_sites *mt_query_sites(const mt_selection *s, mt_metric sort, size_t max_callers);
void mt_sites_free(mt_sites *t);

/* Call graph by function (as pprof draws it: paths meeting at one function
 * join). flat = allocated in the function itself; cum = in the function or
 * below (each stack counted once per function even under recursion).
 * Edge caller->callee cost = stacks where callee is called from caller.
 * Functions with cum below min_fraction of the total are left out, with
 * their edges. Nodes sorted by cum (metric), edges by cost. */
typedef struct mt_graph_node {
    mt_func_id func;
    mt_cost flat, cum;
} mt_graph_node;
typedef struct mt_graph_edge {
    uint32_t caller, callee; /* indices into nodes */
    mt_cost cost;
} mt_graph_edge;
typedef struct mt_graph {
    size_t n_nodes, n_edges;
    mt_graph_node *nodes;
    mt_graph_edge *edges;
    mt_cost total;
} mt_graph;
mt_graph *mt_query_graph(const mt_selection *s, mt_metric sort, double min_fraction);
void mt_graph_free(mt_graph *g);

/* One function's neighbourhood: its own cost and the cost through each
 * caller and each callee (sorted by the metric). */
typedef struct mt_func_link {
    mt_func_id func;
    mt_cost cost;
} mt_func_link;
typedef struct mt_func_report {
    mt_func_id func;
    mt_cost flat, cum;
    size_t n_callers, n_callees;
    mt_func_link *callers, *callees;
} mt_func_report;
mt_func_report *mt_query_func(const mt_selection *s, mt_func_id f, mt_metric sort);
void mt_func_report_free(mt_func_report *r);
/* The plumbing entry functions that allocations made directly in f (f is
 * their site, mt_select_sites) went through, with their cost, sorted by the
 * metric; *n entries. free() the result; NULL when out of memory. */
mt_func_link *mt_query_func_vias(const mt_selection *s, mt_func_id f, mt_metric metric, size_t *n);
/* Functions whose name contains (or equals, when exact) name; returns how
 * many were found, writes up to cap ids. */
size_t mt_model_find_funcs(const mt_model *m, const char *name, int exact, mt_func_id *out,
                           size_t cap);

/* Histograms with logarithmic buckets (powers of two): of block sizes in
 * bytes, or of lifetimes in microseconds (never-collected blocks counted at
 * the end of the trace, and also in never_collected). Bucket i holds values
 * v with lo[i] <= v < hi[i]; the first bucket starts at 0. Costs are split
 * by source: by_source[i * 3 + mt_source]. */
typedef enum mt_hist_kind { MT_HIST_SIZE = 0, MT_HIST_LIFETIME = 1 } mt_hist_kind;
typedef struct mt_histogram {
    mt_hist_kind kind;
    size_t n;
    uint64_t *lo, *hi;
    mt_cost *cost;           /* all sources */
    mt_cost *by_source;      /* n * 3 */
    mt_cost never_collected; /* lifetime histogram only */
} mt_histogram;
mt_histogram *mt_query_histogram(const mt_selection *s, mt_hist_kind kind);
void mt_histogram_free(mt_histogram *h);

/* Totals and rates. */
typedef struct mt_stats {
    mt_timedelta duration;          /* end of trace */
    uint64_t events, allocs, promotes, collects; /* events in the whole trace */
    mt_cost total;                  /* selected allocations */
    mt_cost by_source[3];
    double promoted_bytes;          /* estimated bytes promoted (selected) */
    double collected_bytes;         /* estimated bytes collected */
    double never_collected_bytes;   /* estimated bytes live at the end */
    double peak_bytes;              /* total curve (all allocations): the estimate */
    mt_timedelta peak_time;         /* (when the estimated curve is highest) */
    double peak_filtered_bytes;     /* selected allocations: the estimate */
    mt_timedelta peak_filtered_time;
    mt_peak peak, peak_filtered;    /* the estimates with their intervals */
    double alloc_rate;              /* estimated bytes allocated per second */
    double mean_lifetime_us;        /* sample-weighted, collected blocks only */
    double median_lifetime_us;      /* sample-weighted, never-collected at end */
    /* Added: the leak verdicts of the selected blocks (docs/leaks.md).
     * has_verdicts: the trace has them; then the estimated bytes the scan
     * found lost and reachable, their standard errors, and how many
     * sampled blocks have each verdict. */
    int has_verdicts;
    double lost_bytes, lost_bytes_se, reachable_bytes, reachable_bytes_se;
    uint64_t lost_blocks, reachable_blocks;
    /* Added: when no lost block was sampled, the most the lost bytes can
     * be at 95% (mt_unsampled_upper); 0 otherwise, and at rate 1. */
    double lost_bytes_upper;
} mt_stats;

/* The most bytes that can hide behind an estimate with no sample at all,
 * at confidence `level` (0.95): L bytes go unsampled with probability
 * exp(-L / bytes_per_sample), so -ln(1 - level) sampling intervals (3.0
 * at 95%); 0 when every allocation is sampled (rate 1), where a zero is
 * exact. What stats, check and top --by lost print for a zero. */
double mt_unsampled_upper(const mt_model *m, double level);

/* A folded model's cost of what it folded (the allocations that passed the
 * filter's per-allocation clauses), per allocation source (MT_SOURCE_*):
 * fills out[3] and returns 1, or returns 0 for a whole model. */
int mt_model_folded_by_source(const mt_model *m, mt_cost out[3]);

void mt_query_stats(const mt_selection *s, mt_stats *out);


/* ------------------------------------------------------------------------ */
/* Allocation plumbing and display names (docs/names.md)                     */
/*
 * Allocation plumbing: functions that only allocate on behalf of their
 * caller (operator new, std::allocator, the standard containers' insides,
 * xmalloc, g_malloc, PyMem_Malloc, sqlite3Malloc, ...). A selection made
 * with mt_select_sites() drops the innermost run of plumbing frames from
 * every stack, so that the allocation site is the first frame in the
 * user's code; costs are unchanged. A stack made only of plumbing is kept
 * whole.
 *
 * Patterns are matched against the qualified function name without its
 * return type and argument list (mt_name_qualified): "std::*" matches
 * "void std::vector<int>::_M_realloc_insert<int>(...)". '*' matches any
 * run of characters; everything else matches itself.
 */
typedef struct mt_plumbing mt_plumbing;
/* A list: empty, or with the built-in patterns (mt_plumbing_builtin). */
mt_plumbing *mt_plumbing_new(int with_builtin);
void mt_plumbing_free(mt_plumbing *p);
/* Add one pattern; a leading '!' makes it an exception (never plumbing).
 * Returns 0, or -1 when out of memory. */
int mt_plumbing_add(mt_plumbing *p, const char *pattern);
/* Add the patterns of a file: one per line, '#' starts a comment, blank
 * lines ignored. Returns 0, or -1 with a malloc'd "FILE: line N: reason"
 * or "FILE: reason" in *err. */
int mt_plumbing_load(mt_plumbing *p, const char *path, char **err);
/* Is a function with this (demangled) name plumbing? */
int mt_plumbing_match(const mt_plumbing *p, const char *func_name);
/* The built-in patterns, NULL-terminated. */
const char *const *mt_plumbing_builtin(void);

/* mt_select_err, plus: with p not NULL, every stack loses its innermost
 * run of plumbing frames (see above). */
mt_selection *mt_select_sites(const mt_model *m, const mt_filter *f, mt_timedelta live_at,
                              const mt_plumbing *p, char **err);
/* The plumbing frame allocation i went through: the outermost frame of
 * the run removed from its stack (the library function the user's code
 * called, e.g. std::vector<int>::resize), or MT_NO_FRAME when none was. */
#define MT_NO_FRAME ((mt_frame_id)-1)
/* For a shallow model (mt_model_options.max_depth): 1 when every selected
 * allocation's site and the site's caller are within the codes kept, so
 * that sites and callers are those of the whole stacks; 0 when a deeper
 * model is needed (a plumbing run as long as the cut, say). */
int mt_selection_sites_complete(const mt_selection *s, const mt_plumbing *p, size_t max_depth);
mt_frame_id mt_selection_via(const mt_selection *s, size_t i);
/* Per site of a mt_query_sites result (same order): the plumbing its cost
 * went through, the biggest first (by metric). */
#define MT_MAX_VIAS 3
typedef struct mt_site_vias {
    size_t n;                     /* distinct plumbing entry functions (all) */
    mt_frame_id frame[MT_MAX_VIAS]; /* representative frames, min(n, MT_MAX_VIAS) */
    double share[MT_MAX_VIAS];    /* of the site's value */
} mt_site_vias;
/* NULL when out of memory; free() the result. */
mt_site_vias *mt_query_site_vias(const mt_selection *s, const mt_sites *t, mt_metric metric);

/* Display form of a demangled name: return type dropped, std::string for
 * std::__cxx11::basic_string<char, std::char_traits<char>,
 * std::allocator<char> >, default template arguments dropped, long
 * template argument lists folded to <…>, argument lists to (…). Writes at
 * most cap bytes (NUL-terminated) and returns the full length, like
 * snprintf. C names are unchanged. */
size_t mt_name_simplify(const char *name, char *out, size_t cap);
/* The qualified name alone: no return type, no argument list. */
size_t mt_name_qualified(const char *name, char *out, size_t cap);

/* ------------------------------------------------------------------------ */
/* [experimental] Reading: one read, many sinks (lib/analyze/read.c)         */
/*
 * A report says what it wants from a read: the per-stack costs of a filter
 * at a time (a folded model, for mt_select_sites with that filter and
 * time), figures fed one finished allocation at a time (sinks), and
 * whether the peak's time must be known before the pass. mt_read plans the
 * passes from that and from the input: one folded pass; the peak first
 * (the codec alone for one file, a folded pass otherwise); or, when the
 * input allows no plan that streams (a pipe that would have to be read
 * twice, times that go back), the whole model, every allocation kept.
 *
 * Thread safety: a request is used by one thread; sinks are called on the
 * caller's thread (the trace may be decoded on a second one), in file
 * order. Lifetimes: the model and allocation given to a sink are valid for
 * the call only (the model is still being built: see on_fold in
 * mt_model_options for which of its nodes are valid). */

/* A consumer of finished allocations: a figure (totals, curve, lifetimes,
 * scatter, per-allocation attributes...). Any callback may be NULL.
 * Returns 0, or -1 to stop the read (it then fails with "stopped by the
 * caller"). */
typedef struct mt_sink {
    /* an allocation as it is read (a->collect is MT_TIME_NEVER), in file
     * order */
    int (*on_alloc)(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq);
    /* an allocation finished: collected (a->collect set) during the read,
     * or still live at the end (MT_TIME_NEVER), those last in allocation
     * order; seq is its index in the file. Only allocations that pass the
     * request's filter's allocation-level clauses come here. */
    int (*on_done)(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq);
    /* before each folded pass that calls the sink (a read may take more
     * than one: deeper stacks) */
    void (*on_reset)(void *ctx);
    void *ctx;
    /* an allocation finished, as on_done, but called on a thread of the
     * read's own while the caller's thread goes on reading (in the same
     * order; on the caller's thread when the route one-thread is forced or
     * no thread can be started), so it must not read the model: end is
     * mt_model_end when the allocation finished. The read returns once
     * every call is over. */
    int (*on_done_apart)(void *ctx, const mt_alloc *a, mt_timedelta end, uint64_t seq);
    /* on the caller's thread before the first on_done_apart call, with the
     * model once its header is read (to take what on_done_apart needs of
     * it: mt_stats_acc_bind) */
    int (*on_bind)(void *ctx, const mt_model *m);
} mt_sink;

struct mt_alloc_index;

typedef struct mt_read_request {
    const char *const *paths;     /* the traces, merged into one stream */
    size_t n;
    int by_process;               /* an outermost frame per process */
    int fold;                     /* 1: fold (the default plan); 0: the whole model */
    const struct mt_filter *filter; /* the folded costs' filter (NULL: all) */
    mt_timedelta live_at;         /* the folded costs' live time */
    int need_peak;                /* the peak's time is needed before the pass */
    int peak_known;               /* in: peak given; out: peak found */
    mt_timedelta peak;
    size_t max_depth;             /* as mt_model_options */
    const mt_sink *sinks;         /* called when folded (not by the whole model) */
    size_t n_sinks;
    mt_warning_fn on_warning;     /* every warning of the read (as mt_model_options);
                                   * NULL: "memtrace: warning: ..." on stderr */
    void *warning_ctx;
    mt_progress_fn on_progress;
    void *progress_ctx;
    /* 1: on_done and on_done_apart get only the allocations that pass the
     * whole filter, stack clauses (inside:) included (mt_stream_filter),
     * not only its allocation-level clauses */
    int sinks_filtered;
    /* The trace's allocation index (memtrace/stream.h) and the unfiltered
     * folded model it matches, or NULL: a folded pass of one trace with no
     * on_alloc sink, live at the end and whole stacks is then folded from
     * the index instead of the trace (the same model and sink calls; the
     * progress in bytes of the index). */
    const struct mt_alloc_index *index;
    const mt_model *index_base;
    /* 1: a streaming read: the caller's figures come from the folded
     * costs and the sinks alone, so the read folds whatever the route
     * forced (mt_read_force) and also when the peak cannot be known first
     * (then mt_model_peak_known of the model is 0); 0: the planner may
     * take the whole model, which calls no sink. */
    int stream;
    /* out: 1 when the read folded and the sinks saw every allocation;
     * 0 when the whole model came instead (every allocation kept for the
     * caller to query, no sink called) */
    int sinks_fed;
} mt_read_request;

/* Plans and runs the read (see above). The model, or NULL with *err set
 * (malloc'd). rq->sinks_fed says whether the sinks or the model hold the
 * figures; rq->peak the peak used. */
mt_model *mt_read(mt_read_request *rq, char **err);
/* The same read again, as mt_read planned it (the peak it found kept),
 * after the caller changed what the plan does not depend on: deeper
 * stacks (max_depth), another progress callback. */
mt_model *mt_read_again(mt_read_request *rq, char **err);
/* The peak's time of the request's traces (unfiltered): 0 (*peak set),
 * 1 (times go back somewhere: only the whole model has a peak), or -1
 * (cannot read; *err set when err is not NULL). */
int mt_read_peak(const mt_read_request *rq, mt_timedelta *peak, char **err);
/* Whether a read of these traces may fold, given whether it needs the peak
 * first (a pipe cannot be read twice), and the forced route. */
int mt_read_may_fold(const char *const *paths, size_t n, int need_peak);
/* 1 when every path is a regular file (can be read again). */
int mt_read_regular(const char *const *paths, size_t n);
/* The viewer's plan for one file (`memtrace view`): folded (served from
 * folded models, the trace read again or folded from its allocation index
 * for each filter) when it is a regular file larger than fold_above bytes
 * (MT_READ_FOLD_ABOVE: the default), and always for a pprof profile
 * (per-stack views only, never an index); else the whole model (a smaller
 * file, a pipe). no_index: the caller's refusal of an index, kept. */
#define MT_READ_FOLD_ABOVE ((uint64_t)128 << 20)
typedef struct mt_read_view_plan {
    int folded;
    int no_index;
} mt_read_view_plan;
mt_read_view_plan mt_read_plan_view(const char *path, uint64_t fold_above, int no_index);

/* Forcing a route, for tests and benchmarks only (the CLI's global option
 * --route, docs/api-analyze.md): a comma-separated list of
 *   whole        the whole model wherever a report could fold or stream
 *   one-thread   every read and every viewer load on the caller's thread
 *   two-threads  a reading thread even on one processor
 *   qsort        the fold's general sort instead of its radix sort
 * or "auto" (the default plan). Process-wide; set it before any read.
 * Returns 0, or -1 for an unknown name. The outputs are the same whatever
 * the route: that is what the tests check with it. */
#define MT_ROUTE_WHOLE 1u
#define MT_ROUTE_ONE_THREAD 2u
#define MT_ROUTE_TWO_THREADS 4u
#define MT_ROUTE_QSORT 8u
int mt_read_force(const char *spec);
unsigned mt_read_forced(void);   /* MT_ROUTE_* flags */



/* ------------------------------------------------------------------------ */
/* [experimental] Scale: what the estimates need of a trace (leave out with  */
/* MEMTRACE_STABLE_ONLY)                                                     */
/*
 * The estimators of docs/estimates.md depend on a trace only through its
 * sampling rate and word size: mt_scale holds them and what follows from
 * them, so that a figure can be estimated without a model (a stream, a
 * pprof profile, a test). A plain value: copy it freely; its functions are
 * pure and thread safe. mt_alloc_bytes, mt_alloc_objects and mt_peak_scale
 * are these for a model's scale. */
#ifndef MEMTRACE_STABLE_ONLY

typedef struct mt_scale {
    double sample_rate;      /* samples per word (the trace's sample_rate) */
    double word_bytes;       /* bytes per word: word_size / 8 */
    double bytes_per_sample; /* word_bytes / sample_rate; 0 when the rate is 0 */
    double inv_word_bytes;   /* 1 / word_bytes (0 when that is 0) */
    double inv_rate;         /* 1 / sample_rate (0 when that is 0) */
} mt_scale;

/* The scale of a trace recorded with info's sample_rate and word_size. */
mt_scale mt_scale_of(const mt_trace_info *info);
/* The scale of a model's trace (valid as long as the model). */
const mt_scale *mt_model_scale(const mt_model *m);
/* Estimated bytes and objects one sampled allocation stands for. */
double mt_scale_alloc_bytes(const mt_scale *s, const mt_alloc *a);
double mt_scale_alloc_objects(const mt_scale *s, const mt_alloc *a);
/* The variance of mt_scale_alloc_objects (docs/estimates.md). */
double mt_scale_alloc_objects_var(const mt_scale *s, const mt_alloc *a);
/* A peak estimated in samples, in bytes (mt_peak_scale by the scale's
 * bytes_per_sample). */
void mt_scale_peak(const mt_scale *s, mt_peak *p);

#endif /* MEMTRACE_STABLE_ONLY */

#ifdef __cplusplus
}
#endif
#endif
