/*
 * peak_interval.c - the peak's 95% interval and check's test of a peak
 * budget (lib/analyze/peak.c) on curves whose answers are worked out by
 * hand, independently of the code (exact Poisson bounds by summation, the
 * quantiles of the largest of N normals), at one sample in 512 KiB:
 *   a block of 400 samples held, then freed: the estimate is 400, the
 *     upper bound the exact 97.5% Poisson bound of 400 (441.19; a 90%
 *     interval would give 434.50), the lower bound 400 - 20 q, q the 97.5%
 *     quantile of the largest of 1.5 normals (357.47; at 90%: 363.40);
 *   the same block held to the end: the lower bound is the end's own
 *     fixed-time bound (361.76), above the max-selection's;
 *   three identical spikes of 400: three readings of one top, the lower
 *     bound from 4.5 of them (349.29);
 *   check --max-peak 355 on the held block: the end, a fixed time, shows
 *     400 where 355 would give 400 or more with chance 0.00846 (the
 *     max-selection's own test says 0.0183);
 *   at rate 1 everything is the exact peak.
 */
#include <math.h>
#include <stdio.h>

#include "memtrace/analyze.h"
#include "memtrace/compare.h"
#include "memtrace/stream.h"
#include "testtrace.h"

#define RATE (1.0 / 524288)

/* times[k] = {before, after, allocated}: one call per time, from 1 */
static mt_peak curve(const int64_t (*times)[3], size_t n, double rate)
{
    mt_peak p = {0};
    mt_peak_acc *a = mt_peak_acc_new();
    if (!a)
        return p;
    for (size_t k = 0; k < n; k++)
        mt_peak_acc_time(a, (mt_timedelta)k + 1, times[k][0], times[k][1], (uint64_t)times[k][2]);
    mt_peak_acc_result(a, 1, rate, &p);
    mt_peak_acc_free(a);
    return p;
}

int main(void)
{
    static const int64_t freed[][3] = {{0, 400, 400}, {400, 0, 0}};
    mt_peak p = curve(freed, 2, RATE);
    CHECK(p.bytes == 400 && p.curve_max == 400, "held then freed: the estimate is the curve's "
          "highest, 400 (%.2f)", p.bytes);
    CHECK(fabs(p.hi - 441.19) < 0.3, "held then freed: the upper bound is the exact 97.5%% "
          "Poisson bound of 400, 441.19 (%.2f)", p.hi);
    CHECK(fabs(p.lo - 357.47) < 0.05, "held then freed: the lower bound is 357.47 (%.2f)", p.lo);
    CHECK(fabs(p.readings - 1) < 1e-9, "held then freed: one reading (%.3f)", p.readings);
    CHECK(fabs(mt_test_peak_above(&p, 357.47) - 0.025) < 0.001,
          "held then freed: a budget at the lower bound has p 0.025 (%.4f)",
          mt_test_peak_above(&p, 357.47));

    static const int64_t held[][3] = {{0, 400, 400}};
    p = curve(held, 1, RATE);
    CHECK(fabs(p.lo - 361.76) < 0.3 && p.end == 400,
          "held to the end: the lower bound is the end's fixed-time bound, 361.76 (%.2f)", p.lo);
    double pv = mt_test_peak_above(&p, 355);
    CHECK(fabs(pv - 0.00846) < 0.0005,
          "held to the end: check --max-peak 355 has p 0.00846 from the end (%.5f)", pv);

    static const int64_t spikes[][3] = {{0, 400, 400}, {400, 0, 0}, {0, 400, 400},
                                        {400, 0, 0},   {0, 400, 400}, {400, 0, 0}};
    p = curve(spikes, 6, RATE);
    CHECK(fabs(p.readings - 3) < 1e-9, "three spikes: three readings (%.3f)", p.readings);
    CHECK(p.bytes == 400 && fabs(p.lo - 349.29) < 0.05,
          "three spikes: 400 with the lower bound 349.29 (%.2f, %.2f)", p.bytes, p.lo);

    p = curve(freed, 2, 1.0);
    CHECK(p.bytes == 400 && p.lo == 400 && p.hi == 400 && p.sd == 0 &&
              mt_test_peak_above(&p, 399) == 0 && mt_test_peak_above(&p, 400) == 1,
          "rate 1: the peak is exact and so is its budget's test");
    return failures != 0;
}
