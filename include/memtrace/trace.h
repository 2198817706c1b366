/*
 * memtrace/trace.h - the trace codec: read and write memtrace traces (.ctf).
 *
 * The format is byte-compatible with Jane Street's OCaml memtrace library
 * (format versions 1, 2 and 3); docs/format.md describes it in full and
 * docs/api-trace.md documents this interface with examples.
 *
 * This header is the public API of the "trace" layer. It depends on nothing
 * but the C library; the analysis engine, the CLI and the recorder all sit on
 * top of it. Objects: the reader (mt_reader), the writer (mt_writer).
 *
 * Units: times are microseconds (mt_timestamp since the Unix epoch,
 * mt_timedelta since the trace's start); lengths are words of
 * mt_trace_info.word_size bits (8 in C traces: bytes); rates are
 * probabilities per word.
 * Lifetimes: what a reader hands out (info, locations, strings) stays
 * valid until mt_reader_close, except an event's backtrace, valid until
 * the next mt_reader_next; error messages returned through char **error
 * are malloc'd and the caller frees them; mt_reader_error and
 * mt_writer_error strings live as long as their object.
 * Thread safety: one reader or writer is used by one thread at a time;
 * different readers and writers may be used on different threads at once.
 *
 * Stability: everything above the "Experimental" section at the end keeps
 * its meaning and signature. The experimental part (newer, used by
 * memtrace's own tools) may still change; define MEMTRACE_STABLE_ONLY
 * before including this header to leave it out.
 */
#ifndef MEMTRACE_TRACE_H
#define MEMTRACE_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int64_t mt_timestamp;      /* absolute time, microseconds since the Unix epoch */
typedef int64_t mt_timedelta;      /* microseconds since the trace's start time */
typedef uint64_t mt_obj_id;        /* allocation id, implicit in the file: 0, 1, 2, ... */
typedef uint64_t mt_location_code; /* opaque backtrace code (a return address for C traces) */

/* The code the recorder gives the frame that ends (outermost) a stack cut
 * at its depth limit: it stands for the location "[truncated]" (file "",
 * line 0). No return address is 1. */
#define MT_CODE_TRUNCATED ((mt_location_code)1)

typedef enum mt_source {
    MT_SOURCE_MINOR = 0,    /* OCaml minor heap */
    MT_SOURCE_MAJOR = 1,    /* OCaml major heap */
    MT_SOURCE_EXTERNAL = 2  /* outside the OCaml heap: every allocation of a C trace */
} mt_source;

/* One source location. A code may stand for several (inlined frames),
 * listed outermost first. Strings are never NULL. */
typedef struct mt_location {
    const char *filename;
    const char *defname;   /* function name; "??" when unknown */
    uint32_t line;         /* 20 bits on the wire */
    uint32_t start_char;   /* 8 bits on the wire */
    uint32_t end_char;     /* 10 bits on the wire */
} mt_location;

/* The trace-info event: what the first packet of every trace holds. */
typedef struct mt_trace_info {
    int version;                    /* format version of the file: 1, 2 or 3 */
    double sample_rate;             /* sampling probability per word */
    unsigned word_size;             /* in bits: 64 for OCaml traces, 8 for C traces */
    const char *executable_name;
    const char *host_name;
    const char *ocaml_runtime_params;
    uint64_t pid;
    mt_timestamp start_time;
    const char *context;            /* NULL when the trace has none */
    unsigned initial_domain;        /* v3: domain of the first packet; else 0 */
} mt_trace_info;

/* ocaml_runtime_params of a C trace recorded by 'memtrace attach': the
 * recording started in a running process, so memory live before it is not
 * in the trace (docs/format.md). Other C traces have "". */
#define MT_INFO_ATTACHED "memtrace-attached"

typedef enum mt_event_kind {
    MT_EVENT_ALLOC = 0,
    MT_EVENT_PROMOTE = 1,
    MT_EVENT_COLLECT = 2
} mt_event_kind;

typedef struct mt_event {
    mt_event_kind kind;
    mt_timedelta time;       /* microseconds since the trace's start */
    mt_obj_id id;            /* the allocation this event is about */
    unsigned domain;         /* v3 domain; 0 for v1/v2 */
    /* MT_EVENT_ALLOC only: */
    uint64_t length;         /* size in words (word_size bits each) */
    uint64_t n_samples;      /* sample points that fell in the block, >= 1 */
    mt_source source;
    const mt_location_code *backtrace; /* caller first; valid until the next call */
    size_t backtrace_length;
    size_t common_prefix;    /* decoded prefix length, as on the wire */
    /* MT_EVENT_ALLOC: 1 for a block carried over from the previous
     * piece of a rotated recording (it was allocated before this piece
     * started and is still live; its time is the piece's start), else 0.
     * Set by mt_reader_next from the packet's carried mark. */
    int carried;
    /* Added, MT_EVENT_ALLOC: the leak scan's verdict on the block (a
     * MT_VERDICT_*), from TRACE.leaks beside a trace opened by path
     * (docs/leaks.md); MT_VERDICT_NONE for a block the scan did not see
     * live, and for every block of a trace without verdicts. */
    int verdict;
} mt_event;

