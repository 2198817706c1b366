/*
 * mathfn.c - the recorder's own log, sqrt and cos (lib/record/mathfn.c,
 * which keep libm out of the profiled program) agree with libm's to within
 * a few units in the last place over the sampler's domains.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int failures;

static double ulps(double a, double b)
{
    double d = fabs(a - b), u = nextafter(fabs(b), INFINITY) - fabs(b);
    return b == 0 ? d / 4.9e-324 : d / u;
}

int main(void)
{
    void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
    double (*m_log)(double) = h ? (double (*)(double))dlsym(h, "log") : NULL;
    double (*m_cos)(double) = h ? (double (*)(double))dlsym(h, "cos") : NULL;
    double (*m_sqrt)(double) = h ? (double (*)(double))dlsym(h, "sqrt") : NULL;
    double (*m_log1p)(double) = h ? (double (*)(double))dlsym(h, "log1p") : NULL;
    if (!m_log || !m_cos || !m_sqrt || !m_log1p) {
        printf("FAIL: libm.so.6 loads\n");
        return 1;
    }
    double worst_log = 0, worst_cos = 0, worst_sqrt = 0, worst_cos_abs = 0, worst_big = 0;
    double worst_log1p = 0;
    srand(7);
    for (int i = 0; i < 200000; i++) {
        double u = (rand() + 1.0) / ((double)RAND_MAX + 2.0);
        double tiny = u * 1e-300;
        double l1 = ulps(log(u), m_log(u)), l2 = ulps(log(tiny), m_log(tiny));
        double c = u * 6.283185307179586;
        double ca = fabs(cos(c) - m_cos(c));
        double s = ulps(sqrt(u * 1e6), m_sqrt(u * 1e6));
        worst_log = fmax(worst_log, fmax(l1, l2));
        worst_big = fmax(worst_big, ulps(log(1 + u * 1e6), m_log(1 + u * 1e6)));
        /* the sampler's -1 / log1p(-rate), rates from 1e-18 to 0.999 */
        double rate = pow(10, -18 * u) * 0.999;
        worst_log1p = fmax(worst_log1p, ulps(log1p(-rate), m_log1p(-rate)));
        worst_cos_abs = fmax(worst_cos_abs, ca);
        if (fabs(m_cos(c)) > 1e-3)
            worst_cos = fmax(worst_cos, ulps(cos(c), m_cos(c)));
        worst_sqrt = fmax(worst_sqrt, s);
    }
    printf("%s: log within %.1f ulp of libm on (0, 1]\n", worst_log <= 4 ? "PASS" : "FAIL", worst_log);
    printf("%s: cos within %.1f ulp of libm on [0, 2pi] (abs error %.2g)\n",
           worst_cos <= 64 && worst_cos_abs < 1e-15 ? "PASS" : "FAIL", worst_cos, worst_cos_abs);
    printf("%s: log within %.1f ulp of libm on (1, 1e6]\n", worst_big <= 4 ? "PASS" : "FAIL",
           worst_big);
    printf("%s: log1p within %.1f ulp of libm on (-1, 0)\n", worst_log1p <= 4 ? "PASS" : "FAIL",
           worst_log1p);
    failures |= !(worst_big <= 4 && worst_log1p <= 4);
    printf("%s: sqrt exact (%.1f ulp)\n", worst_sqrt == 0 ? "PASS" : "FAIL", worst_sqrt);
    failures |= !(worst_log <= 4 && worst_cos <= 64 && worst_cos_abs < 1e-15 && worst_sqrt == 0);
    volatile double zero = 0, minus = -1;
    int edges = isinf(log(zero)) && log(zero) < 0 && isnan(log(minus));
    printf("%s: log(0) = -inf, log(-1) is NaN\n", edges ? "PASS" : "FAIL");
    failures |= !edges;
    return failures;
}
