/*
 * memtrace/present.h - reports built on the analysis engine (analyze.h):
 * text tables and JSON for people and scripts, collapsed stacks for flame
 * graph tools, gzipped pprof profiles, and SVG plots. Each function writes
 * one report of a selection; they only read the selection, so several may
 * run at once on the same model.
 *
 * Every writer returns 0, or -1 on an output error (errno set) or when out
 * of memory.
 *
 * Objects: the escapers, the formatters of figures, then one section per
 * report (top, stats, lifetimes, folded stacks, pprof, plots), each taking
 * a selection (mt_selection of analyze.h).
 * Units: sizes in bytes, times in microseconds (mt_timedelta) unless a
 * function says otherwise; buffers are (buf, cap) and always terminated
 * when cap > 0.
 * Lifetimes: nothing returned points into the selection or the model
 * after the call but mt_display_name's result (name itself, or buf).
 * Thread safety: the functions keep no state; a selection or model may be
 * reported from several threads at once; one FILE is the caller's to
 * share.
 * Stability: everything above the "Experimental" section at the end is
 * stable. The experimental part (reports from figures computed by the
 * streaming accumulators of memtrace/stream.h, the JSON fragments the
 * viewer shares) follows the analysis layer's pipeline and may change;
 * define MEMTRACE_STABLE_ONLY to leave it out.
 */
#ifndef MEMTRACE_PRESENT_H
#define MEMTRACE_PRESENT_H

#include <stdio.h>

#include "memtrace/analyze.h"
#include "memtrace/leaks.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Escapers                                                                  */

/* The one escaper (lib/present/escape.c) for text from a trace or from
 * outside (names, executable, host, command lines, paths) in every output.
 *
 * mt_utf8_char: the length (1 to 4) of the well-formed UTF-8 character at
 * s (n bytes there), or 0 when it is not one: a stray continuation byte,
 * an overlong form, a surrogate, past U+10FFFF or cut short.
 *
 * Terminal: control characters (C0, DEL, C1), and bytes that are not
 * UTF-8, become \xHH; other text, UTF-8 included, is unchanged; a
 * backslash is left as is. Text that starts (after blanks) with "::" has
 * its first ':' written \x3a, and "##[" its first '#' \x23: no line is a
 * CI workflow command (GitHub Actions) because of what a name holds.
 * mt_text_put writes it to out; mt_text_escape into buf (cut to cap - 1
 * bytes, never inside an escape or a character, always NUL-terminated) and
 * returns its length. Every text report uses these. */
size_t mt_utf8_char(const char *s, size_t n);
void mt_text_put(FILE *out, const char *s);
size_t mt_text_escape(char *buf, size_t cap, const char *s);
/* The message of a workflow command (::error title=...::MESSAGE): % as
 * %25, CR as %0D, LF as %0A, the rest as mt_text_put. */
void mt_ci_data_put(FILE *out, const char *s);
/* XML text or attribute value (SVG, JUnit): the five entities, tab, LF
 * and CR as character references; what XML 1.0 cannot hold (other
 * controls, U+FFFE, U+FFFF, bytes that are not UTF-8) and C1 controls as
 * the text \xHH. Always valid UTF-8 and well-formed. */
void mt_xml_put(FILE *out, const char *s);
/* The same escapers writing through put(ctx, bytes, len), for n bytes at
 * s (NULs included): the viewer's JSON builder and other buffers. JSON:
 * the contents of a string literal, without the quotes (as
 * mt_json_string). */
typedef void (*mt_put_fn)(void *ctx, const char *s, size_t n);
void mt_text_escape_to(const char *s, size_t n, mt_put_fn put, void *ctx);
void mt_ci_escape_to(const char *s, size_t n, mt_put_fn put, void *ctx);
void mt_xml_escape_to(const char *s, size_t n, mt_put_fn put, void *ctx);
void mt_json_escape_to(const char *s, size_t n, mt_put_fn put, void *ctx);
/* The mt_put_fn that writes to a FILE (ctx). */
void mt_put_file(void *file, const char *s, size_t n);
/* Bytes mt_json_escape_to writes for s (without the quotes). */
size_t mt_json_escaped_len(const char *s, size_t n);

/* ------------------------------------------------------------------------ */
/* Figures                                                                   */

