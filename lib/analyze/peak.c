/*
 * peak.c - the estimate of peak live memory and its interval (mt_peak),
 * from one pass over the live-memory curve's times (mta_peak_acc): every
 * route that finds a peak (whole model, folded model, curve queries,
 * streaming curves) feeds the same accumulator, so they report the same.
 *
 * The highest value of the estimated curve is biased upward where the
 * curve stays near its top while blocks are replaced: each replacement
 * draws the samples anew, and the highest of many noisy readings of one
 * level lands on the top of the noise. The accumulator counts how much of
 * that renewal happened near the top: the samples allocated at times when
 * the curve stood within PEAK_BAND standard errors of the estimated level
 * (binned by the level before the time's events: the allocation that
 * makes a spike is not a renewal of it). With P the highest count of live
 * samples and A those renewed samples, the top was read about
 * N = 1 + PEAK_RENEW A / P times independently, and the highest reading of
 * N is distributed as the level plus sd times the largest of N standard
 * normal variables, whose quantiles are Phi^-1(p^(1/N)). The estimate is
 * the highest value less sd times the median of that largest, the
 * interval the 2.5% and 97.5% quantiles the same way, for PEAK_SPREAD
 * times more readings and PEAK_FEWER times fewer (N is itself estimated,
 * and a top reached once, as a ramp's, counts its way up as readings).
 * Below POISSON_BELOW samples at the top the same quantiles come from
 * Poisson counts instead of normal ones. The constants
 * were calibrated by simulation. docs/estimates.md gives the
 * reasoning and tests/analyze/peak_estimate.c the simulations behind it.
 * At rate 1 (every byte sampled) the curve is exact and so is the peak.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "peak.h"
#include "memtrace/compare.h"
#include "memtrace/stream.h"

#define PEAK_BAND 2.0      /* the top: within this many sd of the level */
#define PEAK_RENEW 3.0     /* readings per top's worth of samples renewed */
#define PEAK_SPREAD 1.5    /* the lower bound's allowance for more readings */
#define PEAK_FEWER 10.0    /* the upper bound's for fewer: a top reached once
                            * (a ramp) counts its way up as readings of it */
#define PEAK_LEVEL 0.95    /* the interval's coverage */

void mta_peak_init(mta_peak_acc *p)
{
    memset(p, 0, sizeof *p);
}

/* Bins two by two: each covers twice the levels. */
static void widen(mta_peak_acc *p)
{
    for (size_t k = 0; k < MTA_PEAK_BINS / 2; k++)
        p->bin[k] = p->bin[2 * k] + p->bin[2 * k + 1];
    memset(p->bin + MTA_PEAK_BINS / 2, 0, MTA_PEAK_BINS / 2 * sizeof *p->bin);
    p->shift++;
}

void mta_peak_time(mta_peak_acc *p, mt_timedelta t, int64_t before, int64_t after,
                   uint64_t allocated)
{
    if (after > p->max) {
        p->max = after;
        p->max_t = t;
        while ((uint64_t)p->max >> p->shift >= MTA_PEAK_BINS)
            widen(p);
    }
    if (allocated && before >= 0) {
        uint64_t k = (uint64_t)before >> p->shift;   /* before <= max: in range */
        p->bin[k < MTA_PEAK_BINS ? k : MTA_PEAK_BINS - 1] += allocated;
    }
}

/* Phi^-1(x), by bisection on erfc (the quantiles asked for lie in
 * [-9, 9]; 80 halvings are below a double's resolution there). */
