/*
 * warn.h - a warning about input, handed to the caller's mt_warning_fn
 * (include/memtrace/trace.h), or printed on stderr as
 * "memtrace: warning: ..." when there is none: the one fallback of every
 * reader that takes a warning callback (the trace reader, the readers of
 * a trace's side files FILE.rss and FILE.leaks, the symbolizer's debug
 * files). mt_warn gives a message already made, mt_warnf formats one.
 * Header only.
 */
#ifndef MT_COMMON_WARN_H
#define MT_COMMON_WARN_H

#include <stdarg.h>
#include <stdio.h>

#include "memtrace/trace.h"

static inline void mt_warn(mt_warning_fn warn, void *ctx, const char *msg)
{
    if (warn)
        warn(ctx, msg);
    else
        fprintf(stderr, "memtrace: warning: %s\n", msg);
}

static inline void mt_warnf(mt_warning_fn warn, void *ctx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void mt_warnf(mt_warning_fn warn, void *ctx, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mt_warn(warn, ctx, msg);
}

#endif
