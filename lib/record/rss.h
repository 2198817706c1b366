/*
 * rss.h - resident memory over time, written beside the trace (rss.c).
 * Everything here runs in the writer thread or at the end of tracing,
 * never in an allocation path.
 */
#ifndef MT_RECORD_RSS_H
#define MT_RECORD_RSS_H

#include <stdint.h>
#include <sys/types.h>

#include "thread.h"

/* Start TRACE.rss for this process's trace (interval_ms 0: none). */
MT_HIDDEN void mtr_rss_open(const char *trace_path, pid_t pid, int64_t start_us, int interval_ms);
/* A sample if one is due (force: now, with the slow figures too). */
MT_HIDDEN void mtr_rss_tick(int64_t now_us, int force);
/* The last sample and close. */
MT_HIDDEN void mtr_rss_close(int64_t now_us);
/* Microseconds from now_us until a tick takes its next reading (0: due
 * now; INT64_MAX: no TRACE.rss): how long the writer thread may sleep. */
MT_HIDDEN int64_t mtr_rss_due_us(int64_t now_us);
/* fork child: the file is the parent's. */
MT_HIDDEN void mtr_rss_forget(void);

#endif
