/*
 * run_snapshots.h - periodic pprof snapshots of a running program's trace,
 * for continuous profiling ('memtrace run --pprof-every T --pprof-dir DIR').
 */
#ifndef MEMTRACE_RUN_SNAPSHOTS_H
#define MEMTRACE_RUN_SNAPSHOTS_H

#include <sys/types.h>

typedef struct run_push run_push;

/* Waits for pid like waitpid (status out), and every every_s seconds
 * while it is recording into FILE (or FILE-NNNN) writes a gzipped pprof
 * heap profile of that trace so far to DIR/NAME.PID.UNIXTIME.pb.gz (dir
 * NULL: none), and one more at the end; with push, a profile is also
 * queued for sending every run_push_every(push) seconds and at the end.
 * Returns 0, or -1 if waiting failed. */
int run_wait_with_snapshots(pid_t pid, const char *file, double every_s, const char *dir,
                            run_push *push, const char *name, int *status);

#endif
