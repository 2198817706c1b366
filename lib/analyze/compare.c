/*
 * compare.c - the difference between two sides (two traces, or two
 * moments or windows of one trace) per site, function or call path: the
 * estimates, the standard error of the difference, the exact test of each
 * entry and Holm's correction over the entries that could be significant
 * (Tarone's rule). The tests themselves are in signif.c; docs/compare.md
 * explains the reasoning.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/compare.h"
#include "diffkeys.h"
#include "select.h"

mt_diff_side mt_diff_side_all(const mt_selection *sel, mt_timedelta at)
{
    mt_diff_side s = {sel, 0, MT_TIME_END, at, 0, NULL, NULL};
    return s;
}

/* Resolved side: times made concrete. */
typedef struct rside {
    const mt_diff_side *s;
    mtd_side t;
    double scale;            /* 1 / seconds, or 1 */
} rside;

static void resolve(rside *r, const mt_diff_side *s)
{
    const mt_model *m = mt_selection_model(s->sel);
    r->s = s;
    mtd_side_resolve(&r->t, s, m);
    r->scale = s->seconds > 0 ? 1 / s->seconds : 1;
}

static int func_matches(const mt_selection *s, mt_node_id node, const char *pat)
{
    if (!pat)
        return 1;
    if (node == 0)
        return 0;
    const mt_model *m = mt_selection_model(s);
    const mt_frame *fr = &mt_model_frames(m)[mt_selection_nodes(s)[node].frame];
    return strstr(mt_model_funcs(m)[fr->func].name, pat) != NULL;
}

static int site_matches(const mt_selection *s, size_t i, const char *pat)
{
    return !pat || func_matches(s, mt_selection_stack_of(s, i), pat);
}

/* Raw value of one allocation under the metric (before any per-second
 * scale), if it belongs to the side; 0 otherwise. */
static double member_value(const rside *r, const mt_model *m, const mt_alloc *a, size_t i,
                           mt_metric metric)
{
    if (!mtd_member(&r->t, a, mtd_is_live_metric(metric)))
        return 0;
    if (!site_matches(r->s->sel, i, r->s->site))
        return 0;
    return mtd_value(&m->scale, a, metric);
}

/* The selection node of a folded model's node n; *ok: n counts on a side
 * (it holds allocations of the selection: the filter's stack clauses) and
 * its site matches. */
static mt_node_id fold_node(const mt_selection *s, mt_node_id n, const char *site, int *ok)
{
    mt_node_id sn = s->map ? s->map[n] : n;
    *ok = mta_fold_counts(s, n) && func_matches(s, sn, site);
    return sn;
}

/* One pass over a selection's allocations. base, new_: the sides this
 * selection feeds (either may be NULL: that side is another selection). */
