/*
 * stream_report.h - stats, lifetimes and plot on one trace file in a few
 * folded passes (memory for the live blocks and the distinct stacks, not
 * for the events); see stream_report.c.
 */
#ifndef MEMTRACE_STREAM_REPORT_H
#define MEMTRACE_STREAM_REPORT_H

#include <stddef.h>

#include "memtrace/analyze.h"
#include "memtrace/present.h"

/* Returned when the trace needs the whole model after all (its times go
 * back somewhere): nothing was written, the caller loads it. */
#define STREAM_WHOLE (-1)

/* 1 when these files can be read streaming: a single regular file, not
 * --by-process, and MEMTRACE_WHOLE_MODEL unset in the environment (the
 * tests compare both ways). */
int stream_usable(const char *const *paths, size_t n, int by_process);

/* The commands' work on a single file: exit status, or STREAM_WHOLE. */
int stream_stats(const char *path, const char *filter, mt_timedelta at, int json);
int stream_lifetimes(const char *path, const char *filter, int json);
int stream_plot(const char *path, const char *filter, mt_plot_options *po, const char *output);

#endif
