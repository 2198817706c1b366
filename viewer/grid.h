/*
 * grid.h - a live-memory curve kept at a fixed resolution while a folded
 * trace is read (grid.c): the viewer's downsampled curve for traces too big
 * for a whole model. Allocations arrive in any order (when they are folded,
 * with their collection time known); the grid keeps, per fine bucket of
 * time, the samples allocated and the net change of live samples, and
 * doubles its bucket width whenever a time falls beyond its last bucket.
 */
#ifndef MT_VIEWER_GRID_H
#define MT_VIEWER_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "memtrace/analyze.h"

#define VGRID_BUCKETS 262144     /* fine buckets (2 x 8 bytes each) */
#define VGRID_MAX_TIME ((mt_timedelta)1 << 52)  /* later times count there (142 years) */

typedef struct vgrid {
    mt_timedelta width;          /* of a fine bucket, microseconds (a power of two) */
    unsigned shift;              /* log2(width) */
    size_t used;                 /* buckets up to the last one touched */
    int64_t *delta;              /* samples allocated minus samples freed */
    int64_t *alloc;              /* samples allocated */
    int64_t peak;                /* highest live samples at a bucket's end */
    mt_timedelta peak_time;      /* the end of that bucket (minus 1 us) */
    mt_peak peak_est;            /* its estimate (mt_peak), in samples */
} vgrid;

int vgrid_init(vgrid *g);        /* 0, or -1 when out of memory */
void vgrid_free(vgrid *g);
/* One block of samples allocated at time, freed at collect (MT_TIME_NEVER: never). */
void vgrid_add(vgrid *g, mt_timedelta time, mt_timedelta collect, uint64_t samples);
/* After the last vgrid_add: computes the peak and its estimate for the
 * trace's sample rate (from the fine buckets' ends, as the peak). */
void vgrid_finish(vgrid *g, double rate);
size_t vgrid_bytes(void);

/* The curve in n buckets of width w (>= 1) from t0 (as mt_curve_span lays
 * them out), in bytes (bps per sample): out[i] the highest live value at the
 * fine buckets' ends within bucket i, or the value carried in when none
 * ends there; alloc_out (may be NULL) the bytes allocated. */
void vgrid_curve(const vgrid *g, mt_timedelta t0, mt_timedelta w, size_t n, double bps,
                 double *out, double *alloc_out);

#endif