static int pass(entry_tab *t, str_pool *pool, paths *ps, acc *total, const mt_selection *s,
                const rside *base, const rside *new_, mt_metric metric, mt_diff_key kind)
{
    const mt_model *m = mt_selection_model(s);
    const mt_diff_fold *fold = (base ? base : new_)->s->fold;
    size_t nn = mt_selection_n_nodes(s), na = mt_model_n_allocs(m);
    const mt_alloc *allocs = mt_model_allocs(m);
    uint32_t *cache = malloc((nn ? nn : 1) * sizeof *cache);
    uint32_t *np = kind == MT_DIFF_PATH ? mtd_node_paths(ps, pool, s) : NULL;
    if (!cache || (kind == MT_DIFF_PATH && !np)) {
        free(cache);
        free(np);
        return -1;
    }
    memset(cache, 0xff, (nn ? nn : 1) * sizeof *cache);
    /* whole model: each allocation; folded: each model node's sums */
    size_t n_items = fold ? mtd_fold_n_nodes(fold) : na;
    for (size_t i = 0; i < n_items; i++) {
        mt_node_id node;
        acc one;
        const acc *add;
        if (fold) {
            add = mtd_fold_node(fold, i);
            if (!add)
                continue;
            int ok;
            node = fold_node(s, (mt_node_id)i, NULL, &ok);
            if (!ok)
                continue;
        } else {
            if (!mt_selection_has(s, i))
                continue;
            const mt_alloc *a = &allocs[i];
            double vb = base ? member_value(base, m, a, i, metric) : 0;
            double vn = new_ ? member_value(new_, m, a, i, metric) : 0;
            if (vb == 0 && vn == 0)
                continue;
            memset(&one, 0, sizeof one);
            mtd_part_add(&one.p[vb && vn ? 2 : vb ? 0 : 1], vb ? vb : vn,
                         a->n_samples ? a->n_samples : 1);
            add = &one;
            node = mt_selection_stack_of(s, i);
        }
        if (cache[node] == UINT32_MAX) {
            int64_t e = np ? mtd_tab_add_path(t, ps, np[node]) : mtd_entry_of(t, pool, s, node, kind);
            if (e < 0) {
                free(cache);
                free(np);
                return -1;
            }
            cache[node] = (uint32_t)e;
        }
        mtd_acc_merge(&t->a[cache[node]], add);
        mtd_acc_merge(total, add);
    }
    free(cache);
    free(np);
    return 0;
}

/* What an entry's parts add up to on each side, scaled: the estimates'
 * sums [0] base, [1] new; and the two parts of the difference: [0] what
 * only (or more) the base has, [1] what the new has. */
typedef struct flat {
    double v[2], var[2];
    uint64_t k[2];
    double dv[2], dvar[2];
    uint64_t dk[2];
} flat;

static void side_sum(const acc *a, int side, double scale, double *v, double *var, uint64_t *k)
{
    mtd_sum sv = a->p[side].v, sq = a->p[side].sq;
    mtd_sum_merge(&sv, &a->p[2].v);
    mtd_sum_merge(&sq, &a->p[2].sq);
    *v = scale * mtd_sum_value(&sv);
    *var = scale * scale * mtd_sum_value(&sq);
    *k = a->p[side].k + a->p[2].k;
}

static void flatten(const acc *a, double sb, double sn, flat *f)
{
    side_sum(a, 0, sb, &f->v[0], &f->var[0], &f->k[0]);
    side_sum(a, 1, sn, &f->v[1], &f->var[1], &f->k[1]);
    double sc[2] = {sb, sn};
    for (int j = 0; j < 2; j++) {
        f->dv[j] = sc[j] * mtd_sum_value(&a->p[j].v);
        f->dvar[j] = sc[j] * sc[j] * mtd_sum_value(&a->p[j].sq);
        f->dk[j] = a->p[j].k;
    }
    /* on both sides: only the difference of the scales is left */
    double c = sn - sb;
    if (a->p[2].k && c != 0) {
        int j = c > 0;
        c = fabs(c);
        f->dv[j] += c * mtd_sum_value(&a->p[2].v);
        f->dvar[j] += c * c * mtd_sum_value(&a->p[2].sq);
        f->dk[j] += a->p[2].k;
    }
}

static mt_estimate estimate(double v, double var, uint64_t k, double unit_other, double ref,
                            double ref_other)
{
    mt_estimate e = {v, var, 0, k};
    if (v > 0 && var > 0)
        e.unit = var / v;
    else if (unit_other > 0 && ref_other > 0)
        e.unit = unit_other * ref / ref_other;
    else
        e.unit = ref;
    return e;
}

/* Fill an entry's estimates and test from its accumulator. ref[0..1]: the
 * weight of one byte sample on each side (the unit of an empty side). */
