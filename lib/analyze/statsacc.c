/*
 * statsacc.c - the figures of mt_query_stats and the histograms of
 * mt_query_histogram built from finished allocations one at a time
 * (mt_stats_acc, memtrace/stream.h), in any order: sums, per-source costs,
 * power-of-two buckets, and for the exact weighted median of lifetimes the
 * samples per distinct lifetime: in counters per microsecond for the
 * lifetimes under 2^DIRECT_BITS us (allocated 4096 at a time, where used,
 * with the sum of each 4096), in a hash table for the longer ones of freed
 * blocks, and for the blocks never freed (one entry each at most: they are
 * the blocks live at the end) in an array, where runs of one lifetime share
 * an entry (they come in allocation order from a folded model: lifetimes
 * that never increase). The whole model's queries (hist.c) are this
 * accumulator fed the selection's allocations, with every lifetime in one
 * list instead (MTA_STATS_LIST, statsacc.h) and the median by quickselect.
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "scale.h"
#include "statsacc.h"
#include "verdict.h"

#define NBUCKETS 66
#define CHUNK_BITS 12
#define DIRECT_BITS 22                       /* about 4 s */
#define NCHUNKS (1u << (DIRECT_BITS - CHUNK_BITS))

typedef struct life_slot {
    uint64_t life;
    uint64_t samples;        /* 0: empty slot */
} life_slot;

struct mt_stats_acc {
    mt_timedelta live_at;
    unsigned want;               /* MTA_STATS_* */
    mt_cost total, by_source[3];
    double promoted_bytes, collected_bytes, never_collected_bytes;
    double life_sum, life_w;
    double vsum[4];              /* leak verdicts (mta_verdict_add) */
    uint64_t vn[2];
    mt_cost size_cost[NBUCKETS], size_src[NBUCKETS * 3];
    mt_cost life_cost[NBUCKETS], life_src[NBUCKETS * 3], never;
    size_t size_max, life_max;   /* highest bucket used + 1 */
    uint64_t *direct[NCHUNKS];   /* samples per lifetime under 2^DIRECT_BITS us */
    uint64_t chunk_sum[NCHUNKS]; /* the samples of each direct[] chunk */
    life_slot *lives;            /* samples per distinct longer lifetime */
    size_t mask, n_lives;
    life_slot *never_v;          /* longer lifetimes of blocks never freed */
    size_t n_never, cap_never;
    mt_scale bound;              /* mt_stats_acc_bind's copy of the scale */
    life_slot *all;              /* MTA_STATS_LIST: every lifetime, in order */
    size_t n_all, cap_all;
    int median_set;              /* mta_stats_acc_median's */
    double median;
};

mt_stats_acc *mta_stats_acc_new_for(mt_timedelta live_at, unsigned want)
{
    mt_stats_acc *s = calloc(1, sizeof *s);
    if (s) {
        s->live_at = live_at;
        s->want = want;
    }
    return s;
}

mt_stats_acc *mt_stats_acc_new(mt_timedelta live_at)
{
    return mta_stats_acc_new_for(live_at, MTA_STATS_ALL);
}

void mt_stats_acc_free(mt_stats_acc *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < NCHUNKS; i++)
        free(s->direct[i]);
    free(s->lives);
    free(s->never_v);
    free(s->all);
    free(s);
}

static size_t bucket_of(uint64_t v)
{
    return v == 0 ? 0 : (size_t)(64 - __builtin_clzll(v));
}

/* Appends a slot to the list *v of *n slots (room for *cap). */
static int slot_push(life_slot **v, size_t *n, size_t *cap, uint64_t life, uint64_t samples)
{
    if (*n == *cap && mta_grow((void **)v, cap, *n + 1, sizeof **v) < 0)
        return -1;
    (*v)[*n].life = life;
    (*v)[(*n)++].samples = samples;
    return 0;
}

static int lives_add(mt_stats_acc *s, uint64_t life, uint64_t samples, int never)
{
    if (s->want & MTA_STATS_LIST)
        return slot_push(&s->all, &s->n_all, &s->cap_all, life, samples);
    if (life < (1u << DIRECT_BITS)) {
        uint64_t **c = &s->direct[life >> CHUNK_BITS];
        if (!*c && !(*c = calloc(1u << CHUNK_BITS, sizeof **c)))
            return -1;
        (*c)[life & ((1u << CHUNK_BITS) - 1)] += samples;
        s->chunk_sum[life >> CHUNK_BITS] += samples;
        return 0;
    }
    if (never) {
        if (s->n_never && s->never_v[s->n_never - 1].life == life) {
            s->never_v[s->n_never - 1].samples += samples;
            return 0;
        }
        return slot_push(&s->never_v, &s->n_never, &s->cap_never, life, samples);
    }
    if (!s->lives || (s->n_lives + 1) * 2 > s->mask + 1) {
        size_t cap = s->lives ? (s->mask + 1) * 2 : 1024;
        life_slot *t = calloc(cap, sizeof *t);
        if (!t)
            return -1;
        for (size_t i = 0; s->lives && i <= s->mask; i++) {
            if (!s->lives[i].samples)
                continue;
            size_t j = (size_t)mta_hash64(s->lives[i].life) & (cap - 1);
            while (t[j].samples)
                j = (j + 1) & (cap - 1);
            t[j] = s->lives[i];
        }
        free(s->lives);
        s->lives = t;
        s->mask = cap - 1;
    }
    size_t j = (size_t)mta_hash64(life) & s->mask;
    while (s->lives[j].samples && s->lives[j].life != life)
        j = (j + 1) & s->mask;
    if (!s->lives[j].samples) {
        s->lives[j].life = life;
        s->n_lives++;
    }
    s->lives[j].samples += samples;
    return 0;
}

