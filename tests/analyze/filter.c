/*
 * filter.c - unit test of the filter language: accepted forms and their
 * canonical spelling, and error messages that name the column.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/analyze.h"

static int failures;

static void ok(const char *text, const char *canon)
{
    char *err = NULL;
    mt_filter *f = mt_filter_parse(text, &err, NULL);
    char *s = f ? mt_filter_to_string(f) : NULL;
    if (f && s && !strcmp(s, canon)) {
        printf("PASS: '%s' -> '%s'\n", text, canon);
        /* the canonical form parses to itself */
        mt_filter *g = mt_filter_parse(s, NULL, NULL);
        char *s2 = g ? mt_filter_to_string(g) : NULL;
        if (!s2 || strcmp(s2, canon)) {
            printf("FAIL: canonical '%s' does not round-trip ('%s')\n", canon, s2 ? s2 : "error");
            failures++;
        }
        free(s2);
        mt_filter_free(g);
    } else {
        printf("FAIL: '%s': got '%s' (%s), want '%s'\n", text, s ? s : "", err ? err : "", canon);
        failures++;
    }
    free(s);
    free(err);
    mt_filter_free(f);
}

static void bad(const char *text, size_t col, const char *words)
{
    char *err = NULL;
    size_t pos = 999;
    mt_filter *f = mt_filter_parse(text, &err, &pos);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "filter: column %zu: ", col + 1);
    if (!f && err && pos == col && !strncmp(err, prefix, strlen(prefix)) && strstr(err, words)) {
        printf("PASS: '%s' rejected: %s\n", text, err);
    } else {
        printf("FAIL: '%s': got pos %zu err '%s', want column %zu mentioning '%s'\n", text, pos,
               err ? err : "(accepted)", col + 1, words);
        failures++;
    }
    free(err);
    mt_filter_free(f);
}

int main(void)
{
    ok("", "");
    ok("   ", "");
    ok("alloc:1s-3s", "alloc:1s-3s");
    ok("alloc:1.5s-", "alloc:>=1500ms");
    ok("alloc:-250ms", "alloc:<=250ms");
    ok("alloc:>1s", "alloc:>=1000001us");
    ok("allocated:<2", "alloc:<=1999999us");
    ok("live:2.5s", "live:2500ms");
    ok("live:peak  live:end", "live:peak live:end");
    ok("live:1s-2s", "live:1s-2s");
    ok("collect:never", "collect:never");
    ok("collected:100us-1m", "collect:100us-60s");
    ok("size:>=4k", "size:>=4k");
    ok("size:4KiB-1MB", "size:4k-1M");
    ok("size:<100", "size:<=99");
    ok("size:1.5k", "size:1536");
    ok("lifetime:>=10ms", "lifetime:>=10ms");
    ok("source:Minor,external", "source:minor,external");
    ok("inside:parse_", "inside:parse_");
    ok("!inside:\"a b\" hide:/^caml_[a-z]+ x\\/y/", "!inside:\"a b\" hide:/^caml_[a-z]+ x\\/y/");
    ok("inside:\"say \\\"hi\\\"\"", "inside:\"say \\\"hi\\\"\"");
    ok("!source:major size:1M-", "!source:major size:>=1M");
    /* open at both ends: printed as it parses back (found by fuzz_filter) */
    ok("size:0k-", "size:>=0");
    ok("alloc:<0 size:<0", "alloc:<0s size:<0");
    ok("size:1777778788837888888", "size:1777778788837888888"); /* exact, not via a double */
    bad("sise:4k", 0, "unknown clause 'sise'");
    bad("size:4q", 6, "unknown unit 'q'");
    bad("alloc:3s-1s", 6, "empty range");
    bad("live:", 5, "missing time range");
    bad("size:>=", 7, "expected a size");
    bad("inside:\"abc", 7, "unterminated quoted string");
    /* PCRE2 says where in the regex it found the problem: here at its end */
    bad("hide:/a(/", 8, "bad regular expression: missing closing parenthesis");
    /* deep nesting is refused when the filter is parsed (the regex bombs
     * that made glibc's regcomp overflow the stack or take all memory are
     * in tests/analyze/hostile.sh, under a memory limit) */
    bad("inside:/((((((((((((((((((((((((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))))))))))))))))))))))))))/",
        59, "parentheses are too deeply nested");
    /* names are bytes: UTF mode would make invalid UTF-8 names match errors */
    bad("inside:/(*UTF)x/", 14, "using UTF is disabled");
    {
        char long_re[1200];
        memset(long_re, 'a', sizeof long_re);
        memcpy(long_re, "inside:/", 8);
        long_re[sizeof long_re - 2] = '/';
        long_re[sizeof long_re - 1] = 0;
        bad(long_re, 8, "regular expression too long");
    }
    bad("alloc:1s foo", 9, "'foo' needs ':'");
    bad("alloc:1s 42", 9, "expected a clause like");
    bad("source:heap", 7, "unknown source 'heap'");
    bad("!hide:x", 0, "cannot be negated");
    bad("inside:/x/y", 10, "expected a space");
    bad("size", 0, "needs ':'");
    /* random strings made of the language's characters: never a crash,
     * and an error always names a column inside the text */
    static const char alpha[] = "alivecolsizfthdurpn!:-<>=.,\"/\\ 0123456789kMGmsu^$()[]*+?|";
    uint64_t rng = 12345;
    int fuzz_ok = 1;
    for (int i = 0; i < 20000; i++) {
        char text[40];
        size_t len = (size_t)(rng >> 59) + 1;
        for (size_t k = 0; k < len; k++) {
            rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
            text[k] = alpha[(rng >> 33) % (sizeof alpha - 1)];
        }
        text[len] = 0;
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        char *e = NULL;
        size_t pos = 0;
        mt_filter *f = mt_filter_parse(text, &e, &pos);
        if (f) {
            char *canon = mt_filter_to_string(f);
            mt_filter *g = canon ? mt_filter_parse(canon, NULL, NULL) : NULL;
            char *again = g ? mt_filter_to_string(g) : NULL;
            if (!again || strcmp(again, canon)) {
                printf("FAIL: '%s' -> '%s' does not round-trip\n", text, canon ? canon : "");
                fuzz_ok = 0;
            }
            free(canon);
            free(again);
            mt_filter_free(g);
            mt_filter_free(f);
        } else if (!e || pos > len) {
            printf("FAIL: '%s': error without a position in the text\n", text);
            fuzz_ok = 0;
        }
        free(e);
    }
    if (fuzz_ok)
        printf("PASS: 20000 random filters: no crash, errors point into the text, canonical forms round-trip\n");
    else
        failures++;

    mt_timedelta t;
    char *err = NULL;
    if (mt_parse_time("250ms", &t, NULL) == 0 && t == 250000 && mt_parse_time("peak", &t, NULL) == 0 &&
        t == MT_TIME_PEAK && mt_parse_time("2", &t, NULL) == 0 && t == 2000000 &&
        mt_parse_time("3x", &t, &err) < 0 && err && strstr(err, "unknown unit 'x'"))
        printf("PASS: mt_parse_time (250ms, peak, bare seconds, bad unit: %s)\n", err);
    else {
        printf("FAIL: mt_parse_time\n");
        failures++;
    }
    free(err);
    return failures ? 1 : 0;
}