enum { MT_VERDICT_NONE = 0, MT_VERDICT_LOST = 1, MT_VERDICT_REACHABLE = 2 };

/* ------------------------------------------------------------------------ */
/* Reader                                                                    */

typedef struct mt_reader mt_reader;

/* Receives one warning, e.g. "t.ctf: offset 4096: skipping packet from
 * pid 12 (trace pid 11)", on the thread using the reader; message is
 * valid during the call only. */
typedef void (*mt_warning_fn)(void *ctx, const char *message);

typedef struct mt_reader_options {
    mt_warning_fn on_warning;   /* NULL: warnings go to stderr */
    void *warning_ctx;
    int skip_backtraces;        /* nonzero: don't decode backtraces (faster) */
    /* Added: nonzero: locations exactly as the trace holds them, raw
     * frames included, even when a namer is set (mt_reader_set_namer). */
    int raw_frames;
} mt_reader_options;

/* Added: names for raw frames (docs/format.md, "Raw frames") as a trace is
 * read. The namer gets the locations a location event gives a code that
 * holds at least one raw frame (trace: the reader's name, for messages),
 * and writes the locations to keep instead into out (room for max, at
 * most 255), returning how many; 0 keeps them as they are. Its strings are
 * copied before it is called again. The list stands for the code from then
 * on (mt_reader_lookup); a code described again is checked against what the
 * trace said. It may be called from several readers on several threads at
 * once. Not called for readers with skip_backtraces or raw_frames set. */
typedef size_t (*mt_name_fn)(void *ctx, const char *trace, const mt_location *in, size_t n,
                             mt_location *out, size_t max);

/* Sets the namer of every reader opened from now on in this process (fn
 * NULL: none, the default). Call it before opening readers and starting
 * threads (the CLI does, at start, for the commands that report). */
void mt_reader_set_namer(mt_name_fn fn, void *ctx);

/* Open a trace. On failure returns NULL and, if error is not NULL, stores a
 * malloc'd message "FILE: offset N: reason" the caller frees. opts may be NULL. */
mt_reader *mt_reader_open(const char *path, const mt_reader_options *opts, char **error);
/* Same over an open descriptor (not closed by the reader); name is used in messages. */
mt_reader *mt_reader_open_fd(int fd, const char *name, const mt_reader_options *opts,
                             char **error);
/* Same over bytes in memory (not copied; must outlive the reader). */
mt_reader *mt_reader_open_memory(const void *data, size_t size, const char *name,
                                 const mt_reader_options *opts, char **error);

const mt_trace_info *mt_reader_info(const mt_reader *r);

/* Next allocation, promotion or collection event, in file order.
 * Returns 1 with *ev filled, 0 at the end of the trace, -1 on a format error
 * (then mt_reader_error says "FILE: offset N: reason"). */
int mt_reader_next(mt_reader *r, mt_event *ev);
const char *mt_reader_error(const mt_reader *r);

/* Locations a code stands for (outermost first), as taught by the trace so
 * far. Returns 0 and sets *locs / *n (n may be 0: no debug info), or -1 if
 * the code has not been described. Pointers stay valid until close. */
int mt_reader_lookup(const mt_reader *r, mt_location_code code,
                     const mt_location **locs, size_t *n);

/* The latest packet end time read so far, in microseconds since the
 * trace's start. Once mt_reader_next has returned 0 it is when the
 * recording ended, which is later than the last event when the writer says
 * so (mt_writer_flush_until): a process that held its memory for seconds
 * after its last allocation. */
mt_timedelta mt_reader_end_time(const mt_reader *r);

/* The end that mt_reader_end_time gives once every event of the trace
 * file path is read, found from the packets' headers alone (each header
 * read where it stands, the events skipped: milliseconds for gigabytes).
 * A hint: packets a reader skips as out of sequence count here, so a
 * caller that needs the exact end checks it after reading. 0, or -1 when
 * the file is not a regular file or a header is damaged (read the events
 * to learn why). */
int mt_trace_end_hint(const char *path, mt_timedelta *end);
/* 1 if the last packet read carries the writer's end mark (the
 * recording process exited, exec'd or stopped tracing), 0 if the trace
 * stops without it: killed, crashed, a write error (disk full), still being
 * written, or a writer that does not mark its end (OCaml's). */
int mt_reader_ended(const mt_reader *r);
/* Added: 1 if the trace has leak verdicts (TRACE.leaks beside a trace
 * opened with mt_reader_open), with *time (may be NULL) the scan's time
 * since the trace's start; 0 if not. */
int mt_reader_scan(const mt_reader *r, mt_timedelta *time);


/* Byte offset of the next unread packet; total size when known (else 0). */
uint64_t mt_reader_offset(const mt_reader *r);
uint64_t mt_reader_size(const mt_reader *r);

void mt_reader_close(mt_reader *r);