static void finish_entry(mt_diff_entry *e, const flat *a, const double ref[2])
{
    double u0 = a->v[0] > 0 && a->var[0] > 0 ? a->var[0] / a->v[0] : 0;
    double u1 = a->v[1] > 0 && a->var[1] > 0 ? a->var[1] / a->v[1] : 0;
    e->base = estimate(a->v[0], a->var[0], a->k[0], u1, ref[0], ref[1]);
    e->new_ = estimate(a->v[1], a->var[1], a->k[1], u0, ref[1], ref[0]);
    double du0 = a->dv[0] > 0 && a->dvar[0] > 0 ? a->dvar[0] / a->dv[0] : 0;
    double du1 = a->dv[1] > 0 && a->dvar[1] > 0 ? a->dvar[1] / a->dv[1] : 0;
    mt_estimate minus = estimate(a->dv[0], a->dvar[0], a->dk[0], du1, ref[0], ref[1]);
    mt_estimate plus = estimate(a->dv[1], a->dvar[1], a->dk[1], du0, ref[1], ref[0]);
    e->delta = e->new_.value - e->base.value;
    double var = a->dvar[0] + a->dvar[1];
    /* an empty part still has the resolution of one sample */
    if (a->dk[0] == 0)
        var += minus.unit * minus.unit;
    if (a->dk[1] == 0)
        var += plus.unit * plus.unit;
    e->se = sqrt(var);
    e->z = e->se > 0 ? e->delta / e->se : 0;
    double k0 = a->dv[0] > 0 ? a->dv[0] * a->dv[0] / a->dvar[0] : 0;
    double k1 = a->dv[1] > 0 ? a->dv[1] * a->dv[1] / a->dvar[1] : 0;
    e->samples = k0 + k1;
    e->p = mt_test_equal(&minus, &plus);
    e->p_adj = 1;
    e->tested = 0;
    e->significant = 0;
    /* the smallest p-value this many samples could give: all on one side */
    double p0 = minus.unit / (minus.unit + plus.unit);
    double n = e->samples;
    double lo = n > 0 ? fmin(pow(p0, n), pow(1 - p0, n)) : 1;
    e->z = e->se > 0 ? e->delta / e->se : 0;
    /* stash the minimum in p_adj until the family is chosen */
    e->p_adj = fmin(1, 2 * lo);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Tarone's rule: the smallest K such that at most K entries could reach
 * p <= alpha / K; the family is those entries. Then Holm within it. */
static void choose_family(mt_diff *d)
{
    size_t n = d->n;
    double *minp = malloc((n ? n : 1) * sizeof *minp);
    double thr = d->opts.alpha;
    if (minp) {
        for (size_t i = 0; i < n; i++)
            minp[i] = d->entries[i].p_adj;
        qsort(minp, n, sizeof *minp, cmp_double);
        for (size_t k = 1; k <= n; k++) {
            double t = d->opts.alpha / (double)k;
            size_t c = 0;   /* entries with minp <= t (sorted: a prefix) */
            size_t lo = 0, hi = n;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (minp[mid] <= t)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            c = lo;
            if (c <= k) {
                thr = t;
                break;
            }
        }
        free(minp);
    } /* out of memory: every entry that could be significant alone */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        mt_diff_entry *e = &d->entries[i];
        e->tested = e->samples > 0 && e->p_adj <= thr;
        e->p_adj = 1;
        m += e->tested;
    }
    double *p = malloc((m ? m : 1) * sizeof *p);
    if (p) {
        size_t j = 0;
        for (size_t i = 0; i < n; i++)
            if (d->entries[i].tested)
                p[j++] = d->entries[i].p;
        mt_holm(p, m, p);
        j = 0;
        for (size_t i = 0; i < n; i++)
            if (d->entries[i].tested)
                d->entries[i].p_adj = p[j++];
        free(p);
    } else {
        for (size_t i = 0; i < n; i++)
            if (d->entries[i].tested)
                d->entries[i].p_adj = fmin(1, d->entries[i].p * (double)m);
    }
    d->n_tested = m;
    d->n_significant = 0;
    for (size_t i = 0; i < n; i++) {
        mt_diff_entry *e = &d->entries[i];
        e->significant = e->tested && e->p_adj < d->opts.alpha;
        d->n_significant += e->significant;
    }
}

