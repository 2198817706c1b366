/*
 * verdicts.c - the verdict filter and the missing-verdicts message
 * (verdicts.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verdicts.h"

char *verdict_filter_text(const char *filter, const char *which)
{
    size_t n = (filter ? strlen(filter) : 0) + strlen(which) + 16;
    char *t = malloc(n);
    if (t)
        snprintf(t, n, "%s%sverdict:%s", filter ? filter : "", filter ? " " : "", which);
    return t;
}

void verdicts_missing(const char *cmd, const char *opt, size_t n, const char *path)
{
    if (n > 1)   /* several traces read as one carry no verdicts */
        fprintf(stderr, "memtrace %s: %s: verdicts are read from one trace at a time, and %zu "
                "were given: run it on each\n", cmd, opt, n);
    else
        fprintf(stderr, "memtrace %s: %s: %s has no leak verdicts; record it with 'memtrace run "
                "--leaks' (or MEMTRACE_LEAKS=1 under LD_PRELOAD) so that the program's exit "
                "writes them (TRACE.leaks, beside the trace)\n", cmd, opt, path);
}
