/*
 * sigsave.h - a signal's disposition saved and put back exactly as the
 * kernel holds it (handler, flags, restorer, mask), for the handlers the
 * recorder installs for a while (fatal.c, leakstop.c). glibc's sigaction
 * adds SA_RESTORER and its own restorer to whatever it is given, so a
 * disposition the program never set (flags 0) cannot be put back through
 * it.
 */
#ifndef MT_RECORD_SIGSAVE_H
#define MT_RECORD_SIGSAVE_H

#include "thread.h"

struct mtr_sigsave {
    void *handler;
    unsigned long flags;
    void *restorer;
    unsigned long mask;   /* the kernel's sigset: 64 signals */
};

/* The disposition of sig now; 0 or -1. */
MT_HIDDEN int mtr_sig_save(int sig, struct mtr_sigsave *s);

/* Puts back what mtr_sig_save read; 0 or -1. */
MT_HIDDEN int mtr_sig_restore(int sig, const struct mtr_sigsave *s);

#endif
