/*
 * unwind.h - call stacks for sampled allocations: a frame-pointer walk
 * bounded by the thread's stack or a DWARF walk (libunwind), chosen by
 * MEMTRACE_UNWIND, and the bookkeeping of stack bounds.
 */
#ifndef MT_RECORD_UNWIND_H
#define MT_RECORD_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "thread.h"

/* Marks a function as part of the recorder's entry points: the unwinder
 * drops the frames of such functions from the top of every stack. */
#define MT_HOOK __attribute__((section("mt_hooks"), noinline))

/* Return addresses of the calling program, innermost first, starting at
 * the caller of the malloc-family function; at most max entries. Sets
 * *truncated when the stack was deeper. The frame-pointer walk follows
 * frames only inside the thread's known stack. Call with the thread
 * entered (mtr_enter): the DWARF walk may allocate. */
MT_HIDDEN size_t mtr_unwind(uintptr_t *out, size_t max, int *truncated);

/* Reads MEMTRACE_UNWIND (fp, dwarf or auto; default dwarf) and loads and
 * warms up libunwind for dwarf and auto; falls back to frame pointers when
 * libunwind cannot be loaded. Once per process, outside the malloc path,
 * before sampling starts. Until then stacks use frame pointers. */
MT_HIDDEN void mtr_unwind_setup(void);
/* The mode (MT_UNWIND_*, recconf.h) mtr_unwind_setup takes instead of
 * MEMTRACE_UNWIND: 'memtrace attach --unwind'. Only before the first
 * setup of the process counts. */
MT_HIDDEN void mtr_unwind_choose(int mode);

/* fork handlers: prepare waits for DWARF walks in progress and holds them
 * off until the fork is done; parent and child let them go on. */
MT_HIDDEN void mtr_unwind_fork_prepare(void);
MT_HIDDEN void mtr_unwind_fork_parent(void);
MT_HIDDEN void mtr_unwind_fork_child(void);

/* Record the current thread's stack bounds (main thread: from
 * __libc_stack_end and RLIMIT_STACK). Called outside the malloc path. */
MT_HIDDEN void mtr_unwind_init_main_thread(void);

#endif
