/*
 * hashseed.c - the per-process seed of every keyed hash (see hash.h): the
 * codec's, the analysis's and the viewer's tables use this one seed.
 */
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "hash.h"

uint64_t mt_hash_seed_value;

uint64_t mt_hash_seed_init(void)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s) {
        /* no entropy yet (early boot) or no getrandom: still different
         * per process and per run */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        s = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 17) ^
            (uint64_t)(uintptr_t)&s;
        s *= MT_HASH_K;
    }
    s |= 1;
    /* the first value stored wins: every table of the process uses one seed */
    uint64_t expected = 0;
    if (!__atomic_compare_exchange_n(&mt_hash_seed_value, &expected, s, 0, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED))
        return expected;
    return s;
}
