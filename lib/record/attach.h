/*
 * attach.h - what the tracer calls of the recorder loaded by 'memtrace
 * attach' (attach.c).
 */
#ifndef MT_RECORD_ATTACH_H
#define MT_RECORD_ATTACH_H

#include "thread.h"

/* The writer thread, at every turn (outside its lock): patch the modules
 * loaded since the last look. */
MT_HIDDEN void mtr_attach_tick(void);

#endif
