/*
 * warn.h - a warning about input, formatted and handed to the caller's
 * mt_warning_fn (include/memtrace/trace.h), or printed on stderr as
 * "memtrace: warning: ..." when there is none: what the readers of a
 * trace's side files (FILE.rss, FILE.leaks) say about a damaged one.
 * Header only.
 */
#ifndef MT_COMMON_WARN_H
#define MT_COMMON_WARN_H

#include <stdarg.h>
#include <stdio.h>

#include "memtrace/trace.h"

static inline void mt_warnf(mt_warning_fn warn, void *ctx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void mt_warnf(mt_warning_fn warn, void *ctx, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (warn)
        warn(ctx, msg);
    else
        fprintf(stderr, "memtrace: warning: %s\n", msg);
}

#endif
