/*
 * stream_report.h - stats, lifetimes and plot over one trace or several
 * aggregated: they ask lib/analyze's planner for their figures
 * (mt_read_figures: a few folded passes, memory for the live blocks and
 * the distinct stacks, or the whole model) and print them; see
 * stream_report.c.
 */
#ifndef MEMTRACE_STREAM_REPORT_H
#define MEMTRACE_STREAM_REPORT_H

#include <stddef.h>

#include "memtrace/analyze.h"
#include "memtrace/present.h"

/* What a command reads: its trace files (aggregated when several: a
 * process tree, runs) and --by-process. */
typedef struct stream_input {
    const char *const *paths;
    size_t n;
    int by_process;
} stream_input;

/* The commands' work: the figures as the planner reads them (folded
 * when the trace and the route allow, else the whole model's selection,
 * decided before anything is written); exit status. */
int stream_stats(const stream_input *in, const char *filter, mt_timedelta at, int json);
int stream_lifetimes(const stream_input *in, const char *filter, int json);
int stream_plot(const stream_input *in, const char *filter, mt_plot_options *po,
                const char *output);

#endif
