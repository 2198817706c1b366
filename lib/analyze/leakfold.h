/*
 * leakfold.h - the sums leak suspects need per stack, and the test of one
 * site from them (leakfold.c), for leaks.c. Internal.
 */
#ifndef MTA_LEAKFOLD_H
#define MTA_LEAKFOLD_H

#include "memtrace/leaks.h"

#define MTA_LEAK_GRID 256

/* A unit of the slope's variance: the blocks allocated in grid interval
 * ja and freed in interval jf (key ja * (MTA_LEAK_GRID + 1) + jf), their bytes. */
typedef struct mta_leak_unit {
    uint32_t key;
    double bytes;
} mta_leak_unit;

/* A point of the Kaplan-Meier estimate: the bytes of the blocks with this
 * observed lifetime, freed (event 1) or live at the end (censored). */
typedef struct mta_leak_km {
    double time;
    double weight;
    int event;
} mta_leak_km;

/* One site's test from its sums: units with distinct keys in increasing
 * order; km points with lifetimes up to the window's length, distinct, in
 * increasing time (a freed point before a censored one at a tie);
 * beyond_bytes, beyond_n: the blocks watched longer than that; live_end:
 * the bytes live at the window's end. Fills what mt_leak_test fills. */
void mta_leak_site_test(const mta_leak_unit *u, size_t nu, const mta_leak_km *km, size_t nk,
                        double beyond_bytes, uint64_t beyond_n, double live_end,
                        mt_timedelta from, mt_timedelta to, mt_leak_site *out);

/* The grid interval of time t in [from, to] (MTA_LEAK_GRID: at or after
 * to, or never). */
int mta_leak_grid_index(mt_timedelta from, mt_timedelta to, mt_timedelta t);

/* The sums of one read (struct mt_leak_fold, leaks.h): fed per allocation
 * with the stack node it counts under; turned into the report's sites
 * (frame, samples, lost and the test, before the family is chosen) in the
 * order of their names (function, file, line; no stack last). fold: nodes are the folded model's (mapped
 * through the selection, which must count them); else the selection's. */
mt_leak_report *mta_leak_fold_sites(mt_leak_fold *f, const mt_selection *s, int fold);
int mta_leak_fold_add(mt_leak_fold *f, mt_node_id node, const mt_alloc *a, uint64_t seq);

#endif
