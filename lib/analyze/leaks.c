/*
 * leaks.c - leak suspects: for every allocation site, is its live memory
 * still growing over the later part of the run?
 *
 * The statistic is the least-squares slope of the site's live bytes L(t)
 * on a grid of K points over the window [from, to]:
 *     slope = sum_j c_j L(t_j),  c_j = (t_j - mean t) / sum_k (t_k - mean t)^2.
 * L(t_j) is a sum over the site's sampled blocks, so the slope is too:
 *     slope = sum_i w_i g_i,  g_i = sum of c_j over the grid points the
 * block is live at (a prefix-sum difference). A block live over the whole
 * window has g_i = 0 (memory loaded at start is not growth); a block
 * allocated and freed between two grid points has g_i = 0 (churn); a block
 * allocated in the window and never freed has g_i > 0.
 *
 * Error: when blocks come and go as a Poisson process (and sampling thins
 * one Poisson process into another), Campbell's theorem gives
 * Var(slope) = E[sum_i w_i^2 g_i^2], with mean 0 when the site's behaviour
 * does not change over the window. Programs allocate in bursts (a tree
 * built and dropped at once), which would pass for trend under that
 * variance, so blocks allocated in the same grid interval and freed in the
 * same grid interval count as one unit: Var = sum_u (sum_{i in u} w_i)^2 g_u^2.
 * That is conservative for independent blocks (little power lost while
 * units hold one sample or so) and right for perfectly correlated ones.
 *
 * Family: by Cauchy-Schwarz z <= sqrt(units), so a site with few units can
 * never be significant; Tarone's rule picks the sites that could be, and
 * Holm's step-down corrects within them (as diff does).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/compare.h"
#include "memtrace/leaks.h"
#include "leakfold.h"
#include "normal.h"

#define LEAK_GRID MTA_LEAK_GRID

/* Upper tail of the standard normal and its inverse (normal.h). */
#define norm_upper mt_norm_upper
static double norm_upper_inv(double p)
{
    return -mt_norm_quantile(p);
}

static int by_key(const void *x, const void *y)
{
    const mta_leak_unit *a = x, *b = y;
    return a->key < b->key ? -1 : a->key > b->key;
}

static int by_time(const void *x, const void *y)
{
    const mta_leak_km *a = x, *b = y;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return b->event - a->event;   /* events before censorings at a tie */
}

void mt_leak_test(const mt_leak_block *b, size_t n, mt_timedelta from, mt_timedelta to,
                  mt_leak_site *out)
{
    mta_leak_unit *u = malloc((n ? n : 1) * sizeof *u);
    mta_leak_km *km = malloc((n ? n : 1) * sizeof *km);
    double live = 0, beyond = 0, len = (double)(to - from);
    size_t nu = 0, nk = 0;
    uint64_t beyond_n = 0;
    if (!u || !km) {
        free(u);
        free(km);
        memset(out, 0, sizeof *out);
        out->p = out->p_adj = 1;
        out->kept = NAN;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        int ja = mta_leak_grid_index(from, to, b[i].alloc), jf = mta_leak_grid_index(from, to, b[i].free);
        if (b[i].alloc <= to && (b[i].free == MT_TIME_NEVER || b[i].free > to))
            live += b[i].bytes;
        if (jf > ja)
            u[nu++] = (mta_leak_unit){(uint32_t)(ja * (LEAK_GRID + 1) + jf), b[i].bytes};
        if (b[i].alloc <= to) {
            int freed = b[i].free != MT_TIME_NEVER && b[i].free <= to;
            double t = (double)((freed ? b[i].free : to) - b[i].alloc);
            if (t <= len) {
                km[nk++] = (mta_leak_km){t, b[i].bytes, freed};
            } else {
                beyond += b[i].bytes;
                beyond_n++;
            }
        }
    }
    /* one unit per key, one point per lifetime and outcome */
    qsort(u, nu, sizeof *u, by_key);
    size_t w = 0;
    for (size_t i = 0; i < nu; i++) {
        if (w && u[w - 1].key == u[i].key)
            u[w - 1].bytes += u[i].bytes;
        else
            u[w++] = u[i];
    }
    nu = w;
    qsort(km, nk, sizeof *km, by_time);
    w = 0;
    for (size_t i = 0; i < nk; i++) {
        if (w && km[w - 1].time == km[i].time && km[w - 1].event == km[i].event)
            km[w - 1].weight += km[i].weight;
        else
            km[w++] = km[i];
    }
    nk = w;
    mta_leak_site_test(u, nu, km, nk, beyond, beyond_n, live, from, to, out);
    free(u);
    free(km);
}

/* ------------------------------------------------------------------------ */
/* Per site over a selection                                                 */

static int by_rank(const void *x, const void *y)
{
    const mt_leak_site *a = x, *b = y;
    if (a->suspect != b->suspect)
        return b->suspect - a->suspect;
    if (a->suspect && a->growth != b->growth)
        return a->growth > b->growth ? -1 : 1;
    if (a->z != b->z)
        return a->z > b->z ? -1 : 1;
    return a->live_end > b->live_end ? -1 : a->live_end < b->live_end;
}

/* A site and its place in site order: ties keep that order (qsort alone
 * may not). */
typedef struct ranked {
    mt_leak_site site;
    size_t at;
} ranked;

static int by_rank_then_site(const void *x, const void *y)
{
    const ranked *a = x, *b = y;
    int c = by_rank(&a->site, &b->site);
    return c ? c : a->at < b->at ? -1 : a->at > b->at;
}

