/*
 * tracer.h - the tracker that writes traces (tracer.c and its parts), as
 * the rest of the recorder calls it: control.c starts recordings on
 * request, attach.c in a running process, fatal.c and exec.c have what is
 * queued written out first, the leak scan reads a block's token. The
 * public entries (memtrace_start_tracing, memtrace_stop_tracing,
 * memtrace_trace_if_requested) are in include/memtrace/record.h.
 */
#ifndef MT_RECORD_TRACER_H
#define MT_RECORD_TRACER_H

#include <stdint.h>

#include "recconf.h"
#include "thread.h"

/* A sampled block's token (the sampler keeps it for the free): the
 * block's id in the trace + 1 in the low MTR_TOKEN_ID_BITS bits, the
 * recording it belongs to (mod 2^16) above them. */
#define MTR_TOKEN_ID_BITS 48
#define MTR_TOKEN_ID_MASK ((UINT64_C(1) << MTR_TOKEN_ID_BITS) - 1)

/* Set once the constructor has found the program's allocator. */
extern int mtr_ready MT_HIDDEN;

/* Starts a recording into file as c says (c->file is not used; first:
 * the first process's own file). exclusive: file must be new; -2 (no
 * message) when it exists. 0, or -1 with a message. */
MT_HIDDEN int mtr_tracer_begin(const mt_recconf *c, const char *file, int first, int exclusive);
/* A recording of this process is under way (or waits for its first
 * sample). */
MT_HIDDEN int mtr_tracer_active(void);
/* 'memtrace ctl PID scan', or attach's detach: leak verdicts for the
 * blocks live now, into TRACE.leaks (leaks.h). 0 if written. */
MT_HIDDEN int mtr_tracer_scan_now(void);
/* One line on the program's stderr, "memtrace: ..." (if fd 2 is still
 * what it was at start-up). */
MT_HIDDEN void mtr_tracer_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* attach.c: this recording was started in a running process (its trace
 * says so, docs/format.md). */
MT_HIDDEN void mtr_tracer_set_attached(int on);
/* fatal.c, in a fatal signal's handler on a program thread: the writer
 * thread writes out what is queued; waits for it at most timeout_ms.
 * Async-signal-safe: atomics and nanosleep only. 1 if the flush was done. */
MT_HIDDEN int mtr_tracer_fatal_flush(int timeout_ms);
/* exec.c: write out what is queued (dlclose: while the library's code is
 * still mapped, for symbolization). */
MT_HIDDEN void mtr_tracer_flush_before_exec(void);
/* exec.c: the image is about to be replaced: this recording ends here (if
 * exec fails, it simply goes on). */
MT_HIDDEN void mtr_tracer_end_before_exec(void);

#endif
