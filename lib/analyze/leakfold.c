/*
 * leakfold.c - what leak suspects need of a trace, summed per stack while
 * it is read (or from a whole model's allocations), so that `leaks` folds:
 * per stack node its samples, lost and live-at-end samples, and in a hash
 * table the samples of each grid unit (the grid interval a block was
 * allocated in and the one it was freed in) and of each distinct observed
 * lifetime up to the window's length (the Kaplan-Meier points); longer
 * ones only count as at risk. Memory: stacks x units used + distinct short
 * lifetimes per stack, not one record per allocation. Every sum is of
 * integer samples, so the order the blocks come in (file order, collection
 * order) cannot change a result: both routes give the same bytes. Also
 * the test of one site from such sums (the slope on the grid, its error,
 * Kaplan-Meier), which mt_leak_test (leaks.c) uses on a site's blocks.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "memtrace/stream.h"
#include "leakfold.h"
#include "normal.h"
#include "select.h"

enum { K_UNIT, K_DIED, K_CENSORED };

typedef struct lnode {
    uint64_t samples, lost, live, beyond, beyond_n;
    uint64_t first_seq;          /* UINT64_MAX: no allocation yet */
} lnode;

typedef struct lent {
    uint64_t a;                  /* (node << 2 | kind) + 1; 0: empty */
    uint64_t b;                  /* unit key or lifetime */
    uint64_t samples;
} lent;

struct mt_leak_fold {
    mt_timedelta from, to;
    lnode *nodes;
    size_t n_nodes;
    lent *tab;
    size_t cap, used;            /* cap a power of two */
};

int mta_leak_grid_index(mt_timedelta from, mt_timedelta to, mt_timedelta t)
{
    if (t == MT_TIME_NEVER || t >= to)
        return MTA_LEAK_GRID;
    if (t <= from)
        return 0;
    double h = (double)(to - from) / MTA_LEAK_GRID;
    double x = __builtin_ceil((double)(t - from) / h - 0.5);
    return x < 0 ? 0 : x > MTA_LEAK_GRID ? MTA_LEAK_GRID : (int)x;
}

/* The grid: point j at from + (j + 1/2) h; prefix[j] = c_0 + ... + c_{j-1}. */
typedef struct leak_grid {
    mt_timedelta from, to;
    double h;
    double prefix[MTA_LEAK_GRID + 1];
} leak_grid;

static void grid_init(leak_grid *gr, mt_timedelta from, mt_timedelta to)
{
    gr->from = from;
    gr->to = to;
    gr->h = (double)(to - from) / MTA_LEAK_GRID;
    double mean = (MTA_LEAK_GRID - 1) / 2.0, ss = 0;
    for (int j = 0; j < MTA_LEAK_GRID; j++)
        ss += (j - mean) * (j - mean);
    /* slope per microsecond: the grid's step is h microseconds */
    gr->prefix[0] = 0;
    for (int j = 0; j < MTA_LEAK_GRID; j++)
        gr->prefix[j + 1] = gr->prefix[j] + (j - mean) / (ss * gr->h);
    gr->prefix[MTA_LEAK_GRID] = 0;   /* exactly: the c_j sum to zero */
}


/* Kaplan-Meier survival at the window's length of the points pts[0..n)
 * (all of them at most that long, sorted) and beyond_n points longer
 * (beyond bytes): the weight at risk from each point on is summed from the
 * end, so that rounding never leaves more deaths than blocks at risk. */
static double km_survival(const mta_leak_km *pts, size_t n, double beyond, uint64_t beyond_n)
{
    if (n + beyond_n == 0)
        return NAN;
    double *risk = malloc((n + 1) * sizeof *risk);
    if (!risk)
        return NAN;
    risk[n] = beyond;
    for (size_t i = n; i > 0; i--)
        risk[i - 1] = risk[i] + pts[i - 1].weight;
    double s = 1;
    size_t i = 0;
    while (i < n) {
        double t = pts[i].time, died = 0, at_risk = risk[i];
        while (i < n && pts[i].time == t) {
            if (pts[i].event)
                died += pts[i].weight;
            i++;
        }
        if (at_risk > 0)
            s *= died >= at_risk ? 0 : 1 - died / at_risk;
    }
    free(risk);
    /* nothing watched past the window's length: unknown, unless every
     * block already ended */
    if (beyond_n == 0 && s > 0)
        return NAN;
    return s;
}

