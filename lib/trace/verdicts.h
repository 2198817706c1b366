/*
 * verdicts.h - the leak verdicts of a trace, read from TRACE.leaks beside
 * it (docs/format.md, "Leak verdicts"), for the reader: mt_reader_open
 * loads them and mt_reader_next gives each allocation event its verdict.
 * Internal to lib/trace.
 */
#ifndef MT_TRACE_VERDICTS_H
#define MT_TRACE_VERDICTS_H

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

#endif
