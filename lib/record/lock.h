/*
 * lock.h - the recorder's one lock: an int that is 0 (free), 1 (held) or 2
 * (held, with sleepers). A waiter spins briefly with the pause instruction,
 * then sleeps on a futex until the holder wakes it: a free() or a sample
 * that must wait neither burns its time slice in sched_yield nor competes
 * with the holder for the processor. No allocation, no libc lock, safe to
 * reset to 0 in a fork child. Not recursive: callers that a signal handler
 * may re-enter guard against that themselves (sampled.h's in_table).
 */
#ifndef MT_RECORD_LOCK_H
#define MT_RECORD_LOCK_H

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"

/* About a microsecond of tries: longer than the recorder holds a lock. */
#define MTR_LOCK_SPINS 200

static inline void mtr_lock(int *w)
{
    for (int i = 0; i < MTR_LOCK_SPINS; i++) {
        int c = 0;
        if (__atomic_compare_exchange_n(w, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return;
        __builtin_ia32_pause();
    }
    /* Announce a sleeper (2); whoever unlocks a 2 wakes one. */
    while (__atomic_exchange_n(w, 2, __ATOMIC_ACQUIRE) != 0)
        syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

static inline void mtr_unlock(int *w)
{
    int was = __atomic_exchange_n(w, 0, __ATOMIC_RELEASE);
    MT_ASSERT(was == 1 || was == 2);   /* held: unlocking a free lock is a bug */
    if (was == 2)
        syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Some thread holds *w (the lock keeps no owner: "this thread" cannot be
 * checked). For MT_ASSERT at the top of functions called under a lock. */
static inline int mtr_lock_held(const int *w)
{
    return __atomic_load_n(w, __ATOMIC_RELAXED) != 0;
}

#endif