/* mt_stats_acc_add at scale sc, blocks never collected living to model_end. */
static int stats_add(mt_stats_acc *s, const mt_scale *sc, mt_timedelta model_end, const mt_alloc *a)
{
    mt_timedelta end = a->collect == MT_TIME_NEVER ? model_end : a->collect;
    uint64_t life = end > a->time ? (uint64_t)(end - a->time) : 0;
    /* mta_cost_of's cost, added without its zero fields (mta_cost_add_alloc) */
    mta_alloc_cost o;
    o.bytes = (double)a->n_samples * sc->bytes_per_sample;
    o.obj = mta_alloc_objects(sc, a);
    o.ov = mta_objects_var(sc, a, o.obj);
    o.samples = a->n_samples;
    o.carried = a->carried;
    o.live = mta_is_live(a, s->live_at);
    o.temp = mta_is_temporary(a);
    double alloc_bytes = o.carried ? 0 : o.bytes;
    unsigned src = a->source < 3 ? a->source : 2;
    mt_cost *t[7];   /* the sums this allocation's cost goes to */
    size_t nt = 0;
    if (s->want & MTA_STATS_TOTALS) {
        if (lives_add(s, life, a->n_samples, a->collect == MT_TIME_NEVER) < 0)
            return -1;
        t[nt++] = &s->total;
        t[nt++] = &s->by_source[src];
        if (a->promote != MT_TIME_NEVER)
            s->promoted_bytes += alloc_bytes;
        if (a->collect != MT_TIME_NEVER) {
            s->collected_bytes += alloc_bytes;
            s->life_sum += (double)(a->collect - a->time) * a->n_samples;
            s->life_w += a->n_samples;
        } else {
            s->never_collected_bytes += alloc_bytes;
        }
        mta_verdict_add(s->vsum, s->vn, sc, a);
    }
    if (s->want & MTA_STATS_SIZE) {
        size_t b = bucket_of(a->size);
        t[nt++] = &s->size_cost[b];
        t[nt++] = &s->size_src[b * 3 + src];
        if (b + 1 > s->size_max)
            s->size_max = b + 1;
    }
    if (s->want & MTA_STATS_LIFE) {
        size_t b = bucket_of(life);
        t[nt++] = &s->life_cost[b];
        t[nt++] = &s->life_src[b * 3 + src];
        if (a->collect == MT_TIME_NEVER)
            t[nt++] = &s->never;
        if (b + 1 > s->life_max)
            s->life_max = b + 1;
    }
    mta_cost_add_alloc_n(t, nt, &o);
    return 0;
}

int mt_stats_acc_add(mt_stats_acc *s, const mt_model *m, const mt_alloc *a)
{
    return stats_add(s, &m->scale, m->end, a);
}

int mt_stats_acc_bind(mt_stats_acc *s, const mt_model *m)
{
    s->bound = m->scale;
    return 0;
}

int mt_stats_acc_add_bound(mt_stats_acc *s, const mt_alloc *a, mt_timedelta end)
{
    return stats_add(s, &s->bound, end, a);
}

static mt_histogram *histogram(mt_hist_kind kind, size_t n, const mt_cost *cost,
                               const mt_cost *src, const mt_cost *never)
{
    mt_histogram *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->kind = kind;
    h->n = n ? n : 1;
    h->lo = malloc(h->n * sizeof *h->lo);
    h->hi = malloc(h->n * sizeof *h->hi);
    /* as mt_query_histogram: the arrays hold every bucket */
    h->cost = calloc(NBUCKETS, sizeof *h->cost);
    h->by_source = calloc(NBUCKETS * 3, sizeof *h->by_source);
    if (!h->lo || !h->hi || !h->cost || !h->by_source) {
        mt_histogram_free(h);
        return NULL;
    }
    memcpy(h->cost, cost, NBUCKETS * sizeof *cost);
    memcpy(h->by_source, src, NBUCKETS * 3 * sizeof *src);
    if (never)
        h->never_collected = *never;
    for (size_t b = 0; b < h->n; b++) {
        h->lo[b] = b == 0 ? 0 : 1ULL << (b - 1);
        h->hi[b] = b == 0 ? 1 : (b >= 64 ? UINT64_MAX : 1ULL << b);
    }
    return h;
}

