/*
 * units.c - unit test of the one size and duration grammar
 * (lib/common/units.h, docs/units.md): a table of spellings and the bytes
 * or microseconds each means, worked out by hand, and the spellings
 * refused with the reason.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "units.h"

static int failures;

static void size_case(const char *text, int want_rc, uint64_t want)
{
    uint64_t v = 12345;
    int rc = mt_units_size(text, &v);
    if (rc == want_rc && (rc != MT_UNITS_OK || v == want)) {
        printf("PASS: size '%s'\n", text);
    } else {
        printf("FAIL: size '%s': rc %d value %llu, want rc %d value %llu\n", text, rc,
               (unsigned long long)v, want_rc, (unsigned long long)want);
        failures++;
    }
}

static void time_case(const char *text, uint64_t bare, int want_rc, uint64_t want)
{
    uint64_t v = 12345;
    int rc = mt_units_duration(text, bare, &v);
    if (rc == want_rc && (rc != MT_UNITS_OK || v == want)) {
        printf("PASS: duration '%s' (bare %lluus)\n", text, (unsigned long long)bare);
    } else {
        printf("FAIL: duration '%s': rc %d value %llu, want rc %d value %llu\n", text, rc,
               (unsigned long long)v, want_rc, (unsigned long long)want);
        failures++;
    }
}

int main(void)
{
    static const struct { const char *text; int rc; uint64_t v; } sizes[] = {
        {"0", MT_UNITS_OK, 0},
        {"4096", MT_UNITS_OK, 4096},
        {"4096B", MT_UNITS_OK, 4096},
        {"4096b", MT_UNITS_OK, 4096},
        {"64k", MT_UNITS_OK, 65536},
        {"64K", MT_UNITS_OK, 65536},
        {"64kB", MT_UNITS_OK, 65536},
        {"64KiB", MT_UNITS_OK, 65536},
        {"64kib", MT_UNITS_OK, 65536},
        {"64Ki", MT_UNITS_OK, 65536},
        {"100m", MT_UNITS_OK, 104857600},
        {"100M", MT_UNITS_OK, 104857600},
        {"100MB", MT_UNITS_OK, 104857600},
        {"100MiB", MT_UNITS_OK, 104857600},
        {"100 MiB", MT_UNITS_OK, 104857600},
        {"1g", MT_UNITS_OK, 1073741824},
        {"1G", MT_UNITS_OK, 1073741824},
        {"1GiB", MT_UNITS_OK, 1073741824},
        {"1gb", MT_UNITS_OK, 1073741824},
        {"2t", MT_UNITS_OK, 2199023255552ull},
        {"1TiB", MT_UNITS_OK, 1099511627776ull},
        {"1.5k", MT_UNITS_OK, 1536},
        {"0.5M", MT_UNITS_OK, 524288},
        {".5k", MT_UNITS_OK, 512},
        {"2.", MT_UNITS_OK, 2},
        {"1e6", MT_UNITS_OK, 1000000},
        {"1e18", MT_UNITS_OK, 1000000000000000000ull},
        {"2.5e3k", MT_UNITS_OK, 2560000},
        {"8999999999999999999", MT_UNITS_OK, 8999999999999999999ull},
        {"9000000000000000000", MT_UNITS_TOO_LARGE, 0},
        {"99999999999999999999999", MT_UNITS_TOO_LARGE, 0},
        {"10000000T", MT_UNITS_TOO_LARGE, 0},
        {"1e30", MT_UNITS_TOO_LARGE, 0},
        {"", MT_UNITS_NO_NUMBER, 0},
        {"k", MT_UNITS_NO_NUMBER, 0},
        {".", MT_UNITS_NO_NUMBER, 0},
        {"-1", MT_UNITS_NO_NUMBER, 0},
        {"+1", MT_UNITS_NO_NUMBER, 0},
        {" 1", MT_UNITS_NO_NUMBER, 0},
        {"inf", MT_UNITS_NO_NUMBER, 0},
        {"0x10000", MT_UNITS_BAD_UNIT, 0},
        {"12q", MT_UNITS_BAD_UNIT, 0},
        {"1kk", MT_UNITS_BAD_UNIT, 0},
        {"1e", MT_UNITS_BAD_UNIT, 0},
        {"1 k b", MT_UNITS_BAD_UNIT, 0},
        {"5s", MT_UNITS_BAD_UNIT, 0},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        size_case(sizes[i].text, sizes[i].rc, sizes[i].v);

    const uint64_t S = MT_US_PER_S, MS = MT_US_PER_MS;
    static const struct { const char *text; int rc; uint64_t v; } times[] = {
        {"90s", MT_UNITS_OK, 90000000},
        {"90S", MT_UNITS_OK, 90000000},
        {"250ms", MT_UNITS_OK, 250000},
        {"250us", MT_UNITS_OK, 250},
        {"2.5s", MT_UNITS_OK, 2500000},
        {"10m", MT_UNITS_OK, 600000000},
        {"10min", MT_UNITS_OK, 600000000},
        {"1h", MT_UNITS_OK, 3600000000ull},
        {"1d", MT_UNITS_OK, 86400000000ull},
        {"0.5ms", MT_UNITS_OK, 500},
        {"1e3ms", MT_UNITS_OK, 1000000},
        {"3", MT_UNITS_OK, 3000000},   /* bare: seconds */
        {"0", MT_UNITS_OK, 0},
        {"1k", MT_UNITS_BAD_UNIT, 0},
        {"1 sec", MT_UNITS_BAD_UNIT, 0},
        {"s", MT_UNITS_NO_NUMBER, 0},
        {"-3s", MT_UNITS_NO_NUMBER, 0},
        {"200000000000d", MT_UNITS_TOO_LARGE, 0},
    };
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
        time_case(times[i].text, S, times[i].rc, times[i].v);
    /* a bare number in milliseconds (MEMTRACE_RSS_MS and the like) */
    time_case("100", MS, MT_UNITS_OK, 100000);
    time_case("2s", MS, MT_UNITS_OK, 2000000);

    /* a piece of a longer text (the filter's clauses) */
    uint64_t v = 0;
    size_t at = 0;
    int rc = mt_units_parse_n("4kq-8k", 3, mt_size_units, 1, &v, &at);
    if (rc == MT_UNITS_BAD_UNIT && at == 1)
        printf("PASS: bounded text: unknown unit found at offset 1\n");
    else {
        printf("FAIL: bounded text: rc %d at %zu\n", rc, at);
        failures++;
    }
    rc = mt_units_parse_n("4k-8k", 2, mt_size_units, 1, &v, NULL);
    if (rc == MT_UNITS_OK && v == 4096)
        printf("PASS: bounded text: '4k' of '4k-8k'\n");
    else {
        printf("FAIL: bounded text: '4k' of '4k-8k': rc %d value %llu\n", rc,
               (unsigned long long)v);
        failures++;
    }
    return failures ? 1 : 0;
}
