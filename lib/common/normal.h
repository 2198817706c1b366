/*
 * normal.h - the standard normal distribution the estimates share: its
 * upper tail, its distribution function and its quantile (the inverse,
 * by bisection). Used by the peak's interval (lib/analyze/peak.c) and the
 * leak suspects' test (lib/analyze/leaks.c).
 * Header only, no allocation, no state: any layer may include it; it
 * needs libm's erfc (the recorder, which links no libm, has none of its
 * own to offer).
 */
#ifndef MT_COMMON_NORMAL_H
#define MT_COMMON_NORMAL_H

#include <math.h>

#include "check.h"

/* P(Z > z): the upper tail. */
static inline double mt_norm_upper(double z)
{
    return 0.5 * erfc(z / M_SQRT2);
}

/* P(Z <= z): Phi(z). */
static inline double mt_norm_cdf(double z)
{
    return 0.5 * erfc(-z / M_SQRT2);
}

/* Phi^-1(p) for p in (0, 1): the z with Phi(z) = p, by bisection on
 * [-40, 40] (every double p in (0, 1) has its quantile there; 200
 * halvings take the interval below a double's resolution). Monotone in p;
 * a few microseconds: for a handful of calls, not a loop over data. */
static inline double mt_norm_quantile(double p)
{
    MT_ASSERT(p > 0 && p < 1);
    double lo = -40, hi = 40;
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (mt_norm_cdf(mid) < p)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

#endif
