/*
 * statsacc.h - the stats accumulator (statsacc.c, mt_stats_acc of
 * memtrace/stream.h) made to keep only some of its figures, for the
 * whole model's queries (hist.c), which ask for one at a time. Internal.
 */
#ifndef MTA_STATSACC_H
#define MTA_STATSACC_H

#include "memtrace/stream.h"

enum {
    MTA_STATS_TOTALS = 1,   /* everything of mt_stats but the histograms */
    MTA_STATS_SIZE = 2,     /* the size histogram */
    MTA_STATS_LIFE = 4,     /* the lifetime histogram */
    MTA_STATS_ALL = 7,
    /* the lifetimes for the median in a list, 16 bytes each, instead of
     * counters per microsecond: faster when every allocation is at hand */
    MTA_STATS_LIST = 8
};
/* mt_stats_acc_new keeping the figures of want (MTA_STATS_*) only: the
 * others are left zero by mt_stats_acc_finish. NULL when out of memory. */
mt_stats_acc *mta_stats_acc_new_for(mt_timedelta live_at, unsigned want);
/* With MTA_STATS_LIST, after the last add: the median of lifetimes, which
 * mt_stats_acc_finish then gives (it reorders the list). */
void mta_stats_acc_median(mt_stats_acc *s);

#endif
