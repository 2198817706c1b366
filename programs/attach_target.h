/*
 * attach_target.h - what 'memtrace attach' learns about a process before
 * touching it, from /proc/PID alone: who traces it, which C library it
 * runs (and where that library's functions are in its memory), whether the
 * recorder is in it already and how it got there, and whether it sees the
 * same files as we do.
 */
#ifndef MEMTRACE_ATTACH_TARGET_H
#define MEMTRACE_ATTACH_TARGET_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct attach_target {
    pid_t pid;
    char comm[64];
    pid_t tracer;                  /* TracerPid, 0 if none */
    char state;                    /* R, S, T (stopped), Z ... */
    uid_t uid;                     /* real uid */
    char libc[PATH_MAX];           /* libc.so.6 as mapped ("" if none: static) */
    uint64_t libc_base;            /* where its offset 0 is mapped */
    uint64_t libc_end;             /* the end of that mapping */
    char recorder[PATH_MAX];       /* libmemtrace.so as mapped, "" if not there */
    uint64_t rec_base, rec_end;    /* its mapping at offset 0 */
    int preloaded;                 /* LD_PRELOAD names libmemtrace or MEMTRACE is set */
    int same_mnt;                  /* same mount namespace as ours */
} attach_target;

/* Fills *t; 0, or -1 with errno (ESRCH: no such process) and why. */
int attach_target_read(pid_t pid, attach_target *t, char *why, size_t cap);

/* The address in the process of the C library's function name (its
 * default version), or 0. The library's file is read as mapped
 * (/proc/PID/map_files), else by its path here, else through
 * /proc/PID/root (a process in another mount namespace). */
uint64_t attach_target_libc_symbol(const attach_target *t, const char *name);

/* The same for the recorder's function name (0 if none is loaded). */
uint64_t attach_target_recorder_symbol(const attach_target *t, const char *name);

/* 1 if path names the same file inside the process's root as here. */
int attach_target_same_file(const attach_target *t, const char *path);

#endif
