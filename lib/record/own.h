/*
 * own.h - the recorder's own anonymous memory (own.c): the regions it maps
 * for itself (the event ring, the sampled table, the mmap points), kept
 * so that the resident-memory ledger can show them and subtract them.
 */
#ifndef MT_RECORD_OWN_H
#define MT_RECORD_OWN_H

#include <stddef.h>

#include "thread.h"

/* Remember [p, p + len) as the recorder's (p NULL or MAP_FAILED: nothing;
 * the lock busy beyond a short spin: not remembered). */
MT_HIDDEN void mtr_own_add(const void *p, size_t len);
/* Forget the region that starts at p (before it is unmapped). */
MT_HIDDEN void mtr_own_del(const void *p);
/* Resident bytes of the remembered regions (mincore; a region unmapped
 * meanwhile counts what was measured before it), and in *mapped the bytes
 * they span. */
MT_HIDDEN long long mtr_own_resident(long long *mapped);
/* Around fork (from ownheap.c's, under the heap's lock): the table's lock
 * held across it, so that the child's table is whole and its lock free. */
MT_HIDDEN void mtr_own_fork_prepare(void);
MT_HIDDEN void mtr_own_fork_parent(void);
MT_HIDDEN void mtr_own_fork_child(void);

#endif
