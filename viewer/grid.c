/*
 * grid.c - the fixed-resolution live-memory curve of folded traces (see
 * grid.h). The live value at the end of fine bucket k is the sum of the
 * deltas of buckets 0..k: exact at those instants, so a coarser bucket's
 * value is exact whenever the highest point falls at a fine bucket's end,
 * and a lower bound otherwise (docs/viewer.md, "Big traces").
 */
#include "grid.h"

#include <stdlib.h>
#include <string.h>

#include "memtrace/stream.h"

int vgrid_init(vgrid *g)
{
    memset(g, 0, sizeof *g);
    g->width = 1;
    g->delta = calloc(VGRID_BUCKETS, sizeof *g->delta);
    g->alloc = calloc(VGRID_BUCKETS, sizeof *g->alloc);
    if (!g->delta || !g->alloc) {
        vgrid_free(g);
        return -1;
    }
    return 0;
}

void vgrid_free(vgrid *g)
{
    free(g->delta);
    free(g->alloc);
    g->delta = g->alloc = NULL;
}

size_t vgrid_bytes(void)
{
    return 2 * VGRID_BUCKETS * sizeof(int64_t);
}

/* Halve the resolution: bucket j takes buckets 2j and 2j + 1. */
static void coarsen(vgrid *g)
{
    for (size_t j = 0; j < VGRID_BUCKETS / 2; j++) {
        g->delta[j] = g->delta[2 * j] + g->delta[2 * j + 1];
        g->alloc[j] = g->alloc[2 * j] + g->alloc[2 * j + 1];
    }
    memset(g->delta + VGRID_BUCKETS / 2, 0, VGRID_BUCKETS / 2 * sizeof *g->delta);
    memset(g->alloc + VGRID_BUCKETS / 2, 0, VGRID_BUCKETS / 2 * sizeof *g->alloc);
    g->used = (g->used + 1) / 2;
    g->width *= 2;
    g->shift++;
}

static size_t bucket(vgrid *g, mt_timedelta t)
{
    if (t < 0)
        t = 0;
    if (t > VGRID_MAX_TIME)   /* keeps (k + 1) * width far from overflowing */
        t = VGRID_MAX_TIME;
    while ((t >> g->shift) >= VGRID_BUCKETS)
        coarsen(g);
    size_t b = (size_t)(t >> g->shift);
    if (b + 1 > g->used)
        g->used = b + 1;
    return b;
}

void vgrid_add(vgrid *g, mt_timedelta time, mt_timedelta collect, uint64_t samples)
{
    /* the later time first: placing it may coarsen the grid */
    if (collect != MT_TIME_NEVER)
        g->delta[bucket(g, collect > time ? collect : time)] -= (int64_t)samples;
    size_t b = bucket(g, time);
    g->delta[b] += (int64_t)samples;
    g->alloc[b] += (int64_t)samples;
}

void vgrid_finish(vgrid *g, double rate)
{
    int64_t live = 0;
    g->peak = 0;
    g->peak_time = 0;
    mt_peak_acc *acc = mt_peak_acc_new();
    for (size_t k = 0; k < g->used; k++) {
        int64_t before = live;
        live += g->delta[k];
        if (live > g->peak) {
            g->peak = live;
            g->peak_time = (mt_timedelta)(k + 1) * g->width - 1;
        }
        if (acc)
            mt_peak_acc_time(acc, (mt_timedelta)(k + 1) * g->width - 1, before, live,
                             (uint64_t)g->alloc[k]);
    }
    if (acc)
        mt_peak_acc_result(acc, 1, rate, &g->peak_est);
    else   /* out of memory: the highest alone */
        g->peak_est = (mt_peak){(double)g->peak, (double)g->peak, (double)g->peak,
                                (double)g->peak, 0, 1, (double)g->peak};
    mt_peak_acc_free(acc);
}

void vgrid_curve(const vgrid *g, mt_timedelta t0, mt_timedelta w, size_t n, double bps,
                 double *out, double *alloc_out)
{
    int64_t live = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        mt_timedelta bs = t0 + (mt_timedelta)i * w, be = bs + w;
        double a = 0;
        /* the fine buckets that end before this bucket: the value carried in */
        for (; k < g->used && (mt_timedelta)(k + 1) * g->width - 1 < bs; k++)
            live += g->delta[k];
        int64_t v = live;
        for (; k < g->used && (mt_timedelta)(k + 1) * g->width - 1 < be; k++) {
            live += g->delta[k];
            a += (double)g->alloc[k];
            if (live > v)
                v = live;
        }
        out[i] = (double)v * bps;
        if (alloc_out)
            alloc_out[i] = a * bps;
    }
}