/* Sorts r's sites by rank; returns 0, or -1 when out of memory. */
static int rank_sites(mt_leak_report *r)
{
    ranked *t = malloc((r->n ? r->n : 1) * sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < r->n; i++)
        t[i] = (ranked){r->sites[i], i};
    qsort(t, r->n, sizeof *t, by_rank_then_site);
    for (size_t i = 0; i < r->n; i++)
        r->sites[i] = t[i].site;
    free(t);
    return 0;
}

static double plan_units(size_t sites, double alpha, double power)
{
    if (sites < 1)
        sites = 1;
    double za = norm_upper_inv(alpha / (double)sites), zb = norm_upper_inv(1 - power);
    /* a pure leak over the window: E g = 1, E g^2 = 6/5 (g(a) = 6a(1-a)
     * for allocation time a uniform over a unit window), so z grows as
     * sqrt(units / 1.2) */
    double s = za + zb;
    return s > 0 ? 1.2 * s * s : 1;
}

double mt_leak_plan_interval(double rate, double window_s, size_t sites, double alpha,
                             double power)
{
    if (!(rate > 0) || !(window_s > 0) || !(alpha > 0 && alpha < 1) || !(power > 0 && power < 1))
        return 0;
    return rate * window_s / plan_units(sites, alpha, power);
}

double mt_leak_min_rate(double interval, double window_s, size_t sites, double alpha,
                        double power)
{
    if (!(interval > 0) || !(window_s > 0) || !(alpha > 0 && alpha < 1) || !(power > 0 && power < 1))
        return 0;
    return plan_units(sites, alpha, power) * interval / window_s;
}

/* Tarone's rule, then Holm within the family (as compare.c's diff). */
static void choose_family(mt_leak_report *r)
{
    double *minp = malloc((r->n ? r->n : 1) * sizeof *minp);
    double thr = r->alpha;
    for (size_t i = 0; minp && i < r->n; i++)
        minp[i] = r->sites[i].units ? norm_upper(sqrt((double)r->sites[i].units)) : 1;
    if (minp) {
        for (size_t k = 1; k <= r->n; k++) {
            size_t c = 0;
            for (size_t i = 0; i < r->n; i++)
                c += minp[i] <= r->alpha / (double)k;
            if (c <= k) {
                thr = r->alpha / (double)k;
                break;
            }
        }
    }
    size_t m = 0;
    for (size_t i = 0; i < r->n; i++) {
        mt_leak_site *e = &r->sites[i];
        double mp = minp ? minp[i] : (e->units ? norm_upper(sqrt((double)e->units)) : 1);
        e->tested = e->units > 0 && mp <= thr;
        m += e->tested;
    }
    free(minp);
    double *p = malloc((m ? m : 1) * sizeof *p);
    size_t j = 0;
    for (size_t i = 0; p && i < r->n; i++)
        if (r->sites[i].tested)
            p[j++] = r->sites[i].p;
    if (p)
        mt_holm(p, m, p);
    j = 0;
    r->n_suspects = 0;
    for (size_t i = 0; i < r->n; i++) {
        mt_leak_site *e = &r->sites[i];
        if (e->tested)
            e->p_adj = p ? p[j++] : fmin(1, e->p * (double)m);
        else
            e->p_adj = 1;
        /* growth that was given back before the end (a teardown, a batch
         * finished) is not a leak: a suspect still holds at least half of
         * its highest at the end */
        e->suspect = e->tested && e->growth > 0 && e->p_adj < r->alpha &&
                     e->live_end >= 0.5 * e->live_high;
        r->n_suspects += e->suspect;
    }
    free(p);
    r->n_tested = m;
}

/* The family, the order and the smallest leak found, once the sites are in. */
static mt_leak_report *finish(mt_leak_report *r, const mt_model *m, const mt_leak_options *o)
{
    if (!r)
        return NULL;
    r->alpha = o && o->alpha > 0 ? o->alpha : 0.05;
    choose_family(r);
    if (rank_sites(r) < 0) {
        mt_leak_report_free(r);
        return NULL;
    }
    r->min_growth = mt_leak_min_rate(mt_model_bytes_per_sample(m),
                                     (double)(r->to - r->from) / 1e6,
                                     r->n_tested ? r->n_tested : 1, r->alpha, 0.8);
    return r;
}

mt_leak_report *mt_query_leaks(const mt_selection *s, const mt_leak_options *o)
{
    const mt_model *m = mt_selection_model(s);
    /* the sums a folded read makes, from the model's allocations */
    mt_leak_fold *f = mt_leak_fold_new(mt_model_end(m), o);
    if (!f)
        return NULL;
    const mt_alloc *allocs = mt_model_allocs(m);
    size_t n_allocs = mt_model_n_allocs(m);
    for (size_t i = 0; i < n_allocs; i++) {
        if (mt_selection_has(s, i) &&
            mta_leak_fold_add(f, mt_selection_stack_of(s, i), &allocs[i], i) < 0) {
            mt_leak_fold_free(f);
            return NULL;
        }
    }
    mt_leak_report *r = finish(mta_leak_fold_sites(f, s, 0), m, o);
    mt_leak_fold_free(f);
    return r;
}

mt_leak_report *mt_query_leaks_fold(const mt_selection *s, mt_leak_fold *f,
                                    const mt_leak_options *o)
{
    const mt_model *m = mt_selection_model(s);
    if (mt_model_end(m) != mt_leak_fold_end(f))
        return NULL;
    return finish(mta_leak_fold_sites(f, s, 1), m, o);
}

void mt_leak_report_free(mt_leak_report *r)
{
    if (r) {
        free(r->sites);
        free(r);
    }
}
