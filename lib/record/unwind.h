/*
 * unwind.h - call stacks for sampled allocations: a frame-pointer walk
 * bounded by the thread's stack, and the bookkeeping of stack bounds.
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
 * *truncated when the stack was deeper. Never faults: frames are followed
 * only inside the thread's known stack. */
MT_HIDDEN size_t mtr_unwind(uintptr_t *out, size_t max, int *truncated);

/* Record the current thread's stack bounds (main thread: from
 * __libc_stack_end and RLIMIT_STACK). Called outside the malloc path. */
MT_HIDDEN void mtr_unwind_init_main_thread(void);

#endif
