/*
 * proc_trace.h - the trace file a running process is writing, found among
 * its open descriptors (/proc/PID/fd): used by 'memtrace ctl' to see a
 * recording start or end, and by 'memtrace run --pprof-every' to know what
 * to take snapshots of; and reading a process's /proc files (its
 * environment and threads: 'memtrace ctl', 'memtrace attach').
 */
#ifndef MEMTRACE_PROC_TRACE_H
#define MEMTRACE_PROC_TRACE_H

#include <stddef.h>

/* The trace named after base (FILE, FILE-NNNN or FILE-NNNN.PID; FILE.PID
 * or FILE.PID.K with pid's own PID, the trace of the program a wrapper
 * exec'd; each possibly with .partNNNN for a piece of a rotated recording;
 * compared by file name) that process pid has open: 1 and its path in out,
 * or 0. */
int proc_open_trace(int pid, const char *base, char *out, size_t cap);

/* Calls fn for each open descriptor of process pid that is a link
 * (/proc/PID/fd/N and what it points to) until fn returns nonzero; returns
 * that value, 0 when fn never did, -1 (errno set) when the descriptors
 * cannot be read. */
int proc_fd_each(int pid, int (*fn)(const char *fd_path, const char *target, void *ctx),
                 void *ctx);

/* Calls fn for each thread of process pid (/proc/PID/task/TID), in the
 * directory's order, until fn returns nonzero; returns that value, 0 when
 * fn never did, -1 (errno set) when the threads cannot be listed. */
int proc_task_each(int pid, int (*fn)(int tid, void *ctx), void *ctx);

/* The whole of a /proc file (or any file), *len its size; NULL with
 * errno. Free with free(). */
char *proc_read_file(const char *path, size_t *len);

/* The value of NAME in an environment block as /proc/PID/environ holds it
 * (NUL-separated NAME=VALUE), or NULL. Free with free(). */
char *proc_environ_value(const char *env, size_t len, const char *name);

#endif
