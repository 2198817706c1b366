/*
 * verdicts.h - what the commands that read the leak scan's verdicts (top
 * --by lost|reachable, check --max-lost) share: the filter that keeps one
 * verdict, and the message when a trace has none.
 */
#ifndef MEMTRACE_VERDICTS_H
#define MEMTRACE_VERDICTS_H

#include <stddef.h>

/* "FILTER verdict:WHICH" (filter may be NULL): a string to free, or NULL
 * when out of memory. */
char *verdict_filter_text(const char *filter, const char *which);
/* Says on stderr why the n traces given (the first: path) carry no
 * verdicts: several are read as one, or this one was recorded without
 * the leak scan. opt names the option that asked ("--by lost"). */
void verdicts_missing(const char *cmd, const char *opt, size_t n, const char *path);

#endif