static int cmp_life(const void *x, const void *y)
{
    const life_slot *a = x, *b = y;
    return a->life < b->life ? -1 : a->life > b->life;
}

/* The smallest lifetime whose samples and those of shorter ones reach
 * target: the weighted median when target is half the samples. */
static int median_life(const mt_stats_acc *s, uint64_t target, double *out)
{
    if (s->median_set) {
        *out = s->median;
        return 0;
    }
    uint64_t sum = 0;
    *out = 0;
    for (size_t c = 0; c < NCHUNKS; c++) {
        if (sum + s->chunk_sum[c] < target) {   /* not in this chunk */
            sum += s->chunk_sum[c];
            continue;
        }
        for (size_t i = 0; i < (1u << CHUNK_BITS); i++) {
            sum += s->direct[c][i];
            if (s->direct[c][i] && sum >= target) {
                *out = (double)((c << CHUNK_BITS) + i);
                return 0;
            }
        }
    }
    /* the longer lifetimes, sorted: a lifetime in both the table and the
     * array is two entries, which the running sum takes in turn */
    life_slot *v = malloc((s->n_lives + s->n_never + 1) * sizeof *v);
    if (!v)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < s->n_never; i++)
        v[n++] = s->never_v[i];
    for (size_t i = 0; s->lives && i <= s->mask; i++)
        if (s->lives[i].samples)
            v[n++] = s->lives[i];
    qsort(v, n, sizeof *v, cmp_life);
    for (size_t i = 0; i < n; i++) {
        sum += v[i].samples;
        if (sum >= target) {
            *out = (double)v[i].life;
            break;
        }
    }
    free(v);
    return 0;
}

/* The smallest lifetime of a[0..n) whose samples and those of shorter ones
 * reach target: quickselect with a three-way partition, linear on average
 * (a reorders). */
static uint64_t weighted_select(life_slot *a, size_t n, uint64_t target)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        uint64_t p = a[lo + (hi - lo) / 2].life, wl = 0, we = 0;
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            if (a[i].life < p) {
                wl += a[i].samples;
                life_slot t = a[lt];
                a[lt++] = a[i];
                a[i++] = t;
            } else if (a[i].life > p) {
                life_slot t = a[--gt];
                a[gt] = a[i];
                a[i] = t;
            } else {
                we += a[i++].samples;
            }
        }
        if (target <= wl)
            hi = lt;
        else if (target <= wl + we)
            return p;
        else {
            target -= wl + we;
            lo = gt;
        }
    }
    return lo < n ? a[lo].life : 0;
}

void mta_stats_acc_median(mt_stats_acc *s)
{
    if (!(s->want & MTA_STATS_LIST) || !s->n_all)
        return;
    uint64_t half = (s->total.samples + 1) / 2;
    s->median = (double)weighted_select(s->all, s->n_all, half ? half : 1);
    s->median_set = 1;
}

int mt_stats_acc_finish(const mt_stats_acc *s, const mt_model *m, mt_stats *o,
                        mt_histogram **size, mt_histogram **life)
{
    memset(o, 0, sizeof *o);
    o->duration = m->end;
    mt_model_event_counts(m, &o->allocs, &o->promotes, &o->collects);
    o->events = o->allocs + o->promotes + o->collects;
    mt_model_peak(m, &o->peak);
    o->peak_bytes = o->peak.bytes;
    o->peak_time = mt_model_peak_time(m);
    o->total = s->total;
    memcpy(o->by_source, s->by_source, sizeof o->by_source);
    o->promoted_bytes = s->promoted_bytes;
    o->collected_bytes = s->collected_bytes;
    o->never_collected_bytes = s->never_collected_bytes;
    o->mean_lifetime_us = s->life_w > 0 ? s->life_sum / s->life_w : 0;
    mta_verdict_stats(m, s->vsum, s->vn, o);
    if (s->total.allocs) {
        uint64_t half = (o->total.samples + 1) / 2;
        if (median_life(s, half ? half : 1, &o->median_lifetime_us) < 0)
            return -1;
    }
    o->alloc_rate = m->end > 0 ? o->total.alloc_bytes / ((double)m->end / 1e6) : 0;
    if (o->total.allocs == o->allocs) {
        o->peak_filtered_bytes = o->peak_bytes;
        o->peak_filtered_time = o->peak_time;
        o->peak_filtered = o->peak;
    }
    if (size && !(*size = histogram(MT_HIST_SIZE, s->size_max, s->size_cost, s->size_src, NULL)))
        return -1;
    if (life && !(*life = histogram(MT_HIST_LIFETIME, s->life_max, s->life_cost, s->life_src,
                                    &s->never))) {
        if (size) {
            mt_histogram_free(*size);
            *size = NULL;
        }
        return -1;
    }
    return 0;
}

/* The histograms every route returns (mt_stats_acc_finish, the queries
 * of hist.c) are freed here. */
void mt_histogram_free(mt_histogram *h)
{
    if (!h)
        return;
    free(h->lo);
    free(h->hi);
    free(h->cost);
    free(h->by_source);
    free(h);
}
