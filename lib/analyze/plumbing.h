/*
 * plumbing.h - the selection hook of plumbing.c. Internal.
 */
#ifndef MTA_PLUMBING_H
#define MTA_PLUMBING_H

#include "select.h"

/* Re-map every model node of s to its stack without the innermost run of
 * plumbing frames (s->map, s->via). Returns 0, or -1 when out of memory. */
int mta_plumbing_apply(mt_selection *s, const mt_plumbing *p);

#endif
