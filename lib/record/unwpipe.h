/*
 * unwpipe.h - keeps libunwind's memory-validation pipe apart from the
 * program's descriptors (unwpipe.c).
 */
#ifndef MT_RECORD_UNWPIPE_H
#define MT_RECORD_UNWPIPE_H

#include "thread.h"

/* Rebinds libunwind's pipe2, read, write and close (libunwind: its dlopen
 * handle) before its first use. Returns the number of slots rebound; 0
 * means libunwind's pipe cannot be guarded. */
MT_HIDDEN int mtr_unwpipe_guard(void *libunwind);

#endif
