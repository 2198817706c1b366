/*
 * control.h - on/off control of the recorder (control.c).
 */
#ifndef MEMTRACE_RECORD_CONTROL_H
#define MEMTRACE_RECORD_CONTROL_H

#include "recconf.h"
#include "thread.h"

/* Reads MEMTRACE_PAUSED, MEMTRACE_SIGNAL, MEMTRACE_DURATION and installs
 * the signal handler if asked for. 0: no control asked for (start as
 * usual); 1: control set up, call mtr_control_run instead of starting;
 * 2: already set up in this process;
 * -1: a bad value (message given; tracing does not start). */
MT_HIDDEN int mtr_control_setup(const mt_recconf *c, int first);

/* Starts the first recording unless paused, and the control thread. */
MT_HIDDEN int mtr_control_run(void);

/* In a forked child (atfork): a control thread of its own, if following. */
MT_HIDDEN void mtr_control_fork_child(int follow);

/* FILE made absolute, when control is set up; else NULL. */
MT_HIDDEN const char *mtr_control_base(void);

/* Set at exit: no recording starts any more. */
extern int mtr_exiting MT_HIDDEN;

#endif
