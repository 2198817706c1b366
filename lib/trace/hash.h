/*
 * hash.h - the 64-bit hashes of the codec's tables (move-to-front tables,
 * string interning, location lists, the code -> locations table). Keys come
 * from the trace, i.e. from anyone: every hash is keyed with a per-process
 * random seed (hash.c), so that a trace cannot be built to make the tables'
 * probes collide.
 */
#ifndef MT_TRACE_HASH_H
#define MT_TRACE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MT_HASH_K 0x9E3779B97F4A7C15ull

/* The seed, drawn once per process from getrandom (never 0). */
extern uint64_t mt_hash_seed_value;
uint64_t mt_hash_seed_init(void);
static inline uint64_t mt_hash_seed(void)
{
    uint64_t s = __atomic_load_n(&mt_hash_seed_value, __ATOMIC_RELAXED);
    return __builtin_expect(s != 0, 1) ? s : mt_hash_seed_init();
}

/* Eight bytes at a time (names arrive with every location event that spells
 * them out, so this is on the reader's path). */
static inline uint64_t mt_hash_bytes(const char *s, size_t len)
{
    uint64_t h = (len ^ mt_hash_seed()) * MT_HASH_K;
    while (len >= 8) {
        uint64_t v;
        memcpy(&v, s, 8);
        h = (h ^ v) * MT_HASH_K;
        h ^= h >> 29;
        s += 8;
        len -= 8;
    }
    uint64_t v = 0;
    memcpy(&v, s, len);
    h = (h ^ v) * MT_HASH_K;
    h ^= h >> 32;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 29);
}

/* Mixes v into the running hash h. */
static inline uint64_t mt_hash_mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * MT_HASH_K;
    return h ^ (h >> 29);
}

/* A keyed hash of a 64-bit key (a location code): the seed goes in first,
 * then a full avalanche (every input bit moves every output bit). */
static inline uint64_t mt_hash_u64(uint64_t x)
{
    x ^= mt_hash_seed();
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

#endif
