/*
 * peak.c - the estimate of peak live memory and its interval (mt_peak),
 * from one pass over the live-memory curve's times (mta_peak_acc): every
 * route that finds a peak (whole model, folded model, curve queries,
 * streaming curves) feeds the same accumulator, so they report the same.
 *
 * The estimate is the curve's highest value P: the live bytes at the time
 * the estimated curve peaks, the figure every view of the curve shows at
 * that time (top --at peak, a bucket of the plot), never below a value the
 * curve shows at any time. It can read high: where the curve stays near
 * its top while blocks are replaced, the highest of many noisy readings
 * of one level lands on the top of the noise. The 95% interval:
 *  - its upper bound is the fixed-time Poisson upper bound of P: the true
 *    peak's own time shows at most P samples, so the bound of P holds for
 *    the true peak as it holds for any fixed time;
 *  - its lower bound allows for the selection of the highest of N
 *    effectively independent readings: P less sd times the 97.5% quantile
 *    of the largest of PEAK_SPREAD N standard normals (Poisson counts
 *    below POISSON_BELOW samples), N counted from the samples renewed
 *    while the curve stood within PEAK_BAND sd of its level; counting too
 *    many only widens this side. It is at least the fixed-time lower bound
 *    of the live bytes at the end of the curve.
 * docs/estimates.md gives the reasoning and the measurements,
 * tests/analyze/peak_estimate.c the simulations behind it. At rate 1
 * (every byte sampled) the curve is exact and so is the peak.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "normal.h"
#include "peak.h"
#include "memtrace/compare.h"
#include "memtrace/stream.h"

#define PEAK_BAND 2.0      /* the top: within this many sd of the level */
#define PEAK_RENEW 3.0     /* readings per top's worth of samples renewed */
#define PEAK_SPREAD 1.5    /* the lower bound's allowance for more readings */
#define PEAK_LEVEL 0.95    /* the interval's coverage */

void mta_peak_init(mta_peak_acc *p)
{
    memset(p, 0, sizeof *p);
}

/* Bins two by two: each covers twice the levels. */
static void widen(mta_peak_acc *p)
{
    for (size_t k = 0; k < MTA_PEAK_BINS / 2; k++) {
        p->bin[k] = p->bin[2 * k] + p->bin[2 * k + 1];
        p->reach[k] = p->reach[2 * k] + p->reach[2 * k + 1];
    }
    memset(p->bin + MTA_PEAK_BINS / 2, 0, MTA_PEAK_BINS / 2 * sizeof *p->bin);
    memset(p->reach + MTA_PEAK_BINS / 2, 0, MTA_PEAK_BINS / 2 * sizeof *p->reach);
    p->shift++;
}

void mta_peak_time(mta_peak_acc *p, mt_timedelta t, int64_t before, int64_t after,
                   uint64_t allocated)
{
    p->last = after;
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
    if (allocated && after >= 0) {
        uint64_t k = (uint64_t)after >> p->shift;    /* after <= max: in range */
        p->reach[k < MTA_PEAK_BINS ? k : MTA_PEAK_BINS - 1] += allocated;
    }
}

/* Phi^-1(x) (normal.h). */
#define norm_quantile mt_norm_quantile

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

/* Fixed-time bounds of a count of k samples at the standard normal
 * quantile z (Poisson, Wilson and Hilferty's cube-root form, within a few
 * tenths of a sample of the exact ones), narrowed by sqrt(1 - rate) for
 * binomial counts. */
static double count_upper(double k, double rate, double z)
{
    double c = 1 - 1 / (9 * (k + 1)) + z / (3 * sqrt(k + 1));
    return k + ((k + 1) * c * c * c - k) * sqrt(1 - rate);
}

static double count_lower(double k, double rate, double z)
{
    if (!(k > 0))
        return 0;
    double c = 1 - 1 / (9 * k) - z / (3 * sqrt(k));
    double l = c > 0 ? k * c * c * c : 0;
    return k - (k - l) * sqrt(1 - rate);
}

/* N, the effectively independent readings of the top: 1 and the samples
 * renewed while the curve stood within PEAK_BAND sd of its level (the
 * level estimated from N itself, from the highest value down: a few
 * rounds settle it), PEAK_RENEW readings per top's worth; and at least
 * the tops' worth of samples allocated at times that ended in the band:
 * a top reached again and again (identical spikes) is read each time. */