void mta_leak_site_test(const mta_leak_unit *u, size_t nu, const mta_leak_km *km, size_t nk,
                        double beyond_bytes, uint64_t beyond_n, double live_end,
                        mt_timedelta from, mt_timedelta to, mt_leak_site *out)
{
    leak_grid gr;
    grid_init(&gr, from, to);
    double slope = 0, var = 0, level[MTA_LEAK_GRID + 1] = {0};
    uint64_t units = 0;
    for (size_t i = 0; i < nu; i++) {
        int ja = (int)(u[i].key / (MTA_LEAK_GRID + 1)), jf = (int)(u[i].key % (MTA_LEAK_GRID + 1));
        double w = u[i].bytes, g = gr.prefix[jf] - gr.prefix[ja];
        level[ja] += w;
        level[jf] -= w;
        slope += w * g;
        if (g != 0) {
            var += w * w * g * g;
            units++;
        }
    }
    /* the site's highest live bytes on the grid (memory live over the
     * whole window counts: it is part of what is held) */
    double high = 0, run = 0;
    for (int j = 0; j < MTA_LEAK_GRID; j++) {
        run += level[j];
        if (run > high)
            high = run;
    }
    out->live_high = high;
    /* per microsecond -> per second */
    out->growth = slope * 1e6;
    out->growth_se = sqrt(var) * 1e6;
    out->z = out->growth_se > 0 ? out->growth / out->growth_se : 0;
    out->p = out->growth_se > 0 ? mt_norm_upper(out->z) : 1;
    out->p_adj = out->p;
    out->units = units;
    out->live_end = live_end;
    out->kept = km_survival(km, nk, beyond_bytes, beyond_n);
}


mt_leak_fold *mt_leak_fold_new(mt_timedelta end, const mt_leak_options *o)
{
    mt_timedelta from = o && o->from != MT_TIME_NEVER ? o->from : end / 2;
    if (from < 0)
        from = 0;
    if (from >= end)
        return NULL;
    mt_leak_fold *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->from = from;
    f->to = end;
    return f;
}

static int no_event(void *ctx, mt_timedelta t, uint64_t seq, uint64_t samples, int collect,
                    mt_timedelta alloc_time)
{
    (void)ctx, (void)t, (void)seq, (void)samples, (void)collect, (void)alloc_time;
    return 0;
}

mt_leak_fold *mt_leak_fold_plan(const char *const *paths, size_t n, int by_process,
                                const mt_leak_options *o)
{
    /* the end by the codec alone (about the time of reading the file):
     * one file that can be read again, whose times never go back */
    mt_scan_result sr;
    if (n != 1 || by_process || !mt_read_regular(paths, 1) || (mt_read_forced() & MT_ROUTE_WHOLE) ||
        mt_scan_events(paths[0], no_event, NULL, NULL, NULL, &sr, NULL) != 0 || !sr.monotone)
        return NULL;
    return mt_leak_fold_new(sr.end, o);
}

void mt_leak_fold_free(mt_leak_fold *f)
{
    if (f) {
        free(f->nodes);
        free(f->tab);
        free(f);
    }
}

void mt_leak_fold_reset(void *fold)
{
    mt_leak_fold *f = fold;
    free(f->nodes);
    free(f->tab);
    f->nodes = NULL;
    f->tab = NULL;
    f->n_nodes = f->cap = f->used = 0;
}

mt_timedelta mt_leak_fold_end(const mt_leak_fold *f)
{
    return f->to;
}

static lnode *node_of(mt_leak_fold *f, mt_node_id node)
{
    if (node >= f->n_nodes) {
        size_t n = f->n_nodes ? f->n_nodes : 1024;
        while (n <= node)
            n *= 2;
        lnode *v = realloc(f->nodes, n * sizeof *v);
        if (!v)
            return NULL;
        memset(v + f->n_nodes, 0, (n - f->n_nodes) * sizeof *v);
        for (size_t i = f->n_nodes; i < n; i++)
            v[i].first_seq = UINT64_MAX;
        f->nodes = v;
        f->n_nodes = n;
    }
    return &f->nodes[node];
}

static size_t slot(const lent *tab, size_t cap, uint64_t a, uint64_t b)
{
    size_t i = (size_t)mt_hash_mix(mt_hash_mix(mt_hash_seed(), a), b) & (cap - 1);
    while (tab[i].a && (tab[i].a != a || tab[i].b != b))
        i = (i + 1) & (cap - 1);
    return i;
}

static int put(mt_leak_fold *f, mt_node_id node, int kind, uint64_t b, uint64_t samples)
{
    if (2 * (f->used + 1) > f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 4096;
        lent *t = calloc(cap, sizeof *t);
        if (!t)
            return -1;
        for (size_t i = 0; i < f->cap; i++)
            if (f->tab[i].a)
                t[slot(t, cap, f->tab[i].a, f->tab[i].b)] = f->tab[i];
        free(f->tab);
        f->tab = t;
        f->cap = cap;
    }
    uint64_t a = ((uint64_t)node << 2 | (uint64_t)kind) + 1;
    lent *e = &f->tab[slot(f->tab, f->cap, a, b)];
    if (!e->a) {
        e->a = a;
        e->b = b;
        f->used++;
    }
    e->samples += samples;
    return 0;
}

