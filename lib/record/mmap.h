/*
 * mmap.h - the recorder's view of the program's own anonymous mappings
 * (mmap.c): the fork hooks the sampler calls around fork.
 */
#ifndef MT_RECORD_MMAP_H
#define MT_RECORD_MMAP_H

#include "thread.h"

MT_HIDDEN void mtr_mmap_fork_prepare(void);
MT_HIDDEN void mtr_mmap_fork_parent(void);
MT_HIDDEN void mtr_mmap_fork_child(void);

#endif
