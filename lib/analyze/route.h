/*
 * route.h - the forced route (mt_read_force) and the number of threads a
 * pass reads with, for every file of lib/analyze that reads (route.c).
 * Internal. A leaf: it calls nothing else of lib/analyze.
 */
#ifndef MTA_ROUTE_H
#define MTA_ROUTE_H

#pragma GCC visibility push(hidden)

/* Threads for a pass over a trace: requested (1 or 2), or when 0, two
 * unless the route one-thread is forced (mt_read_force) or only one
 * processor is ours. */
int mta_read_threads(int requested);

#pragma GCC visibility pop

#endif