int mta_leak_fold_add(mt_leak_fold *f, mt_node_id node, const mt_alloc *a, uint64_t seq)
{
    lnode *nd = node_of(f, node);
    if (!nd)
        return -1;
    uint64_t n = a->n_samples;
    nd->samples += n;
    if (a->verdict == MT_VERDICT_LOST)
        nd->lost += n;
    if (seq < nd->first_seq)
        nd->first_seq = seq;
    mt_timedelta to = f->to;
    if (a->time <= to && (a->collect == MT_TIME_NEVER || a->collect > to))
        nd->live += n;
    int ja = mta_leak_grid_index(f->from, to, a->time);
    int jf = mta_leak_grid_index(f->from, to, a->collect);
    if (jf > ja && put(f, node, K_UNIT, (uint64_t)(ja * (MTA_LEAK_GRID + 1) + jf), n) < 0)
        return -1;
    if (a->time <= to) {
        int freed = a->collect != MT_TIME_NEVER && a->collect <= to;
        mt_timedelta life = (freed ? a->collect : to) - a->time;
        if (life <= to - f->from) {
            if (put(f, node, freed ? K_DIED : K_CENSORED, (uint64_t)life, n) < 0)
                return -1;
        } else {
            nd->beyond += n;
            nd->beyond_n++;
        }
    }
    return 0;
}

int mt_leak_fold_alloc(void *fold, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    (void)m;
    return mta_leak_fold_add(fold, a->stack, a, seq);
}

/* ------------------------------------------------------------------------ */
/* From the sums to the sites                                                */

typedef struct nsite {
    uint64_t key;                /* func << 32 | line, UINT64_MAX: no stack */
    mt_node_id node, sel;
} nsite;

/* Sites in order of name (function, file, line): the order rows that rank
 * equal keep, the same whichever way the trace was read (function ids
 * follow the reading). */
static int by_name(const void *x, const void *y, void *ctx)
{
    const nsite *a = x, *b = y;
    const mt_model *m = ctx;
    if (a->key != b->key) {
        if (a->key == UINT64_MAX || b->key == UINT64_MAX)
            return a->key == UINT64_MAX ? 1 : -1;
        const mt_func *fa = &mt_model_funcs(m)[a->key >> 32], *fb = &mt_model_funcs(m)[b->key >> 32];
        int c = strcmp(fa->name ? fa->name : "", fb->name ? fb->name : "");
        if (!c)
            c = strcmp(fa->filename ? fa->filename : "", fb->filename ? fb->filename : "");
        if (c)
            return c;
        if ((uint32_t)a->key != (uint32_t)b->key)
            return (uint32_t)a->key < (uint32_t)b->key ? -1 : 1;
        return a->key < b->key ? -1 : 1;
    }
    return a->node < b->node ? -1 : a->node > b->node;
}

typedef struct sent {
    uint32_t site;
    uint8_t cls, kind;           /* cls 0: a unit, 1: a Kaplan-Meier point */
    uint64_t b, samples;
} sent;

static int by_entry(const void *x, const void *y)
{
    const sent *a = x, *b = y;
    if (a->site != b->site)
        return a->site < b->site ? -1 : 1;
    if (a->cls != b->cls)
        return a->cls < b->cls ? -1 : 1;
    if (a->b != b->b)
        return a->b < b->b ? -1 : 1;
    return a->kind < b->kind ? -1 : a->kind > b->kind;
}

/* The entries of every counted node, with its site's index (site_of:
 * node -> index + 1, 0: not counted), sorted; NULL when out of memory. */
static sent *entries(const mt_leak_fold *f, const uint32_t *site_of, size_t *n)
{
    sent *e = malloc((f->used ? f->used : 1) * sizeof *e);
    if (!e)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < f->cap; i++) {
        const lent *t = &f->tab[i];
        if (!t->a)
            continue;
        uint64_t node = (t->a - 1) >> 2;
        int kind = (int)((t->a - 1) & 3);
        if (!site_of[node])
            continue;
        e[k++] = (sent){site_of[node] - 1, kind != K_UNIT, (uint8_t)kind, t->b, t->samples};
    }
    qsort(e, k, sizeof *e, by_entry);
    *n = k;
    return e;
}

