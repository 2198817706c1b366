/*
 * draw.h - the random draws behind per-byte sampling: a xorshift64*
 * generator, uniforms, the geometric gap to the next sampled byte and the
 * number of sampled bytes in a stretch of bytes (binomial), all exact for
 * independent per-byte sampling with probability p.
 */
#ifndef MT_RECORD_DRAW_H
#define MT_RECORD_DRAW_H

#include <stdint.h>

#include "thread.h"

/* Largest gap ever drawn: far beyond any address space, and far from
 * MT_PARKED. */
#define MT_MAX_GAP ((uint64_t)1 << 61)

static inline uint64_t mtr_random(uint64_t *state)
{
    uint64_t x = *state;   /* xorshift64*; the state is never 0 */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dULL;
}

/* Uniform in (0, 1], 53 random bits. */
static inline double mtr_uniform(uint64_t *state)
{
    return (double)((mtr_random(state) >> 11) + 1) * 0x1.0p-53;
}

/* The factor mtr_geometric needs for probability p: -1 / log(1 - p)
 * (0 for p = 1). */
MT_HIDDEN double mtr_geometric_scale(double p);

/* Position of the first sampled byte when each byte is sampled with
 * probability p: P(gap = k) = (1-p)^(k-1) p, k >= 1 (capped at
 * MT_MAX_GAP). scale = mtr_geometric_scale(p). */
MT_HIDDEN uint64_t mtr_geometric(uint64_t *state, double scale);

/* Number of sampled bytes among n, each sampled with probability p:
 * Binomial(n, p), exact, in bounded expected time whatever n. */
MT_HIDDEN uint64_t mtr_binomial(uint64_t *state, uint64_t n, double p);

#endif