static int by_signif(const void *x, const void *y)
{
    const mt_diff_entry *a = x, *b = y;
    if (a->significant != b->significant)
        return b->significant - a->significant;
    if (a->tested != b->tested)
        return b->tested - a->tested;
    if (a->p != b->p)
        return a->p < b->p ? -1 : 1;
    double za = fabs(a->z), zb = fabs(b->z);
    if (za != zb)
        return za > zb ? -1 : 1;
    if (a->name && b->name)
        return strcmp(a->name, b->name);
    return a->path < b->path ? -1 : a->path > b->path;
}

static int by_size(const void *x, const void *y)
{
    const mt_diff_entry *a = x, *b = y;
    double da = fabs(a->delta), db = fabs(b->delta);
    if (da != db)
        return da > db ? -1 : 1;
    return by_signif(x, y);
}

static int by_signif_p(const void *x, const void *y)
{
    return by_signif(*(const mt_diff_entry *const *)x, *(const mt_diff_entry *const *)y);
}

static int by_size_p(const void *x, const void *y)
{
    return by_size(*(const mt_diff_entry *const *)x, *(const mt_diff_entry *const *)y);
}

void mt_diff_sort(mt_diff *d, int size)
{
    /* sort pointers, then move each entry once: entries are large */
    mt_diff_entry **ptr = malloc((d->n ? d->n : 1) * sizeof *ptr);
    mt_diff_entry *out = malloc((d->n ? d->n : 1) * sizeof *out);
    if (!ptr || !out) {
        free(ptr);
        free(out);
        qsort(d->entries, d->n, sizeof *d->entries, size ? by_size : by_signif);
        return;
    }
    for (size_t i = 0; i < d->n; i++)
        ptr[i] = &d->entries[i];
    qsort(ptr, d->n, sizeof *ptr, size ? by_size_p : by_signif_p);
    for (size_t i = 0; i < d->n; i++)
        out[i] = *ptr[i];
    free(ptr);
    free(d->entries);
    d->entries = out;
}

static double byte_unit(const rside *r)
{
    return mt_model_bytes_per_sample(mt_selection_model(r->s->sel)) * r->scale;
}

mt_diff *mt_diff_compute(const mt_diff_side *base, const mt_diff_side *new_,
                         const mt_diff_options *o)
{
    struct diff_priv *dp = calloc(1, sizeof *dp);
    if (!dp)
        return NULL;
    mt_diff *d = &dp->d;
    d->opts = *o;
    if (!(d->opts.alpha > 0 && d->opts.alpha < 1))
        d->opts.alpha = 0.05;
    if (d->opts.metric == MT_METRIC_SAMPLES)
        d->opts.metric = MT_METRIC_ALLOC_BYTES;
    rside rb, rn;
    resolve(&rb, base);
    resolve(&rn, new_);
    d->base_at = rb.t.at;
    d->new_at = rn.t.at;
    d->same_trace = base->sel == new_->sel;
    if (d->same_trace && base->fold != new_->fold) {
        free(dp);
        return NULL; /* one trace: one collector for both sides, or none */
    }
    entry_tab t;
    acc total;
    memset(&total, 0, sizeof total);
    if (mtd_tab_init(&t) < 0) {
        free(dp);
        return NULL;
    }
    int rc;
    if (d->same_trace)
        rc = pass(&t, &dp->pool, &dp->paths, &total, base->sel, &rb, &rn, d->opts.metric, d->opts.key);
    else
        rc = pass(&t, &dp->pool, &dp->paths, &total, base->sel, &rb, NULL, d->opts.metric, d->opts.key) ||
             pass(&t, &dp->pool, &dp->paths, &total, new_->sel, NULL, &rn, d->opts.metric, d->opts.key);
    if (rc) {
        mtd_tab_free(&t, 0);
        mtd_pool_free(&dp->pool);
        mtd_paths_free(&dp->paths);
        free(dp);
        return NULL;
    }
    double ref[2] = {byte_unit(&rb), byte_unit(&rn)};
    d->n = t.n;
    d->entries = t.e;
    flat f;
    for (size_t i = 0; i < t.n; i++) {
        flatten(&t.a[i], rb.scale, rn.scale, &f);
        finish_entry(&d->entries[i], &f, ref);
    }
    flatten(&total, rb.scale, rn.scale, &f);
    finish_entry(&d->total, &f, ref);
    d->total.name = strdup("(total)");
    d->total.function = d->total.name;
    d->total.file = "";
    d->total.p_adj = d->total.p;
    d->total.tested = 0;
    d->total.significant = 0;
    mtd_tab_free(&t, 1);
    if (!d->total.name) {
        mt_diff_free(d);
        return NULL;
    }
    choose_family(d);
    mt_diff_sort(d, 0);
    return d;
}

