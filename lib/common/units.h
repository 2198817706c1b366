/*
 * units.h - the one grammar of sizes and durations (docs/units.md) that
 * every option, environment variable and filter clause taking one reads:
 * a plain decimal number ("64", "2.5", ".5", "1e6"; no sign, no blanks
 * before it, no hexadecimal, no "inf"), then, after optional blanks, a
 * unit, in either case:
 *   sizes      B, k/K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB (1024-based);
 *              no unit: bytes
 *   durations  us, ms, s, m/min, h, d; no unit: what the caller says
 *              (seconds for most options, milliseconds for MEMTRACE_*_MS)
 * A whole number with a unit is exact (the filter printer's canonical
 * forms read back to the same value); a fraction is rounded to the nearest
 * byte or microsecond. The range a value must lie in is the caller's to
 * check and to state in its message.
 * Header only: the recorder reads MEMTRACE_* with it, and links nothing
 * else from here.
 */
#ifndef MEMTRACE_COMMON_UNITS_H
#define MEMTRACE_COMMON_UNITS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Results of the parsers below. */
enum {
    MT_UNITS_OK = 0,
    MT_UNITS_NO_NUMBER = -1,   /* nothing that reads as a plain decimal number */
    MT_UNITS_BAD_UNIT = -2,    /* a number, then no unit of the kind asked for */
    MT_UNITS_TOO_LARGE = -3,   /* at least MT_UNITS_LIMIT */
};

/* Every value parsed is below this (bytes or microseconds). */
#define MT_UNITS_LIMIT 9000000000000000000ull

/* What the messages list as the units of each kind. */
#define MT_UNITS_SIZE_NAMES "B, k, M, G, T (or KiB, MiB, GiB, TiB)"
#define MT_UNITS_TIME_NAMES "us, ms, s, m, h, d"

/* Microseconds in one of each duration unit (for bare_us below). */
#define MT_US_PER_MS 1000ull
#define MT_US_PER_S 1000000ull

typedef struct mt_unit {
    const char *name;   /* lower case; matched in either case */
    uint64_t factor;
} mt_unit;

static const mt_unit mt_size_units[] = {
    {"b", 1}, {"k", 1ull << 10}, {"kb", 1ull << 10}, {"ki", 1ull << 10}, {"kib", 1ull << 10},
    {"m", 1ull << 20}, {"mb", 1ull << 20}, {"mi", 1ull << 20}, {"mib", 1ull << 20},
    {"g", 1ull << 30}, {"gb", 1ull << 30}, {"gi", 1ull << 30}, {"gib", 1ull << 30},
    {"t", 1ull << 40}, {"tb", 1ull << 40}, {"ti", 1ull << 40}, {"tib", 1ull << 40},
    {NULL, 0}};

static const mt_unit mt_time_units[] = {
    {"us", 1}, {"ms", 1000}, {"s", 1000000}, {"m", 60000000}, {"min", 60000000},
    {"h", 3600000000ull}, {"d", 86400000000ull}, {NULL, 0}};

/* s[0..len): NUMBER [blanks] [UNIT of table]; bare: the factor of no unit.
 * *out: the value times the unit's factor. *unit_at (if not NULL): where
 * the unit starts, for messages. Returns MT_UNITS_OK or an error above. */
static inline int mt_units_parse_n(const char *s, size_t len, const mt_unit *table,
                                   uint64_t bare, uint64_t *out, size_t *unit_at)
{
    size_t i = 0;
    uint64_t whole = 0;
    double frac = 0;
    int digits = 0, big = 0;
    /* the whole part exactly; the fraction as a double */
    while (i < len && s[i] >= '0' && s[i] <= '9') {
        unsigned d = (unsigned)(s[i++] - '0');
        if (whole > (UINT64_MAX - d) / 10)
            big = 1;
        else
            whole = whole * 10 + d;
        digits++;
    }
    if (i < len && s[i] == '.') {
        i++;
        double scale = 0.1;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            frac += (s[i++] - '0') * scale;
            scale /= 10;
            digits++;
        }
    }
    if (unit_at)
        *unit_at = i;
    if (!digits)
        return MT_UNITS_NO_NUMBER;
    int exp10 = 0, has_exp = 0;
    if (i + 1 < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        int neg = 0;
        if (s[j] == '+' || s[j] == '-')
            neg = s[j++] == '-';
        if (j < len && s[j] >= '0' && s[j] <= '9') {
            while (j < len && s[j] >= '0' && s[j] <= '9') {
                if (exp10 < 1000)
                    exp10 = exp10 * 10 + (s[j] - '0');
                j++;
            }
            if (neg)
                exp10 = -exp10;
            has_exp = 1;
            i = j;
        }
    }
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (unit_at)
        *unit_at = i;
    uint64_t factor = 0;
    if (i == len) {
        factor = bare;
    } else {
        size_t ul = len - i;
        for (const mt_unit *u = table; u->name && !factor; u++) {
            if (strlen(u->name) != ul)
                continue;
            size_t k = 0;
            while (k < ul && (s[i + k] | 0x20) == u->name[k])
                k++;
            if (k == ul)
                factor = u->factor;
        }
        if (!factor)
            return MT_UNITS_BAD_UNIT;
    }
    if (has_exp) {
        long double v = (long double)whole + frac;
        for (int e = exp10; e > 0 && v < 1e30L; e--)
            v *= 10;
        for (int e = exp10; e < 0 && v > 0; e++)
            v /= 10;
        v = v * factor + 0.5L;
        if (big || v >= (long double)MT_UNITS_LIMIT)
            return MT_UNITS_TOO_LARGE;
        *out = (uint64_t)v;
        return MT_UNITS_OK;
    }
    uint64_t total, part = (uint64_t)(frac * (double)factor + 0.5);
    if (big || __builtin_mul_overflow(whole, factor, &total) ||
        __builtin_add_overflow(total, part, &total) || total >= MT_UNITS_LIMIT)
        return MT_UNITS_TOO_LARGE;
    *out = total;
    return MT_UNITS_OK;
}

/* A size in bytes: "4096", "64k", "1.5GiB", "100 MB". */
static inline int mt_units_size(const char *s, uint64_t *bytes)
{
    return mt_units_parse_n(s, strlen(s), mt_size_units, 1, bytes, NULL);
}

/* A duration in microseconds: "90s", "250ms", "10m", "1h"; bare_us: the
 * microseconds of a bare number (MT_US_PER_S for seconds). */
static inline int mt_units_duration(const char *s, uint64_t bare_us, uint64_t *us)
{
    return mt_units_parse_n(s, strlen(s), mt_time_units, bare_us, us, NULL);
}

#endif
