/*
 * run_snapshots.h - periodic pprof snapshots of a running program's trace,
 * for continuous profiling ('memtrace run --pprof-every T --pprof-dir DIR').
 */
#ifndef MEMTRACE_RUN_SNAPSHOTS_H
#define MEMTRACE_RUN_SNAPSHOTS_H

#include <sys/types.h>

/* Waits for pid like waitpid (status out), and every every_s seconds
 * while it is recording into FILE (or FILE-NNNN) writes a gzipped pprof
 * heap profile of that trace so far to DIR/NAME.PID.UNIXTIME.pb.gz, and one
 * more at the end. Returns 0, or -1 if waiting failed. */
int run_wait_with_snapshots(pid_t pid, const char *file, double every_s, const char *dir,
                            const char *name, int *status);

#endif