void mt_diff_free(mt_diff *d)
{
    if (!d)
        return;
    struct diff_priv *dp = (struct diff_priv *)d;
    for (size_t i = 0; i < d->n; i++)
        free(d->entries[i].name);
    free(d->entries);
    free(d->total.name);
    mtd_pool_free(&dp->pool);
    mtd_paths_free(&dp->paths);
    free(dp);
}

mt_estimate mt_diff_estimate(const mt_diff_side *s, mt_metric metric)
{
    rside r;
    resolve(&r, s);
    const mt_selection *sel = s->sel;
    const mt_model *m = mt_selection_model(sel);
    size_t na = mt_model_n_allocs(m);
    const mt_alloc *allocs = mt_model_allocs(m);
    if (metric == MT_METRIC_SAMPLES)
        metric = MT_METRIC_ALLOC_BYTES;
    acc sum;
    memset(&sum, 0, sizeof sum);
    if (s->fold) {
        for (size_t i = 0; i < mtd_fold_n_nodes(s->fold); i++) {
            const acc *a = mtd_fold_node(s->fold, i);
            int ok;
            if (a) {
                fold_node(sel, (mt_node_id)i, s->site, &ok);
                if (ok)
                    mtd_acc_merge(&sum, a);
            }
        }
    } else {
        for (size_t i = 0; i < na; i++) {
            if (!mt_selection_has(sel, i))
                continue;
            double v = member_value(&r, m, &allocs[i], i, metric);
            if (v)
                mtd_part_add(&sum.p[0], v, allocs[i].n_samples ? allocs[i].n_samples : 1);
        }
    }
    /* a collector's side may be its base or its new one: one of them is empty */
    int side = sum.p[0].k ? 0 : 1;
    mt_estimate e = {0, 0, 0, 0};
    side_sum(&sum, side, r.scale, &e.value, &e.var, &e.samples);
    e.unit = e.value > 0 && e.var > 0 ? e.var / e.value : byte_unit(&r);
    return e;
}

typedef struct peak_ev {
    mt_timedelta t;
    int64_t d;               /* samples added (alloc) or removed (collect) */
} peak_ev;

static int cmp_ev(const void *x, const void *y)
{
    const peak_ev *a = x, *b = y;
    return a->t < b->t ? -1 : a->t > b->t;
}

mt_timedelta mt_diff_side_peak(const mt_diff_side *s)
{
    mt_peak p;
    return mt_diff_side_peak_est(s, &p);
}

