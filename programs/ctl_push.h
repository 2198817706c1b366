/*
 * ctl_push.h - 'memtrace ctl --push URL PID start': after the recording
 * started, this command (never the process) pushes a profile of it every
 * --push-every and once more at its end (ctl_push.c).
 */
#ifndef MEMTRACE_CTL_PUSH_H
#define MEMTRACE_CTL_PUSH_H

#include "run_push.h"

/* Pushes profiles of the recording process pid writes (the trace named
 * after base, proc_open_trace) until it ends (a 'ctl stop', the process's
 * end) or SIGINT, SIGTERM or SIGHUP comes: then stop(ctx) is called to end
 * it, and the recording's end is waited for (at most wait_s seconds).
 * Then the last profile, of the finished trace, and push's summary line. */
void ctl_push_follow(long pid, const char *base, run_push *push, void (*stop)(void *ctx),
                     void *ctx, double wait_s);

#endif
