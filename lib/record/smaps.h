/*
 * smaps.h - the process's resident memory by kind of mapping, from one read
 * of /proc/self/smaps (smaps.c), for the resident-memory ledger.
 */
#ifndef MT_RECORD_SMAPS_H
#define MT_RECORD_SMAPS_H

#include "rssformat.h"
#include "thread.h"

/* Fills l's rss, pss, swap, anon, brk, stack, mod, file and shm; the
 * resident bytes of the recorder's own image (own_image: its path, may be
 * NULL) and of its bss go to *own_image_rss and not to mod. 0, or -1 if
 * smaps could not be read. Writer thread only (a static buffer). */
MT_HIDDEN int mtr_smaps_read(mt_rssf_ledger *l, const char *own_image, long long *own_image_rss);

#endif
