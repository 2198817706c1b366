/*
 * signif.c - the significance tests behind comparisons and budgets: the
 * exact conditional binomial test of two Poisson estimates, the exact
 * Poisson test of one estimate against a limit, Holm's adjustment, and
 * the incomplete beta and gamma functions they rest on. docs/compare.md
 * gives the reasoning.
 */
#include <math.h>
#include <stdlib.h>

#include "memtrace/compare.h"

#define CF_EPS 1e-15
#define CF_TINY 1e-300
#define CF_MAX_ITER 1000000

/* The continued fraction of I_x(a, b) (valid for x < (a + 1) / (a + b + 2)),
 * evaluated with the modified Lentz method:
 *   1 / (1 + d1 / (1 + d2 / (1 + ...)))
 *   d(2m+1) = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1))
 *   d(2m)   = m (b - m) x / ((a + 2m - 1)(a + 2m)) */
static double beta_cf(double a, double b, double x)
{
    double f = CF_TINY, c = f, d = 0;
    for (int j = 1; j <= CF_MAX_ITER; j++) {
        double num;
        if (j == 1) {
            num = 1;
        } else {
            int i = j - 1;   /* index of d */
            double m = (double)(i / 2);
            if (i % 2)
                num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
            else
                num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
        }
        d = 1 + num * d;
        if (fabs(d) < CF_TINY)
            d = CF_TINY;
        c = 1 + num / c;
        if (fabs(c) < CF_TINY)
            c = CF_TINY;
        d = 1 / d;
        double delta = c * d;
        f *= delta;
        if (fabs(delta - 1) < CF_EPS)
            break;
    }
    return f;
}

static double lbeta(double a, double b)
{
    return lgamma(a) + lgamma(b) - lgamma(a + b);
}

double mt_stat_ibeta(double a, double b, double x)
{
    if (!(x > 0))
        return 0;
    if (!(x < 1))
        return 1;
    if (x < (a + 1) / (a + b + 2)) {
        double front = exp(a * log(x) + b * log1p(-x) - lbeta(a, b)) / a;
        return front * beta_cf(a, b, x);
    }
    double front = exp(b * log1p(-x) + a * log(x) - lbeta(a, b)) / b;
    return 1 - front * beta_cf(b, a, 1 - x);
}

double mt_stat_igamma(double a, double x)
{
    if (!(x > 0))
        return 0;
    double front = exp(a * log(x) - x - lgamma(a));
    if (x < a + 1) {
        /* series: sum x^n / (a (a+1) ... (a+n)) */
        double term = 1 / a, sum = term;
        for (int n = 1; n < CF_MAX_ITER; n++) {
            term *= x / (a + n);
            sum += term;
            if (term < sum * CF_EPS)
                break;
        }
        return front * sum;
    }
    /* Q(a, x) by its continued fraction (Lentz):
     * 1 / (x + 1 - a - 1(1 - a) / (x + 3 - a - 2(2 - a) / (x + 5 - a - ...))) */
    double b = x + 1 - a, c = 1 / CF_TINY, d = 1 / b, h = d;
    for (int i = 1; i < CF_MAX_ITER; i++) {
        double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        if (fabs(d) < CF_TINY)
            d = CF_TINY;
        c = b + an / c;
        if (fabs(c) < CF_TINY)
            c = CF_TINY;
        d = 1 / d;
        double delta = d * c;
        h *= delta;
        if (fabs(delta - 1) < CF_EPS)
            break;
    }
    return 1 - front * h;
}

double mt_stat_binom_upper(double k, double n, double p)
{
    if (k <= 0)
        return 1;
    if (k > n || p <= 0)
        return 0;
    if (p >= 1)
        return 1;
    /* P(K >= k) = I_p(k, n - k + 1) */
    return mt_stat_ibeta(k, n - k + 1, p);
}

double mt_stat_poisson_upper(double k, double lambda)
{
    if (k <= 0)
        return 1;
    if (lambda <= 0)
        return 0;
    /* P(K >= k) = P(k, lambda) (lower regularized gamma) */
    return mt_stat_igamma(k, lambda);
}

/* P(K <= k) for K ~ Binomial(n, p), by symmetry (no 1 - x cancellation). */
static double binom_lower(double k, double n, double p)
{
    if (k >= n)
        return 1;
    return mt_stat_binom_upper(n - k, n, 1 - p);
}

double mt_estimate_se(const mt_estimate *e)
{
    double se = sqrt(e->var > 0 ? e->var : 0);
    return se > e->unit ? se : e->unit;
}

/* Effective sample count: value^2 / var (the count itself when every
 * sample weighs the same). */
static double eff_count(const mt_estimate *e)
{
    return e->value > 0 && e->var > 0 ? e->value * e->value / e->var : 0;
}

/* Weight of one sample: var / value, or the estimate's stated unit. */
static double eff_unit(const mt_estimate *e)
{
    return e->value > 0 && e->var > 0 ? e->var / e->value : e->unit;
}

double mt_test_equal(const mt_estimate *a, const mt_estimate *b)
{
    double ka = eff_count(a), kb = eff_count(b), n = ka + kb;
    double ua = eff_unit(a), ub = eff_unit(b);
    if (!(n > 0) || !(ua > 0) || !(ub > 0))
        return 1;
    /* Under "same expected value mu": ka ~ Poisson(mu / ua), kb ~ Poisson(mu / ub);
     * given n, kb ~ Binomial(n, p0) with p0 = (1/ub) / (1/ua + 1/ub). */
    double p0 = ua / (ua + ub);
    double up = mt_stat_binom_upper(kb, n, p0), lo = binom_lower(kb, n, p0);
    double p = 2 * (up < lo ? up : lo);
    return p < 1 ? p : 1;
}

double mt_test_above(const mt_estimate *e, double limit)
{
    double k = eff_count(e), u = eff_unit(e);
    if (!(k > 0))
        return 1;
    if (!(u > 0))
        return 1;
    return mt_stat_poisson_upper(k, limit > 0 ? limit / u : 0);
}

double mt_test_ratio_above(const mt_estimate *base, const mt_estimate *new_, double ratio)
{
    double kb = eff_count(base), kn = eff_count(new_), n = kb + kn;
    double ub = eff_unit(base), un = eff_unit(new_);
    if (!(kn > 0) || !(ub > 0) || !(un > 0))
        return 1;
    if (!(ratio > 0))
        return mt_test_above(new_, 0);
    /* At the boundary mu_new = ratio * mu_base: given n, kn ~ Binomial(n, p0). */
    double p0 = (ratio / un) / (ratio / un + 1 / ub);
    return mt_stat_binom_upper(kn, n, p0);
}

typedef struct p_item {
    double p;
    size_t i;
} p_item;

static int cmp_p(const void *x, const void *y)
{
    const p_item *a = x, *b = y;
    if (a->p != b->p)
        return a->p < b->p ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

void mt_holm(const double *p, size_t n, double *adj)
{
    p_item *it = malloc((n ? n : 1) * sizeof *it);
    if (!it) {
        /* Bonferroni: never smaller than Holm, so still valid */
        for (size_t i = 0; i < n; i++)
            adj[i] = p[i] * (double)n < 1 ? p[i] * (double)n : 1;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        it[i].p = p[i];
        it[i].i = i;
    }
    qsort(it, n, sizeof *it, cmp_p);
    double run = 0;
    for (size_t j = 0; j < n; j++) {
        double v = it[j].p * (double)(n - j);
        if (v > 1)
            v = 1;
        if (v > run)
            run = v;
        adj[it[j].i] = run;
    }
    free(it);
}
