/*
 * verdict.c - the leak verdicts' figures of mt_stats (docs/leaks.md): the
 * bytes the scan found lost and reachable, estimated as every live count
 * is (each sampled block stands for its estimated bytes), with their
 * standard errors (the square root of the summed per-block variances, as
 * the count errors of docs/estimates.md); for a zero from no sample, the
 * most it can hide (mt_unsampled_upper).
 */
#include <math.h>

#include "verdict.h"

void mta_verdict_stats(const mt_model *m, const double v[4], const uint64_t n[2], mt_stats *o)
{
    o->has_verdicts = mt_model_scan(m, NULL);
    if (!o->has_verdicts)
        return;
    o->lost_bytes = v[0];
    o->reachable_bytes = v[1];
    o->lost_bytes_se = sqrt(v[2]);
    o->reachable_bytes_se = sqrt(v[3]);
    o->lost_blocks = n[0];
    o->reachable_blocks = n[1];
    o->lost_bytes_upper = n[0] ? 0 : mt_unsampled_upper(m, 0.95);
}

double mt_unsampled_upper(const mt_model *m, double level)
{
    const mt_scale *sc = mt_model_scale(m);
    if (!sc || sc->sample_rate >= 1 || !(sc->bytes_per_sample > 0) || !(level > 0 && level < 1))
        return 0;
    return -log(1 - level) * sc->bytes_per_sample;
}