static double readings_of(const mta_peak_acc *p, double P, double sd)
{
    double n = 1;
    for (int round = 0; round < 8; round++) {
        double level = P - sd * max_quantile(0.5, n), band = level - PEAK_BAND * sd;
        double A = 0, R = 0;
        for (size_t k = 0; k < MTA_PEAK_BINS; k++) {
            double top = (double)(((uint64_t)k + 1) << p->shift); /* a bin's levels: below top */
            if (top > band) {
                A += (double)p->bin[k];
                R += (double)p->reach[k];
            }
        }
        double m = P > 0 ? 1 + PEAK_RENEW * A / P : 1;
        if (P > 0 && R / P > m)
            m = R / P;
        if (m == n)
            break;
        n = m;
    }
    return n;
}

void mta_peak_result(const mta_peak_acc *p, double bps, double rate, mt_peak *out)
{
    memset(out, 0, sizeof *out);
    double P = (double)(p->max > 0 ? p->max : 0);
    double E = (double)(p->last > 0 ? p->last : 0);
    out->curve_max = P * bps;
    out->bytes = out->lo = out->hi = out->curve_max;
    out->end = E * bps;
    out->samples = P;
    out->readings = 1;
    if (!(rate > 0) || rate >= 1)
        return;   /* every word sampled: exact */
    double sd = sqrt(P * (1 - rate));
    /* no samples at the top: the band of one sample */
    double n = readings_of(p, P, sd < 1 ? 1 : sd);
    double a = (1 - PEAK_LEVEL) / 2, n_lo = n * PEAK_SPREAD;
    /* the highest of n_lo readings of the level lo reaches P with chance a */
    double lo = P < POISSON_BELOW ? poisson_level(P, n_lo, 1 - a)
                                  : P - sd * max_quantile(1 - a, n_lo);
    double z = norm_quantile(1 - a), lo_end = count_lower(E, rate, z);
    if (lo < lo_end)
        lo = lo_end;
    out->sd = (sd < 1 ? 1 : sd) * bps;   /* none at the top: a sample's worth */
    out->readings = n;
    out->lo = (lo > 0 ? (lo < P ? lo : P) : 0) * bps;
    out->hi = count_upper(P, rate, z) * bps;
}

/* The chance of a count of k or more samples at a fixed time where mu are
 * expected (mid-p below POISSON_BELOW, as the bounds). */
static double count_above(double k, double mu, double sd1)
{
    if (k < POISSON_BELOW)
        return 1 - max_below(k, mu, 1);
    return mt_norm_upper((k - mu) / (sd1 * sqrt(mu > 1 ? mu : 1)));
}

double mt_test_peak_above(const mt_peak *p, double limit)
{
    if (!(p->sd > 0))
        return p->curve_max > limit ? 0 : 1;
    /* bytes per sample, and a sample's sd relative to sqrt(samples) */
    double bps = p->samples > 0 ? p->curve_max / p->samples : p->sd;
    double sd1 = p->samples > 0 ? p->sd / (bps * sqrt(p->samples)) : 1;
    double v;
    if (p->samples < POISSON_BELOW) {
        /* the chance that the highest of the readings of a peak of limit
         * reaches the curve's (mid-p, as the lower bound) */
        v = 1 - max_below(p->samples, limit / bps, p->readings * PEAK_SPREAD);
    } else {
        /* at a peak of limit, the highest reading is limit + sd * (the
         * largest of the readings' standard normals), taken as many as
         * the lower bound takes them */
        double z = (p->curve_max - limit) / p->sd;
        double n = p->readings * PEAK_SPREAD;
        double q = mt_norm_upper(z);   /* one reading above: 1 - Phi(z) */
        v = q >= 1 ? 1 : -expm1(n * log1p(-q));
    }
    /* the end is a fixed time: its live bytes are at most the peak */
    double e = count_above(p->end / bps, limit / bps, sd1);
    if (e < v)
        v = e;
    return v < 0 ? 0 : v > 1 ? 1 : v;
}

void mt_peak_scale(mt_peak *p, double bps)
{
    p->bytes *= bps;
    p->lo *= bps;
    p->hi *= bps;
    p->curve_max *= bps;
    p->end *= bps;
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
