/*
 * fatal.h - a process dying of SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT
 * (left at their default) has what was queued written out first
 * (fatal.c).
 */
#ifndef MT_RECORD_FATAL_H
#define MT_RECORD_FATAL_H

#include "thread.h"

/* When a recording starts: the handlers, over default dispositions only. */
MT_HIDDEN void mtr_fatal_install(void);
/* On detach: each signal's disposition put back as it was. */
MT_HIDDEN void mtr_fatal_remove(void);

#endif
