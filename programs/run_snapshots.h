/*
 * run_snapshots.h - periodic pprof snapshots of a running program's trace,
 * for continuous profiling ('memtrace run --pprof-every T --pprof-dir DIR').
 */
#ifndef MEMTRACE_RUN_SNAPSHOTS_H
#define MEMTRACE_RUN_SNAPSHOTS_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct run_push run_push;

/* The clocks and the last trace of a waiting loop that takes snapshots:
 * 'memtrace run' (below), 'attach' and 'ctl start' with --push. */
typedef struct run_snapshots {
    const char *cmd, *dir;
    double every_s, next, next_push;
    run_push *push;
    int to_dir, to_push;          /* what the latest due said */
    char name[64];                /* the program's name, for files and labels */
    char last[PATH_MAX];          /* the latest trace taken ("" none) */
    int checked;                  /* run_snapshots_checked */
    uid_t owner;
    int rest_due;                 /* run_snapshots_follow: a new file seen */
    char next_trace[PATH_MAX];
} run_snapshots;

/* cmd names the command in messages; every_s and dir the files (dir NULL:
 * none), push the pushes (NULL: none). Unsets DEBUGINFOD_URLS (local
 * debug information only). */
void run_snapshots_init(run_snapshots *s, const char *cmd, double every_s, const char *dir,
                        run_push *push, const char *name);
/* 1 when a snapshot is due now (then take one), else 0 */
int run_snapshots_due(run_snapshots *s);
/* The snapshot that was due, of trace (being written) by process pid:
 * shown is what s->last keeps (NULL: trace); the symbolized copy goes in
 * copy_dir (NULL: beside trace); name the program's (NULL: as before). */
void run_snapshots_take(run_snapshots *s, const char *trace, const char *shown,
                        const char *copy_dir, const char *name, int pid);
/* The last snapshot, of a finished trace: to the files and the push. */
void run_snapshots_final(run_snapshots *s, const char *trace, const char *copy_dir, int pid);
/* From now on the traces follow and end take are opened as
 * run_snapshots_open does (files of owner's, no link), the copy beside
 * them: the files of a process not ours ('ctl --push'). */
void run_snapshots_checked(run_snapshots *s, uid_t owner);
/* The snapshot that was due, of the recording named after base (the
 * run's FILE, runfiles.h) whose trace is cur now: when cur is another file
 * than the last one taken (a rotation, an exec), the last one's rest is
 * pushed first, one interval later, with every piece between; name: the
 * program's (NULL: as before). */
void run_snapshots_follow(run_snapshots *s, const char *base, const char *cur, const char *name,
                          int pid);
/* The end: the rest of the last trace taken (or of fallback if none was),
 * the pieces after it, and the latest one's final state to the files and
 * the push. */
void run_snapshots_end(run_snapshots *s, const char *base, const char *fallback, int pid);
/* A trace another user's process writes, opened without following a
 * link: a regular file of owner (or ours). The descriptor, and out its
 * name /proc/self/fd/N to snapshot it by; -1 when it is not such a file. */
int run_snapshots_open(const char *path, uid_t owner, char *out, size_t cap);

/* Waits for pid like waitpid (status out), and every every_s seconds
 * while it is recording into FILE (or FILE-NNNN) writes a gzipped pprof
 * heap profile of that trace so far to DIR/NAME.PID.UNIXTIME.pb.gz (dir
 * NULL: none), and one more at the end; with push, a profile is also
 * queued for sending every run_push_every(push) seconds and at the end.
 * Returns 0, or -1 if waiting failed. */
int run_wait_with_snapshots(pid_t pid, const char *file, double every_s, const char *dir,
                            run_push *push, const char *name, int *status);

/* SIGINT, SIGTERM and SIGHUP to fn (no flags, empty mask): how attach and
 * ctl --push learn that the user asked them to end the recording. */
void run_on_stop_signals(void (*fn)(int));

#endif
