/*
 * hash.c - unit test of lib/common/hash.h: the unkeyed mixers and FNV-1a
 * give the published values (they name files and fill stored indexes, so
 * they must never change), and the keyed hashes use one seed per process.
 */
#include <stdint.h>
#include <stdio.h>

#include "hash.h"

static int failures;

static void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "PASS" : "FAIL", what);
    failures += !ok;
}

int main(void)
{
    /* murmur3 fmix64(1), splitmix64's finalizer of 0x9e3779b97f4a7c15
     * (its first output from seed 0), FNV-1a of "" and "a" */
    check(mt_mix64(0) == 0, "mt_mix64(0) = 0");
    check(mt_mix64(1) == 0xb456bcfc34c2cb2cull, "mt_mix64(1): murmur3's fmix64");
    check(mt_mix64_split(0x9e3779b97f4a7c15ull) == 0xe220a8397b1dcdafull,
          "mt_mix64_split: splitmix64's first output");
    check(mt_fnv1a(MT_FNV_OFFSET, "") == 0xcbf29ce484222325ull, "FNV-1a of ''");
    check(mt_fnv1a(MT_FNV_OFFSET, "a") == 0xaf63dc4c8601ec8cull, "FNV-1a of 'a'");
    uint64_t s = mt_hash_seed();
    check(s != 0 && s == mt_hash_seed(), "one seed per process, never 0");
    check(mt_hash_u64(42) == mt_mix64(42 ^ s), "mt_hash_u64: keyed with the seed");
    check(mt_hash_bytes("abc", 3) == mt_hash_bytes("abc", 3) &&
              mt_hash_bytes("abc", 3) != mt_hash_bytes("abd", 3),
          "mt_hash_bytes: the same bytes, the same hash");
    return failures ? 1 : 0;
}