/* "12.3 MiB", "512 B" (bytes, 1024-based). */
void mt_format_bytes(char *buf, size_t cap, double bytes);
/* "1.234s", "250ms", "17us". */
void mt_format_time(char *buf, size_t cap, mt_timedelta us);
/* A JSON string literal of s (with quotes) to out. Always valid JSON and
 * valid UTF-8: control characters (C1 and DEL included) as \\u00XX, and
 * each byte that is not UTF-8 (overlong forms, surrogates, past U+10FFFF)
 * as \\ufffd, as the viewer's JSON (mt_json_escape_to). */
void mt_json_string(FILE *out, const char *s);
/* "name (file:line)" of a frame, or "name" when there is no file; escaped
 * as mt_text_escape does. */
void mt_format_frame(char *buf, size_t cap, const mt_model *m, mt_frame_id f);
/* The same with the name shortened (mt_name_simplify) unless full. */
void mt_format_frame_as(char *buf, size_t cap, const mt_model *m, mt_frame_id f, int full);
/* {"function":..,"file":..,"line":..} of a frame. */
void mt_json_frame(FILE *out, const mt_model *m, mt_frame_id f);
/* ,"short":".." after it: the function's short name. */
void mt_json_frame_short(FILE *out, const mt_model *m, mt_frame_id f);
/* name itself when full, else its short form written into buf. */
const char *mt_display_name(char *buf, size_t cap, const char *name, int full);
/* "via std::vector<int>::resize(…) 80%, ..." under a site of top. */
void mt_report_vias(FILE *out, const mt_model *m, const mt_site_vias *v, int full);
/* A peak estimate (mt_peak) in words: "120 MiB (95% interval 110 MiB -
 * 131 MiB)", or the bytes alone when exact (rate 1). */
void mt_format_peak(char *buf, size_t cap, const mt_peak *p);
/* Noise marker for a relative standard error: "" (fine), "~" (> MT_NOISY),
 * "?" (> MT_NOISE). */
const char *mt_rse_mark(double rse);
/* Noise marker for k samples: "" (fine), "~" (noisy: rse > 20%), "?"
 * (mostly noise: rse > 50%). */
const char *mt_noise_mark(uint64_t k);

/* ------------------------------------------------------------------------ */
/* Reports of a selection                                                    */

/* memtrace top: the allocation sites with the most cost, each with its
 * share and its callers. */
typedef struct mt_top_options {
    mt_metric metric;        /* sort and share by this */
    size_t limit;            /* sites shown (0: all) */
    size_t callers;          /* callers shown per site */
    int json;
    const char *filter_text; /* shown in the header; may be NULL */
    int full_names;          /* names as recorded (else shortened C++ names) */
    int at_peak;             /* live measured at the peak: the peak's estimate
                              * (mt_model_peak) is shown beside the total */
} mt_top_options;
int mt_report_top(FILE *out, const mt_selection *s, const mt_top_options *o);

/* [experimental] memtrace rss: the resident-memory ledger L (mt_ledger_make)
 * as a table or one JSON object; when names the moment ("peak", "end",
 * "at 2.5s"). docs/rss.md. */
int mt_report_ledger(FILE *out, const mt_ledger *L, const char *when, int json);

/* memtrace stats: totals, estimates, peak, rates, histograms per kind
 * (mt_alloc_kind_name). */
int mt_report_stats(FILE *out, const mt_selection *s, int json);
/* The same with the trace's resident-memory samples (may be NULL): peak
 * RSS, RSS at the end, and the gap between RSS and the estimated heap. */
int mt_report_stats_rss(FILE *out, const mt_selection *s, const mt_rss *rss, int json);

/* memtrace lifetimes: "ALLOC_TIME LIFETIME" in seconds, one line per
 * selected sampled allocation (never-collected: until the end of trace). */
int mt_report_lifetimes(FILE *out, const mt_selection *s, int json);

/* Collapsed stacks "main;f;g 1234" (outermost first), weighted by the
 * metric (rounded to integers), one line per distinct function path.
 * Names are escaped (mt_text_put) with ';' written ':'. When the call tree
 * reaches MT_TREE_MAX_NODES, the cost of the paths it could not hold is
 * written under their deepest kept caller as "main;f;[truncated] 567"
 * (so that totals stay right), and mt_report_folded_ex sets *truncated
 * (may be NULL) to 1. */