/* One site's test from its entries e[0..n) (sorted, distinct). */
static int site_test(const mt_leak_fold *f, const sent *e, size_t n, double bps,
                     double beyond, uint64_t beyond_n, double live, mt_leak_site *out)
{
    size_t nu = 0;
    while (nu < n && e[nu].cls == 0)
        nu++;
    mta_leak_unit *u = malloc((nu ? nu : 1) * sizeof *u);
    mta_leak_km *km = malloc((n - nu ? n - nu : 1) * sizeof *km);
    if (!u || !km) {
        free(u);
        free(km);
        return -1;
    }
    for (size_t i = 0; i < nu; i++)
        u[i] = (mta_leak_unit){(uint32_t)e[i].b, (double)e[i].samples * bps};
    for (size_t i = nu; i < n; i++)
        km[i - nu] = (mta_leak_km){(double)e[i].b, (double)e[i].samples * bps,
                                   e[i].kind == K_DIED};
    mta_leak_site_test(u, nu, km, n - nu, beyond, beyond_n, live, f->from, f->to, out);
    free(u);
    free(km);
    return 0;
}

/* The nodes with allocations the selection counts, with their site's key
 * and selection node, in order of site name; their number. */
static size_t counted_nodes(const mt_leak_fold *f, const mt_selection *s, int fold, nsite *ns)
{
    const mt_model *m = mt_selection_model(s);
    const mt_node *sn = mt_selection_nodes(s);
    const mt_frame *frames = mt_model_frames(m);
    size_t k = 0;
    for (size_t i = 0; i < f->n_nodes; i++) {
        if (f->nodes[i].first_seq == UINT64_MAX)
            continue;
        mt_node_id sel = (mt_node_id)i;
        if (fold) {
            if (i >= mt_model_n_nodes(m) || !mta_fold_counts(s, (mt_node_id)i))
                continue;
            sel = s->map ? s->map[i] : (mt_node_id)i;
        }
        uint64_t key = UINT64_MAX;
        if (sel) {
            const mt_frame *fr = &frames[sn[sel].frame];
            key = (uint64_t)fr->func << 32 | fr->line;
        }
        ns[k++] = (nsite){key, (mt_node_id)i, sel};
    }
    qsort_r(ns, k, sizeof *ns, by_name, (void *)m);
    return k;
}

mt_leak_report *mta_leak_fold_sites(mt_leak_fold *f, const mt_selection *s, int fold)
{
    const mt_model *m = mt_selection_model(s);
    const mt_node *sn = mt_selection_nodes(s);
    double bps = mt_model_bytes_per_sample(m);
    int has_verdicts = mt_model_scan(m, NULL);
    mt_leak_report *r = calloc(1, sizeof *r);
    nsite *ns = malloc((f->n_nodes ? f->n_nodes : 1) * sizeof *ns);
    uint32_t *site_of = calloc(f->n_nodes ? f->n_nodes : 1, sizeof *site_of);
    sent *e = NULL;
    if (!r || !ns || !site_of)
        goto fail;
    r->from = f->from;
    r->to = f->to;
    size_t k = counted_nodes(f, s, fold, ns);
    size_t n_sites = 0;
    for (size_t i = 0; i < k; i++) {
        n_sites += i == 0 || ns[i].key != ns[i - 1].key;
        site_of[ns[i].node] = (uint32_t)n_sites;
    }
    r->sites = calloc(n_sites ? n_sites : 1, sizeof *r->sites);
    size_t ne = 0;
    e = r->sites ? entries(f, site_of, &ne) : NULL;
    if (!e)
        goto fail;
    size_t j = 0;
    for (size_t i = 0; i < k;) {
        uint64_t samples = 0, lost = 0, live = 0, beyond = 0, beyond_n = 0, first = UINT64_MAX;
        mt_frame_id frame = MT_NO_FRAME;
        size_t i0 = i;
        for (; i < k && ns[i].key == ns[i0].key; i++) {
            const lnode *nd = &f->nodes[ns[i].node];
            samples += nd->samples;
            lost += nd->lost;
            live += nd->live;
            beyond += nd->beyond;
            beyond_n += nd->beyond_n;
            if (ns[i].key != UINT64_MAX && nd->first_seq < first) {
                first = nd->first_seq;
                frame = sn[ns[i].sel].frame;
            }
        }
        size_t site = r->n, j0 = j;
        /* merge the nodes' entries of one unit or lifetime */
        size_t w = j0;
        for (; j < ne && e[j].site == site; j++) {
            if (w > j0 && e[w - 1].cls == e[j].cls && e[w - 1].kind == e[j].kind &&
                e[w - 1].b == e[j].b)
                e[w - 1].samples += e[j].samples;
            else
                e[w++] = e[j];
        }
        mt_leak_site *out = &r->sites[r->n++];
        if (site_test(f, e + j0, w - j0, bps, (double)beyond * bps, beyond_n, (double)live * bps,
                      out) < 0)
            goto fail;
        out->frame = frame;
        out->samples = samples;
        out->lost = has_verdicts ? (double)lost * bps : __builtin_nan("");
    }
    r->n_sites = r->n;
    free(ns);
    free(site_of);
    free(e);
    return r;
fail:
    if (r)
        free(r->sites);
    free(r);
    free(ns);
    free(site_of);
    free(e);
    return NULL;
}