mt_timedelta mt_diff_side_peak_est(const mt_diff_side *s, mt_peak *out)
{
    rside r;
    resolve(&r, s);
    const mt_selection *sel = s->sel;
    const mt_model *m = mt_selection_model(sel);
    if (s->fold) {
        mt_model_peak(m, out);
        return mt_model_resolve_time(m, MT_TIME_PEAK); /* the caller's word: nothing filtered */
    }
    if (!s->site && s->from == 0 && s->to == MT_TIME_END) {
        /* the selection's own curve has it, exactly */
        mt_curve *c = mt_query_curve(sel, 0, MT_TIME_END, 1);
        if (c) {
            mt_timedelta t = c->peak_filtered_time;
            *out = c->peak_filtered_est;
            mt_curve_free(c);
            return t;
        }
    }
    size_t na = mt_model_n_allocs(m), n = 0;
    const mt_alloc *allocs = mt_model_allocs(m);
    peak_ev *ev = malloc((2 * na + 1) * sizeof *ev);
    mta_peak_acc *acc = malloc(sizeof *acc);
    if (!ev || !acc) {
        free(ev);
        free(acc);
        mt_model_peak(m, out);
        return mt_model_resolve_time(m, MT_TIME_PEAK);
    }
    mta_peak_init(acc);
    r.t.at = MT_TIME_NEVER - 1;   /* membership by window and site only */
    for (size_t i = 0; i < na; i++) {
        if (!mt_selection_has(sel, i) || !member_value(&r, m, &allocs[i], i, MT_METRIC_ALLOC_BYTES))
            continue;
        ev[n].t = allocs[i].time;
        ev[n++].d = (int64_t)allocs[i].n_samples;
        if (allocs[i].collect != MT_TIME_NEVER) {
            ev[n].t = allocs[i].collect;
            ev[n++].d = -(int64_t)allocs[i].n_samples;
        }
    }
    qsort(ev, n, sizeof *ev, cmp_ev);
    int64_t live = 0, best = 0;
    mt_timedelta at = 0;
    for (size_t i = 0; i < n;) {
        mt_timedelta t = ev[i].t;
        int64_t before = live;
        uint64_t allocated = 0;
        for (; i < n && ev[i].t == t; i++) {
            live += ev[i].d;
            allocated += ev[i].d > 0 ? (uint64_t)ev[i].d : 0;
        }
        if (live > best) {
            best = live;
            at = t;
        }
        mta_peak_time(acc, t, before, live, allocated);
    }
    mta_peak_result(acc, m->scale.bytes_per_sample, m->scale.sample_rate, out);
    free(ev);
    free(acc);
    return at;
}

static int werr(char **err, const char *text, const char *why)
{
    if (err) {
        size_t n = strlen(text) + strlen(why) + 64;
        *err = malloc(n);
        if (*err)
            snprintf(*err, n, "window %s: %s", text, why);
    }
    return -1;
}

int mt_diff_parse_window(const char *text, mt_diff_side *side, int *is_range, char **err)
{
    char *e = NULL;
    const char *dash = strchr(text, '-');
    if (err)
        *err = NULL;
    if (!dash) {
        *is_range = 0;
        if (mt_parse_time(text, &side->at, &e) < 0) {
            werr(err, text, e ? e : "bad time");
            free(e);
            return -1;
        }
        return 0;
    }
    *is_range = 1;
    side->from = 0;
    side->to = MT_TIME_END;
    char buf[128];
    size_t la = (size_t)(dash - text);
    if (la >= sizeof buf)
        return werr(err, text, "too long");
    memcpy(buf, text, la);
    buf[la] = 0;
    if ((la && mt_parse_time(buf, &side->from, &e) < 0) ||
        (dash[1] && mt_parse_time(dash + 1, &side->to, &e) < 0)) {
        werr(err, text, e ? e : "bad time");
        free(e);
        return -1;
    }
    if (side->from == MT_TIME_PEAK || side->to == MT_TIME_PEAK)
        return werr(err, text, "a range takes times, not peak");
    if (side->from == MT_TIME_END || (side->to != MT_TIME_END && side->to < side->from))
        return werr(err, text, "the range is empty");
    return 0;
}
