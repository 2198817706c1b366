/*
 * progress.h - progress of long reads on stderr, for a person watching
 * (see progress.c).
 */
#ifndef MT_PROGRESS_H
#define MT_PROGRESS_H

#include <stdint.h>

typedef struct progress {
    const char *cmd;
    int on;                 /* stderr is a terminal */
    int shown;              /* something is on the line */
    int64_t last_ns;        /* when it was last updated */
} progress;

/* Starts: on only when stderr is a terminal. */
void progress_init(progress *p, const char *cmd);
/* An mt_progress_fn: "memtrace CMD: reading 42%", at most 4 updates a second. */
void progress_update(void *ctx, uint64_t done, uint64_t total);
/* Clears the line. */
void progress_end(progress *p);

#endif
