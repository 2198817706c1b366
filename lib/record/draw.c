/*
 * draw.c - geometric and binomial draws for per-byte sampling (draw.h).
 *
 * Geometric: with U uniform in (0, 1], 1 + floor(log(U) / log(1 - p)) is
 * k with probability (1-p)^(k-1) p exactly (P(gap > k) = P(U <= (1-p)^k)).
 *
 * Binomial(n, p): for p > 1/2 by symmetry, n - Binomial(n, 1 - p); when
 * n p is small by walking geometric gaps across the n bytes (n p + 1 draws
 * on average); otherwise by Hormann's transformed rejection with squeeze
 * (BTRS, "The generation of binomial random variates", 1993): a hat
 * function built around the mode, a cheap acceptance region that covers
 * most draws, and an exact test against the binomial probability (through
 * Stirling's series with tabulated corrections) for the rest. Its expected
 * number of rounds is below 1.2 for every n and p.
 */
#include <math.h>

#include "draw.h"

double mtr_geometric_scale(double p)
{
    if (p >= 1.0)
        return 0.0;
    return -1.0 / log1p(-p);
}

uint64_t mtr_geometric(uint64_t *state, double scale)
{
    double x = floor(-log(mtr_uniform(state)) * scale);
    if (!(x < (double)(MT_MAX_GAP - 1)))
        return MT_MAX_GAP;
    return (uint64_t)x + 1;
}

/* log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2]: the error of
 * Stirling's formula for k!. */
static double stirling_tail(double k)
{
    static const double small[10] = {
        0.08106146679532733, 0.04134069595540946, 0.02767792568499772,
        0.02079067210376584, 0.01664469118982126, 0.01387612882307287,
        0.01189670994589331, 0.01041126526197367, 0.00925546218270945,
        0.00833056343335947,
    };
    if (k < 10.0)
        return small[(int)k];
    double k1 = k + 1.0, k1sq = k1 * k1;
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / k1sq) / k1sq) / k1;
}

/* Binomial(n, p) for p <= 1/2 and n p >= 10. */
static uint64_t btrs(uint64_t *state, uint64_t n, double p)
{
    double dn = (double)n, q = 1.0 - p;
    double spq = sqrt(dn * p * q);
    double b = 1.15 + 2.53 * spq;
    double a = -0.0873 + 0.0248 * b + 0.01 * p;
    double c = dn * p + 0.5;
    double v_r = 0.92 - 4.2 / b;
    double alpha = (2.83 + 5.1 / b) * spq;
    double r = p / q;
    double m = floor((dn + 1.0) * p);
    double nm = dn - m + 1.0;
    double h = (m + 0.5) * log((m + 1.0) / (r * nm)) + stirling_tail(m) + stirling_tail(dn - m);

    for (;;) {
        double u = mtr_uniform(state) - 0.5;
        double v = mtr_uniform(state);
        double us = 0.5 - fabs(u);
        double k = floor((2.0 * a / us + b) * u + c);
        if (k < 0.0 || k > dn)
            continue;
        if (us >= 0.07 && v <= v_r)
            return (uint64_t)k;
        double nk = dn - k + 1.0;
        v = log(v * alpha / (a / (us * us) + b));
        double bound = h + (dn + 1.0) * log(nm / nk) + (k + 0.5) * log(nk * r / (k + 1.0)) -
                       stirling_tail(k) - stirling_tail(dn - k);
        if (v <= bound)
            return (uint64_t)k;
    }
}

uint64_t mtr_binomial(uint64_t *state, uint64_t n, double p)
{
    if (n == 0 || !(p > 0.0))
        return 0;
    if (p >= 1.0)
        return n;
    if (p > 0.5)
        return n - mtr_binomial(state, n, 1.0 - p);
    if ((double)n * p < 16.0) {
        double scale = mtr_geometric_scale(p);
        uint64_t k = 0, left = n;
        for (;;) {
            uint64_t g = mtr_geometric(state, scale);
            if (g > left)
                return k;
            left -= g;
            k++;
        }
    }
    return btrs(state, n, p);
}
