/*
 * mathfn.c - the few libm functions the sampler uses (log, log1p,
 * sqrt, cos), defined here, hidden, so that libmemtrace.so does not need libm:
 * a program that does not use libm does not find it loaded under the
 * recorder (docs/recorder.md, "What the program sees"). The program's own
 * calls still go to libm: these symbols are not exported.
 *
 * Accuracy: a few units in the last place over the sampler's domains
 * (log on (0, 1e6], log1p on (-1, 0], cos on [0, 2*pi], sqrt exact).
 */
#include <stdint.h>
#include <string.h>

#include "thread.h"

MT_HIDDEN double log(double x);
MT_HIDDEN double log1p(double x);
MT_HIDDEN double sqrt(double x);
MT_HIDDEN double cos(double x);

double sqrt(double x)
{
    double r;
    if (!(x >= 0))
        return x == 0 ? x : __builtin_nan("");
    __asm__("sqrtsd %1, %0" : "=x"(r) : "x"(x));
    return r;
}

double log(double x)
{
    if (!(x > 0))
        return x == 0 ? -__builtin_inf() : __builtin_nan("");
    if (x == __builtin_inf())
        return x;
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    int e = 0;
    if ((b >> 52) == 0) {          /* subnormal: scale into the normal range */
        x *= 0x1p54;
        memcpy(&b, &x, sizeof b);
        e = -54;
    }
    e += (int)((b >> 52) & 0x7FF) - 1023;
    b = (b & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull;   /* m in [1, 2) */
    double m;
    memcpy(&m, &b, sizeof m);
    if (m > 1.4142135623730951) {  /* m in [sqrt(1/2), sqrt(2)) */
        m *= 0.5;
        e++;
    }
    /* log(m) = 2 atanh(z) = 2 z (1 + z^2/3 + z^4/5 + ...), z = (m-1)/(m+1),
     * |z| < 0.1716: z^2 < 0.0295, so the terms after z^22/23 are below
     * 2^-60 of the sum. Horner's rule with the reciprocals as constants:
     * multiplications and additions only (a division per term made this
     * the sampler's largest part after the table). */
    double z = (m - 1) / (m + 1), z2 = z * z;
    double p = 1.0 / 23;
    p = p * z2 + 1.0 / 21;
    p = p * z2 + 1.0 / 19;
    p = p * z2 + 1.0 / 17;
    p = p * z2 + 1.0 / 15;
    p = p * z2 + 1.0 / 13;
    p = p * z2 + 1.0 / 11;
    p = p * z2 + 1.0 / 9;
    p = p * z2 + 1.0 / 7;
    p = p * z2 + 1.0 / 5;
    p = p * z2 + 1.0 / 3;
    p = p * z2;   /* the series' terms after its first, z itself */
    return 2 * (z + z * p) + e * 0.6931471805599453;
}

/* log(1 + x) without the cancellation of log(1 + x) for small x: with
 * u = 1 + x rounded, log(u) * x / (u - 1) corrects for the rounding of u
 * (the classic trick from Goldberg's "What every computer scientist should
 * know about floating-point arithmetic"). The sampler calls it with x = -rate. */
double log1p(double x)
{
    double u = 1.0 + x;
    if (u == 1.0)
        return x;
    return log(u) * x / (u - 1.0);
}

/* Taylor series on [0, pi/4]: few terms, small rounding error. */
static double cos_small(double x)
{
    double x2 = x * x, term = 1, sum = 1;
    for (int k = 1; k < 12; k++) {
        term *= -x2 / ((2 * k - 1) * (2 * k));
        sum += term;
    }
    return sum;
}

static double sin_small(double x)
{
    double x2 = x * x, term = x, sum = x;
    for (int k = 1; k < 12; k++) {
        term *= -x2 / ((2 * k) * (2 * k + 1));
        sum += term;
    }
    return sum;
}

double cos(double x)
{
    /* pi/2 and its multiples in two parts (Cody and Waite): reductions
     * stay exact to about 2^-100. */
    const double pio2_hi = 1.5707963267948966, pio2_lo = 6.123233995736766e-17;
    if (x != x || x == __builtin_inf() || x == -__builtin_inf())
        return __builtin_nan("");
    if (x < 0)
        x = -x;
    if (x > 1e9)
        return 0;   /* not used by the sampler; no precise reduction */
    /* x = q * pi/2 + r, |r| <= pi/4 */
    double q = (double)(int64_t)(x / pio2_hi + 0.5);
    double r = (x - q * pio2_hi) - q * pio2_lo;
    switch ((int64_t)q & 3) {
    case 0: return cos_small(r);
    case 1: return -sin_small(r);
    case 2: return -cos_small(r);
    default: return sin_small(r);
    }
}