/* ------------------------------------------------------------------------ */
/* Writer                                                                    */

typedef struct mt_writer mt_writer;

/* Tells the writer what a code means. Called when the code's location event
 * is written (at packet flush, once per cache miss of the code), never
 * while an event is being added. Return 0 with *locs and *n set (pointers valid
 * until the next call), or -1 if unknown (written as no locations). */
typedef int (*mt_location_resolver)(void *ctx, mt_location_code code,
                                     const mt_location **locs, size_t *n);

/* Where bytes go. Must write all len bytes or return -1 with errno set.
 * NULL: write(2) to the fd, retrying on EINTR and short writes. */
typedef int (*mt_write_fn)(void *ctx, const void *buf, size_t len);

typedef struct mt_writer_options {
    int version;                    /* 2 (default when 0) or 3 */
    unsigned domain;                /* v3 only: domain written in packet headers */
    mt_location_resolver resolve;
    void *resolve_ctx;
    mt_write_fn write;
    void *write_ctx;
} mt_writer_options;

/* Start a trace on fd (not closed by the writer): writes the trace-info
 * packet from info (info->version is ignored; start_time is used as the
 * first packet's time). Returns NULL with *error set on failure. */
mt_writer *mt_writer_open(int fd, const mt_trace_info *info,
                          const mt_writer_options *opts, char **error);

/* Events, with absolute times that never decrease (an earlier time is
 * raised to the previous one). Backtraces are caller first, as the reader
 * reports them; a code must not be 0 (it would match the cache's empty
 * slots and never get a location event). put_alloc stores the new object's id
 * in *id (may be NULL). All return 0, or -1 once the writer has failed
 * (mt_writer_error says why; every later call fails too). */
int mt_writer_put_alloc(mt_writer *w, mt_timestamp now, uint64_t length,
                        uint64_t n_samples, mt_source source,
                        const mt_location_code *backtrace, size_t backtrace_length,
                        mt_obj_id *id);
int mt_writer_put_promote(mt_writer *w, mt_timestamp now, mt_obj_id id);
int mt_writer_put_collect(mt_writer *w, mt_timestamp now, mt_obj_id id);

/* Re-encode an event decoded by a reader of a trace that started at
 * start_time (checks that ids line up). */
int mt_writer_put_event(mt_writer *w, mt_timestamp start_time, const mt_event *ev);

/* Write out the current packet (and the location packets before it). */
int mt_writer_flush(mt_writer *w);
/* mt_writer_flush, with the packet's end time raised to now (not earlier
 * than its last event): the trace then covers time up to now even if no
 * event came since. end nonzero also marks the packet as the end of the
 * recording (the process exits, execs or stops tracing): the header's
 * flush_duration field, which other readers ignore, holds a mark that
 * mt_reader_ended sees. */
int mt_writer_flush_until(mt_writer *w, mt_timestamp now, int end);
/* Flush and free the writer; returns -1 if anything failed. */
int mt_writer_close(mt_writer *w);
/* The final flush of close, without freeing, so that a failure can be
 * read with mt_writer_error. Returns 0 or -1. After it, only close is valid
 * (and writes nothing more). */
int mt_writer_finish(mt_writer *w);
const char *mt_writer_error(const mt_writer *w);

/* The next id put_alloc will assign. */
mt_obj_id mt_writer_next_id(const mt_writer *w);

/* ------------------------------------------------------------------------ */
/* Experimental (leave out with MEMTRACE_STABLE_ONLY)                        */

#ifndef MEMTRACE_STABLE_ONLY

/* Reader */

/* Replaces the reader's warning callback and its context by *fn and
 * *ctx (fn NULL: warnings to stderr), and returns the previous ones in
 * their place. A reader used on another thread passes its warnings on
 * this way (the analysis engine's reading thread). */
void mt_reader_swap_warning(mt_reader *r, mt_warning_fn *fn, void **ctx);

/* Writer */

/* mt_writer_put_alloc for a caller that knows that the first `shared` frames of
 * backtrace are those of the previous allocation it gave this writer (a
 * reader's common_prefix, capped at the previous backtrace's length, is such
 * a number): frames are compared only from there on. A wrong claim gives a
 * well-formed trace with wrong backtraces. */
int mt_writer_put_alloc_shared(mt_writer *w, mt_timestamp now, uint64_t length,
                               uint64_t n_samples, mt_source source,
                               const mt_location_code *backtrace, size_t backtrace_length,
                               size_t shared, mt_obj_id *id);
/* carried nonzero: the allocations put from now on are blocks carried
 * over from the previous piece of a rotated recording (docs/format.md,
 * "Pieces of a rotated recording"); they go into packets of their own whose
 * flush_duration field holds a mark other readers ignore, and readers report
 * them with mt_event.carried set. Switching writes out the current packet
 * if it holds events. Returns 0, or -1 once the writer has failed. */
int mt_writer_set_carried(mt_writer *w, int carried);

#endif /* MEMTRACE_STABLE_ONLY */

#ifdef __cplusplus
}
#endif
#endif
