/*
 * signif.c - the significance tests of comparisons: incomplete beta and
 * gamma against direct sums of binomial and Poisson probabilities, the
 * exact tests' p-values in known cases, and Holm's adjustment.
 */
#include <math.h>
#include <stdio.h>

#include "memtrace/compare.h"
#include "../check.h"


static void near(const char *what, double got, double want, double rel)
{
    double err = fabs(got - want);
    int ok = err <= rel * fabs(want) + 1e-300;
    printf("%s: %s: got %.12g, want %.12g\n", ok ? "PASS" : "FAIL", what, got, want);
    failures += !ok;
}


/* P(K >= k), K ~ Binomial(n, p), by summing the probabilities. */
static double binom_upper_sum(int k, int n, double p)
{
    double s = 0;
    for (int i = k; i <= n; i++)
        s += exp(lgamma(n + 1) - lgamma(i + 1) - lgamma(n - i + 1) + i * log(p) +
                 (n - i) * log1p(-p));
    return s;
}

static double poisson_upper_sum(int k, double l)
{
    double lo = 0, hi = 0;   /* below k when k < l, else from k up: no cancellation */
    if (k < l) {
        for (int i = 0; i < k; i++)
            lo += exp(i * log(l) - l - lgamma(i + 1));
        return 1 - lo;
    }
    for (int i = k; i < k + 100 + 20 * (int)sqrt(l); i++)
        hi += exp(i * log(l) - l - lgamma(i + 1));
    return hi;
}

int main(void)
{
    static const struct { int k, n; double p; } b[] = {
        {1, 1, 0.5}, {3, 10, 0.5}, {7, 10, 0.5}, {0, 5, 0.3}, {40, 100, 0.25},
        {60, 100, 0.5}, {5, 2000, 0.001}, {1200, 2000, 0.5}, {2, 3, 0.9}, {950, 1000, 0.93},
    };
    char what[128];
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) {
        snprintf(what, sizeof what, "P(Bin(%d, %g) >= %d)", b[i].n, b[i].p, b[i].k);
        near(what, mt_stat_binom_upper(b[i].k, b[i].n, b[i].p), binom_upper_sum(b[i].k, b[i].n, b[i].p), 1e-9);
    }
    static const struct { int k; double l; } q[] = {
        {1, 0.5}, {5, 2}, {3, 10}, {30, 20}, {100, 100}, {150, 100}, {1000, 900},
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        snprintf(what, sizeof what, "P(Poisson(%g) >= %d)", q[i].l, q[i].k);
        near(what, mt_stat_poisson_upper(q[i].k, q[i].l), poisson_upper_sum(q[i].k, q[i].l), 1e-8);
    }
    near("I_0.3(2.5, 4.5) by symmetry", mt_stat_ibeta(2.5, 4.5, 0.3), 1 - mt_stat_ibeta(4.5, 2.5, 0.7), 1e-12);

    /* Equal sampling: 10 against 30 samples of one byte weight is the
     * binomial test of 30 of 40 at 1/2 (two-sided). */
    mt_estimate a = {10 * 512.0, 10 * 512.0 * 512, 512, 10};
    mt_estimate c = {30 * 512.0, 30 * 512.0 * 512, 512, 30};
    near("equal rates: 10 vs 30 samples", mt_test_equal(&a, &c), 2 * binom_upper_sum(30, 40, 0.5), 1e-9);
    near("the test is symmetric", mt_test_equal(&c, &a), mt_test_equal(&a, &c), 1e-12);
    mt_estimate same = {20 * 512.0, 20 * 512.0 * 512, 512, 20};
    CHECK(mt_test_equal(&same, &same) == 1, "equal estimates: p = 1");
    /* Different rates, same quantity: 10 samples of 1024 B against 20 of
     * 512 B estimate the same 10 KiB: nothing to see. */
    mt_estimate r1 = {10 * 1024.0, 10 * 1024.0 * 1024, 1024, 10};
    mt_estimate r2 = {20 * 512.0, 20 * 512.0 * 512, 512, 20};
    CHECK(mt_test_equal(&r1, &r2) > 0.99, "different rates, same estimate: p = 1");
    /* Compared naively (by samples) 10 vs 20 would look like a change. */
    mt_estimate r1s = {10 * 512.0, 10 * 512.0 * 512, 512, 10};
    CHECK(mt_test_equal(&r1s, &r2) < 0.2, "(the same samples at one rate do differ more)");
    /* Nothing against something: with 0 vs 5 samples at equal rates the
     * two-sided p is 2 / 2^5. */
    mt_estimate zero = {0, 0, 512, 0};
    mt_estimate five = {5 * 512.0, 5 * 512.0 * 512, 512, 5};
    near("0 vs 5 samples", mt_test_equal(&zero, &five), 2.0 / 32, 1e-9);

    /* One estimate against a limit: 130 samples of 1 KiB vs a 100 KiB limit. */
    mt_estimate e = {130 * 1024.0, 130 * 1024.0 * 1024, 1024, 130};
    near("130 samples above a limit of 100", mt_test_above(&e, 100 * 1024.0), poisson_upper_sum(130, 100), 1e-8);
    CHECK(mt_test_above(&e, 200 * 1024.0) > 0.5, "an estimate below its limit does not fail");
    /* Against a base: new 30 vs base 10 samples, allowed ratio 1.5: under
     * new = 1.5 base, a sample is new's with probability 0.6. */
    near("ratio test", mt_test_ratio_above(&a, &c, 1.5), binom_upper_sum(30, 40, 0.6), 1e-9);

    double p[5] = {0.01, 0.04, 0.03, 0.005, 0.5}, adj[5];
    mt_holm(p, 5, adj);
    /* sorted 0.005 0.01 0.03 0.04 0.5 -> *5 *4 *3 *2 *1 = .025 .04 .09 .08 .5, running max */
    near("Holm 0.005", adj[3], 0.025, 1e-12);
    near("Holm 0.01", adj[0], 0.04, 1e-12);
    near("Holm 0.03", adj[2], 0.09, 1e-12);
    near("Holm 0.04 (monotone)", adj[1], 0.09, 1e-12);
    near("Holm 0.5", adj[4], 0.5, 1e-12);
    return failures != 0;
}
