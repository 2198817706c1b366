/*
 * progress.c - shows how much of the trace a command has read, on stderr
 * when it is a terminal: one line rewritten at most four times a second
 * and cleared at the end. Nothing when stderr is a file or a pipe.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void progress_init(progress *p, const char *cmd)
{
    p->cmd = cmd;
    p->on = isatty(2);
    p->shown = 0;
    p->last_ns = now_ns();
}

void progress_update(void *ctx, uint64_t done, uint64_t total)
{
    progress *p = ctx;
    if (!p->on || total == 0)
        return;
    int64_t t = now_ns();
    if (t - p->last_ns < 250000000)
        return;
    p->last_ns = t;
    double pct = 100.0 * (double)done / (double)total;
    if (pct > 100)
        pct = 100;
    fprintf(stderr, "\rmemtrace %s: reading %.0f%%\033[K", p->cmd, pct);
    fflush(stderr);
    p->shown = 1;
}

void progress_end(progress *p)
{
    if (p->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->shown = 0;
}
