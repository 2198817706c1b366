/*
 * verdict.h - the leak verdicts' figures of mt_stats (verdict.c). Internal.
 */
#ifndef MTA_VERDICT_H
#define MTA_VERDICT_H

#include "memtrace/analyze.h"

/* The leak verdicts' sums (mta_verdict_add, scale.h) as o's fields: none
 * when m's trace has no verdicts. */
void mta_verdict_stats(const mt_model *m, const double v[4], const uint64_t n[2], mt_stats *o);

#endif