int mt_report_folded(FILE *out, const mt_selection *s, mt_metric weight);
/* The same; full_names 0 shortens C++ names (mt_name_simplify), and
 * *truncated (may be NULL) says whether the tree was cut. */
int mt_report_folded_ex(FILE *out, const mt_selection *s, mt_metric weight, int full_names,
                        int *truncated);

/* pprof: a gzipped profile.proto with sample types alloc_objects/count,
 * alloc_space/bytes, inuse_objects/count, inuse_space/bytes (inuse = live
 * at the selection's live time), period space/bytes, one sample per
 * distinct stack, inlined frames as several lines of one location.
 * On error returns -1 and, if err is not NULL, a malloc'd message. */
typedef struct mt_pprof_options {
    int level;               /* gzip level 1-9; 0: 6 */
    int alloc_default;       /* nonzero: default_sample_type = alloc_space */
    int full_names;          /* Function.name as recorded (else shortened C++ names;
                              * Function.system_name is always the full name) */
} mt_pprof_options;
/* path is written as a new file renamed over it once complete (mode 0666
 * less the umask); another user's file or symbolic link at path is
 * refused (docs/recorder.md, "Shared directories and other users"). */
int mt_write_pprof(const char *path, const mt_selection *s, const mt_pprof_options *o,
                   char **err);
/* Same into an open descriptor (not closed). */
int mt_write_pprof_fd(int fd, const mt_selection *s, const mt_pprof_options *o, char **err);
/* Same for an interval of the trace, from (a trace time) to its end, as
 * the profile's time and duration: alloc_objects/alloc_space from alloc
 * (a selection of the same model, e.g. the interval's allocations: the
 * delta heap profiles Pyroscope takes; NULL: s's), inuse_* from s; a
 * stack with both has two samples. Experimental. */
int mt_write_pprof_fd_interval(int fd, const mt_selection *s, const mt_selection *alloc,
                               mt_timedelta from, const mt_pprof_options *o, char **err);

/* OpenTelemetry profiles: a gzipped ExportProfilesServiceRequest
 * (opentelemetry.proto.collector.profiles.v1development), the body of an
 * OTLP/HTTP POST to /v1development/profiles: one resource (service.name,
 * process.pid, process.executable.name, then the given attributes), scope
 * "memory", four profiles inuse_space/bytes, inuse_objects/count (live at
 * the selection's live time), alloc_space/bytes, alloc_objects/count (of
 * alloc, e.g. the allocations of an interval, else of s), period type
 * space/bytes with the bytes one sample stands for, estimated values; one
 * dictionary whose every table starts with its zero value. Experimental:
 * the profiles signal is still in development upstream. 0, or -1 and a
 * malloc'd message in *err (if err is not NULL); *out is malloc'd. */
typedef struct mt_otlp_options {
    const mt_selection *alloc;        /* alloc_* from these (same model); NULL: s */
    const char *service_name;         /* NULL: the executable's name */
    long long pid;                    /* 0: the trace's */
    const char *executable_name;      /* NULL: the trace's */
    const char *build_id_hex;         /* process.executable.build_id.gnu, or NULL */
    unsigned long long start_unix_nano, end_unix_nano;   /* 0, 0: the trace's span */
    const char *const *attribute_names, *const *attribute_values;
    size_t n_attributes;
    int level;                        /* gzip level 1-9; 0: 6 */
    int full_names;                   /* as mt_pprof_options */
} mt_otlp_options;
int mt_otlp_request(const mt_selection *s, const mt_otlp_options *o, unsigned char **out,
                    size_t *len, char **err);

/* SVG pictures. */
typedef enum mt_plot_kind {
    MT_PLOT_MEMORY = 0,      /* live memory over time: total and filtered */
    MT_PLOT_SIZES = 1,       /* histogram of block sizes (estimated bytes) */
    MT_PLOT_LIFETIMES = 2    /* scatter: allocation time vs lifetime */
} mt_plot_kind;
typedef struct mt_plot_options {
    mt_plot_kind kind;
    int width, height;       /* pixels; 0: 900 x 420 */
    const char *title;       /* NULL: the executable name */
    const mt_rss *rss;       /* memory plot: resident memory drawn too; may be NULL */
} mt_plot_options;
int mt_plot_svg(FILE *out, const mt_selection *s, const mt_plot_options *o);

/* ------------------------------------------------------------------------ */
/* Experimental (leave out with MEMTRACE_STABLE_ONLY)                        */

