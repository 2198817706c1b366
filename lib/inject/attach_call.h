/*
 * attach_call.h - calling a function inside another process (x86-64
 * Linux, ptrace): one of its threads, stopped in a blocking system call, is
 * borrowed for the call while the other threads run on, then put back
 * exactly as it was (registers, FPU/vector state, the system call it was
 * in restarts). Used by 'memtrace attach' (programs/cmd_attach.c).
 */
#ifndef MEMTRACE_ATTACH_CALL_H
#define MEMTRACE_ATTACH_CALL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct attach_thread attach_thread;

/* Borrow a thread of process pid: one stopped in a restartable blocking
 * system call (a thread in epoll_wait only when there is no other: it
 * sees EINTR afterwards). Returns NULL with why filled in (and *errnum:
 * EPERM when ptrace is refused, ESRCH when the process is gone, EBUSY
 * when no thread can be borrowed now). */
attach_thread *attach_borrow(pid_t pid, int *errnum, char *why, size_t cap);

/* 1 if a thread of pid runs under seccomp (strict or a filter), with why
 * filled in; 0 if none does (or it cannot be told). */
int attach_seccomp(pid_t pid, char *why, size_t cap);

/* The borrowed thread's id. */
pid_t attach_tid(const attach_thread *t);

/* Copies n bytes to the borrowed thread's stack, below its red zone and
 * below what was copied before; returns their address in the process. */
uint64_t attach_push(attach_thread *t, const void *data, size_t n);

/* Calls fn(args...) (integer/pointer arguments, at most 6) on the borrowed
 * thread and waits at most timeout_ms for it to return; *ret gets rax.
 * 0, or -1 with why (the thread is then put back as it was: a call cut
 * short by the timeout is abandoned). */
int attach_call(attach_thread *t, uint64_t fn, const uint64_t *args, int nargs, uint64_t *ret,
                int timeout_ms, char *why, size_t cap);

/* The thread's errno is put back as it was when the thread is released:
 * errno_location is __errno_location in the process (the calls made on
 * the thread may set errno; a thread stopped just after a system call
 * that succeeded would see it changed). 0, or -1 (not kept). */
int attach_keep_errno(attach_thread *t, uint64_t errno_location);

/* Reads up to cap-1 bytes of a NUL-terminated string at addr. */
int attach_read_string(attach_thread *t, uint64_t addr, char *out, size_t cap);

/* Puts the thread back (registers, state, deferred signals) and lets it
 * go. Always frees t. */
void attach_release(attach_thread *t);

#endif
