/*
 * attach_target.h - what 'memtrace attach' learns about a process before
 * touching it, from /proc/PID alone: who traces it, which C library it
 * runs (and where that library's functions are in its memory), whether the
 * recorder is in it already and how it got there, and whether it sees the
 * same files as we do; and which process it is: a pidfd opened before
 * anything is read and held for the whole attach, with the process's start
 * time, so that a PID taken over by another process after the target
 * exited is never mistaken for it.
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
    gid_t gid;                     /* real gid */
    gid_t groups[64];              /* its supplementary groups (the first 64) */
    int ngroups;
    int pidfd;                     /* the process, for the whole attach (-1: none) */
    unsigned long long start_time; /* /proc/PID/stat field 22, clock ticks since boot */
    int nondumpable;               /* /proc/PID is root's though uid is not: not dumpable */
    char libc[PATH_MAX];           /* libc.so.6 as mapped ("" if none: static) */
    uint64_t libc_base;            /* where its offset 0 is mapped */
    uint64_t libc_end;             /* the end of that mapping */
    char recorder[PATH_MAX];       /* libmemtrace.so as mapped, "" if not there */
    uint64_t rec_base, rec_end;    /* its mapping at offset 0 */
    int preloaded;                 /* LD_PRELOAD names libmemtrace or MEMTRACE is set */
    int same_mnt;                  /* same mount namespace as ours */
} attach_target;

/* Opens a pidfd of pid, then fills *t; 0, or -1 with errno (ESRCH: no
 * such process; ENOSYS: a kernel without pidfd_open) and why. t->pidfd is
 * left open either way (close it with attach_target_close). */
int attach_target_read(pid_t pid, attach_target *t, char *why, size_t cap);

/* Closes t's pidfd. */
void attach_target_close(attach_target *t);

/* 1 if the process t was read from is still running under its PID (its
 * pidfd has not seen it exit and /proc/PID/stat shows the same start
 * time), else 0. A /proc/PID access made before a call that returns 1 (and
 * after attach_target_read) reached this very process. */
int attach_target_same(const attach_target *t);

/* 1 once the process has exited (its pidfd polls readable), else 0. */
int attach_target_exited(const attach_target *t);

/* The process that ptraces t's main thread now (TracerPid), 0 if none. */
pid_t attach_target_tracer_now(const attach_target *t);

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
