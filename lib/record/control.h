/*
 * control.h - on/off control of the recorder (control.c) and the few
 * tracer functions it uses (tracer.c).
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

/* tracer.c */
/* Starts a recording into file as c says (c->file is not used; first:
 * the first process's own file). exclusive: file must be new; -2 (no
 * message) when it exists. */
MT_HIDDEN int mtr_tracer_begin(const mt_recconf *c, const char *file, int first, int exclusive);
MT_HIDDEN int mtr_tracer_active(void);
/* 'memtrace ctl PID scan': leak verdicts for the blocks live now, into
 * TRACE.leaks (leaks.h). 0 if written. */
MT_HIDDEN int mtr_tracer_scan_now(void);
MT_HIDDEN void mtr_tracer_message(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

#endif
