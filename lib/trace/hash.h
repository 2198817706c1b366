/*
 * hash.h - the 64-bit hash of byte strings that the codec's name tables use
 * (move-to-front tables, string interning, location lists).
 */
#ifndef MT_TRACE_HASH_H
#define MT_TRACE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MT_HASH_K 0x9E3779B97F4A7C15ull

/* Eight bytes at a time (names arrive with every location event that spells
 * them out, so this is on the reader's path). */
static inline uint64_t mt_hash_bytes(const char *s, size_t len)
{
    uint64_t h = len * MT_HASH_K;
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
    return h ^ (h >> 32);
}

/* Mixes v into the running hash h. */
static inline uint64_t mt_hash_mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * MT_HASH_K;
    return h ^ (h >> 29);
}

#endif