static double norm_quantile(double x)
{
    double lo = -9, hi = 9;
    for (int i = 0; i < 80; i++) {
        double mid = (lo + hi) / 2;
        if (0.5 * erfc(-mid / M_SQRT2) < x)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

/* The p quantile of the largest of n standard normal variables. */
static double max_quantile(double p, double n)
{
    return norm_quantile(exp(log(p) / n));
}

/* Few samples at the top: the readings are Poisson counts, and the normal
 * quantiles above are far off (a top of one sample read a thousand times
 * would give a negative level). Below POISSON_BELOW samples the level mu
 * (in samples) solves
 *   (F_mu(P - 1)^n + F_mu(P)^n) / 2 = target
 * F_mu the Poisson(mu) distribution function: the mid-p chance that the
 * highest of n readings of mu stays below P, which falls as mu grows. */
#define POISSON_BELOW 30.0

static double pois_cdf(double k, double mu)
{
    if (k < 0)
        return 0;
    if (!(mu > 0))
        return 1;
    return 1 - mt_stat_igamma(k + 1, mu);   /* P(X <= k) = 1 - P(X >= k + 1) */
}

static double max_below(double P, double mu, double n)
{
    double a = pois_cdf(P - 1, mu), b = pois_cdf(P, mu);
    double pa = a > 0 ? exp(n * log(a)) : 0, pb = b > 0 ? exp(n * log(b)) : 0;
    return (pa + pb) / 2;
}

static double poisson_level(double P, double n, double target)
{
    double lo = 0, hi = P + 20 * sqrt(P + 1) + 20;
    for (int i = 0; i < 60; i++) {
        double mid = (lo + hi) / 2;
        if (max_below(P, mid, n) > target)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

void mta_peak_result(const mta_peak_acc *p, double bps, double rate, mt_peak *out)
{
    memset(out, 0, sizeof *out);
    double P = (double)(p->max > 0 ? p->max : 0);
    out->curve_max = P * bps;
    out->bytes = out->lo = out->hi = out->curve_max;
    out->readings = 1;
    if (!(rate > 0) || rate >= 1)
        return;   /* every word sampled: exact */
    double sd = sqrt(P * (1 - rate));
    /* no samples at the top: the Poisson bound of one reading of 0 */
    if (sd < 1)
        sd = 1;
    /* the top: the times within PEAK_BAND sd of the level estimated so
     * far (from the highest value down, the band widens as more readings
     * are found: a few rounds settle it) */
    double n = 1;
    for (int round = 0; round < 8; round++) {
        double level = P - sd * max_quantile(0.5, n), band = level - PEAK_BAND * sd, A = 0;
        for (size_t k = 0; k < MTA_PEAK_BINS; k++) {
            double top = (double)(((uint64_t)k + 1) << p->shift); /* a bin's levels: below top */
            if (top > band)
                A += (double)p->bin[k];
        }
        double m = P > 0 ? 1 + PEAK_RENEW * A / P : 1;
        if (m == n)
            break;
        n = m;
    }
    double a = (1 - PEAK_LEVEL) / 2;
    /* the readings are themselves an estimate: the lower bound takes
     * PEAK_SPREAD times more, the upper bound PEAK_FEWER times fewer */
    double n_lo = n * PEAK_SPREAD, n_hi = 1 + (n - 1) / PEAK_FEWER;
    double est, lo, hi;
    if (P < POISSON_BELOW) {
        est = poisson_level(P, n, 0.5);
        lo = poisson_level(P, n_lo, 1 - a);
        hi = poisson_level(P, n_hi, a);
    } else {
        est = P - sd * max_quantile(0.5, n);
        lo = P - sd * max_quantile(1 - a, n_lo);
        hi = P - sd * max_quantile(a, n_hi);
    }
    out->samples = P;
    out->sd = sd * bps;
    out->readings = n;
    /* a peak is not negative, and the interval holds its estimate (with
     * very few samples and many readings the quantiles can cross it) */
    est = est > 0 ? est : 0;
    lo = lo > 0 ? (lo < est ? lo : est) : 0;
    hi = hi > est ? hi : est;
    out->bytes = est * bps;
    out->lo = lo * bps;
    out->hi = hi * bps;
}

double mt_test_peak_above(const mt_peak *p, double limit)
{
    if (!(p->sd > 0))
        return p->curve_max > limit ? 0 : 1;
    if (p->samples < POISSON_BELOW) {
        /* the chance that the highest of the readings of a peak of limit
         * reaches the curve's (mid-p, as the estimate) */
        double bps = p->samples > 0 ? p->curve_max / p->samples : p->sd;
        double v = 1 - max_below(p->samples, limit / bps, p->readings * PEAK_SPREAD);
        return v < 0 ? 0 : v > 1 ? 1 : v;
    }
    /* at a peak of limit, the highest reading is limit + sd * (the largest
     * of the readings' standard normals), taken as many as the lower bound
     * takes them */
    double z = (p->curve_max - limit) / p->sd;
    double n = p->readings * PEAK_SPREAD;
    double q = 0.5 * erfc(z / M_SQRT2);   /* one reading above: 1 - Phi(z) */
    return q >= 1 ? 1 : -expm1(n * log1p(-q));
}

void mt_peak_scale(mt_peak *p, double bps)
{
    p->bytes *= bps;
    p->lo *= bps;
    p->hi *= bps;
    p->curve_max *= bps;
    p->sd *= bps;
}

struct mt_peak_acc {
    mta_peak_acc a;
};

mt_peak_acc *mt_peak_acc_new(void)
{
    mt_peak_acc *p = malloc(sizeof *p);
    if (p)
        mta_peak_init(&p->a);
    return p;
}

void mt_peak_acc_free(mt_peak_acc *p)
{
    free(p);
}

void mt_peak_acc_time(mt_peak_acc *p, mt_timedelta t, int64_t before, int64_t after,
                      uint64_t allocated)
{
    mta_peak_time(&p->a, t, before, after, allocated);
}

void mt_peak_acc_result(const mt_peak_acc *p, double bps, double rate, mt_peak *out)
{
    mta_peak_result(&p->a, bps, rate, out);
}
