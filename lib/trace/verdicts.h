/*
 * verdicts.h - TRACE.leaks, the leak verdicts of a trace (docs/format.md,
 * "Leak verdicts"): its writer, which the recorder's leak scan uses
 * (lib/record/leaks.c) and which allocates nothing, and its reader, for
 * the codec: mt_reader_open loads them and mt_reader_next gives each
 * allocation event its verdict. The file's name comes from runfiles.h.
 * Internal to lib/trace and the recorder.
 */
#ifndef MT_TRACE_VERDICTS_H
#define MT_TRACE_VERDICTS_H

#include <stddef.h>
#include <stdint.h>

#include "memtrace/trace.h"

typedef struct mtt_verdicts mtt_verdicts;

/* NULL when there is no TRACE.leaks, or it is unusable (a warning then
 * says why: another recording's, a line that is not one). */
mtt_verdicts *mtt_verdicts_load(const char *trace_path, const mt_trace_info *info,
                                mt_warning_fn warn, void *ctx);
/* MT_VERDICT_* of allocation id. */
int mtt_verdict_of(const mtt_verdicts *v, uint64_t id);
/* The scan's time, µs since the epoch. */
int64_t mtt_verdicts_time(const mtt_verdicts *v);
void mtt_verdicts_free(mtt_verdicts *v);

/* The writer. Its state lives in memory the caller provides (the recorder
 * maps it outside the program's heap): it allocates nothing. */
typedef struct mtt_verdicts_out {
    int fd;
    int err;                 /* errno of the first failed write, else 0 */
    char path[4096];         /* TRACE.leaks */
    char tmp[4096 + 256];    /* its temporary name until finished */
    size_t len;
    char buf[8192];
} mtt_verdicts_out;

/* What the scan line says (docs/format.md). */
typedef struct mtt_verdicts_scan {
    int64_t pid, start_us;   /* the trace's: its header's pid and start time */
    int64_t scan_us;         /* when the scan began, µs since the epoch */
    const char *mode;        /* "heap" or "conservative" */
    uint64_t lost, reachable, unknown;
    uint64_t duration_us, memory, root_bytes, heap_bytes, cpu_us;
} mtt_verdicts_scan;

/* Creates TRACE.leaks for trace_path under a temporary name (never
 * another user's file, FIFO or link: safefile.h) and writes its header
 * and scan lines. 0, or -1 with *why (nothing left behind). */
int mtt_verdicts_create(mtt_verdicts_out *o, const char *trace_path,
                        const mtt_verdicts_scan *scan, const char **why);
/* One block's line: id (the trace's allocation id; ids must increase) and
 * MT_VERDICT_LOST or MT_VERDICT_REACHABLE. */
void mtt_verdicts_put(mtt_verdicts_out *o, uint64_t id, int verdict);
/* Writes out what is buffered and renames the file over TRACE.leaks. 0,
 * or -1 with *why (the temporary file removed). */
int mtt_verdicts_finish(mtt_verdicts_out *o, const char **why);

#endif
