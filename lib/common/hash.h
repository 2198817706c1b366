/*
 * hash.h - the 64-bit hashes and mixers of every layer's tables (the
 * codec's move-to-front tables, string interning and location lists; the
 * analysis's tables; the recorder's carried blocks and random numbers).
 * Keys come from the trace, i.e. from anyone: a table's hash is keyed with
 * the one per-process random seed (hashseed.c), so that a trace cannot be
 * built to make its probes collide. The unkeyed mixers and FNV-1a are for
 * values that must be the same in every process (hashes stored in files,
 * file names) and for seeding random numbers.
 * Header only but for the seed (hashseed.c, linked with the codec).
 */
#ifndef MT_COMMON_HASH_H
#define MT_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MT_HASH_K 0x9E3779B97F4A7C15ull

/* The seed, drawn once per process from getrandom (never 0); any thread
 * may ask first (the first value stored wins). */
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

/* murmur3's 64-bit finalizer: every input bit moves every output bit.
 * Unkeyed: the allocation index (lib/analyze/allocindex.c) stores its
 * hashes in files, so it must never change. */
static inline uint64_t mt_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

/* splitmix64's finalizer (other shifts and constants than mt_mix64): the
 * recorder's random seeds. */
static inline uint64_t mt_mix64_split(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* A keyed hash of a 64-bit key (a location code, an id): the seed goes in
 * first, then a full avalanche. */
static inline uint64_t mt_hash_u64(uint64_t x)
{
    return mt_mix64(x ^ mt_hash_seed());
}

/* FNV-1a over a string, from h (MT_FNV_OFFSET, or a seed mixed in):
 * unkeyed from MT_FNV_OFFSET, so the same in every process (the viewer's
 * cache names its files with it). */
#define MT_FNV_OFFSET 0xcbf29ce484222325ull
static inline uint64_t mt_fnv1a(uint64_t h, const char *s)
{
    while (*s)
        h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
    return h;
}

#endif