#ifndef MEMTRACE_STABLE_ONLY

/* JSON fragments */

/* A cost as a JSON object: {"alloc_bytes":..,"alloc_objects":..,"live_bytes":..,
 * "live_objects":..,"samples":..,"live_samples":..,"allocs":..,"temp_bytes":..,
 * "temp_objects":..,"temp_samples":.., then each figure's standard error:
 * "alloc_bytes_se":..,"alloc_objects_se":..,"live_bytes_se":..,
 * "live_objects_se":..,"temp_bytes_se":..,"temp_objects_se":..}
 * (mt_cost_rse times the figure). Bytes as whole numbers, objects and
 * standard errors with one decimal. The one encoder of a cost: the
 * reports and the viewer's API write the same text. */
void mt_json_cost(FILE *out, const mt_cost *c);
/* The same text, through put (as mt_json_escape_to). */
void mt_json_cost_to(const mt_cost *c, mt_put_fn put, void *ctx);
/* A peak estimate's (mt_peak) JSON fields besides the estimate, after a
 * prefix ("peak" gives "peak_lo_bytes":.., "peak_hi_bytes":.., "peak_sd_bytes":..,
 * "peak_curve_max_bytes":.., "peak_readings":..), each after a comma. */
void mt_json_peak(FILE *out, const char *prefix, const mt_peak *p);

/* Reports from figures computed elsewhere */

/* mt_report_stats from figures computed elsewhere (mt_query_stats and
 * mt_query_histogram, or a mt_stats_acc of memtrace/stream.h); live_at is
 * the time the live_* costs were taken at, resolved. */
int mt_report_stats_figures(FILE *out, const mt_model *m, const mt_stats *st,
                            const mt_histogram *size, const mt_histogram *life,
                            mt_timedelta live_at, const mt_rss *rss, int json);
/* One line of mt_report_lifetimes for allocation a (end: the trace's
 * end); with json, one array element (first: the first one), between "["
 * and "\n]\n". */
void mt_lifetimes_line(FILE *out, const mt_alloc *a, mt_timedelta end, int json, int first);
/* mt_plot_svg's pictures from figures computed elsewhere (streaming reports,
 * memtrace/stream.h). Memory: a curve of mt_plot_memory_buckets(o) buckets
 * over [0, mt_model_end(m) + 1); filtered: draw the selected allocations'
 * line too. */
size_t mt_plot_memory_buckets(const mt_plot_options *o);
int mt_plot_memory_svg(FILE *out, const mt_model *m, const mt_curve *c, int filtered,
                       const mt_plot_options *o);
/* Sizes: the size histogram and the bytes allocated in all. */
int mt_plot_sizes_svg(FILE *out, const mt_model *m, const mt_histogram *h, double alloc_bytes,
                      const mt_plot_options *o);
/* Lifetimes: the dots of the selected allocations, given in any order with
 * their index in the file (seq), at most one per pixel and colour (memory
 * for the dots drawn), kept by a scatter from _new to _free, used by one
 * thread at a time. max_life: the longest lifetime among them, end: the
 * trace's end (both known before the first dot: a first pass). */
typedef struct mt_plot_scatter mt_plot_scatter;
mt_plot_scatter *mt_plot_scatter_new(const mt_plot_options *o, mt_timedelta end,
                                     mt_timedelta max_life);
int mt_plot_scatter_add(mt_plot_scatter *sc, const mt_alloc *a, uint64_t seq);
void mt_plot_scatter_free(mt_plot_scatter *sc);
int mt_plot_lifetimes_svg(FILE *out, const mt_model *m, const mt_plot_scatter *sc,
                          uint64_t n_selected, const mt_plot_options *o);

/* `memtrace leaks`: the suspects of mt_query_leaks (every site with all),
 * as text or JSON (memtrace/leaks.h). */
typedef struct mt_leaks_report_options {
    int json;
    int all;                 /* every site, not only suspects */
    size_t limit;            /* rows shown (0: all) */
    int full_names;
    int from_given;          /* the window's start was chosen by the user */
    const char *filter_text; /* shown in the header; may be NULL */
} mt_leaks_report_options;
int mt_report_leaks(FILE *out, const mt_selection *s, const mt_leak_report *r,
                    const mt_leaks_report_options *o);

#endif /* MEMTRACE_STABLE_ONLY */

#ifdef __cplusplus
}
#endif
#endif
