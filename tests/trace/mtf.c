/*
 * mtf.c - unit test of lib/trace/mtf.c, the move-to-front tables of file
 * and function names in location events: the codes of a hand-worked
 * sequence (a new name is literal, 31; a name seen is its place, most
 * recent first; 31 files at most, the least recent evicted); a decoder fed
 * the encoder's codes (and the literal names where they are 31) gives back
 * every name of a long sequence that keeps evicting; a decoder refuses a
 * code naming an empty entry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/mtf.h"
#include "../check.h"

static mt_mtf enc, dec;

static int encode(const char *file, const char *def, unsigned *fc, unsigned *dc)
{
    return mt_mtf_encode(&enc, file, def, fc, dc);
}

int main(void)
{
    unsigned fc, dc;
    encode("a.c", "f", &fc, &dc);
    CHECK(fc == 31 && dc == 31, "a first name of each kind is literal (%u %u)", fc, dc);
    encode("a.c", "f", &fc, &dc);
    CHECK(fc == 0 && dc == 0, "the same again: entry 0, entry 0 (%u %u)", fc, dc);
    encode("b.c", "g", &fc, &dc);
    CHECK(fc == 31 && dc == 31, "a new file, a new function: literal (%u %u)", fc, dc);
    encode("a.c", "f", &fc, &dc);
    CHECK(fc == 1 && dc == 0, "a.c is second now, f first of a.c's (%u %u)", fc, dc);
    encode("a.c", "h", &fc, &dc);
    CHECK(fc == 0 && dc == 31, "a new function of a.c: file 0, literal (%u %u)", fc, dc);
    encode("a.c", "f", &fc, &dc);
    CHECK(fc == 0 && dc == 1, "f behind h in a.c's names (%u %u)", fc, dc);
    encode("b.c", "g", &fc, &dc);
    CHECK(fc == 1 && dc == 0, "g is still b.c's own (%u %u)", fc, dc);

    /* 31 files at most: after 31 others, a.c is gone. */
    char name[32];
    mt_mtf_free(&enc);
    memset(&enc, 0, sizeof enc);
    encode("a.c", "f", &fc, &dc);
    for (int i = 0; i < 30; i++) {
        snprintf(name, sizeof name, "f%02d.c", i);
        encode(name, "x", &fc, &dc);
    }
    encode("a.c", "f", &fc, &dc);
    CHECK(fc == 30, "the 31st file back: entry 30, the last (%u)", fc);
    encode("new.c", "x", &fc, &dc);
    encode("f00.c", "x", &fc, &dc);
    CHECK(fc == 31, "a 32nd file evicts the least recent one (f00.c literal again: %u)", fc);
    encode("a.c", "f", &fc, &dc);
    CHECK(fc == 2 && dc == 0, "the recent ones kept (a.c: %u %u)", fc, dc);

    /* The decoder follows the encoder: 20000 locations among 40 files of
     * 40 functions each, so both tables keep evicting. */
    mt_mtf_free(&enc);
    memset(&enc, 0, sizeof enc);
    memset(&dec, 0, sizeof dec);
    unsigned long long x = 88172645463325252ull;
    int wrong = 0, literal = 0, failed = 0;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        /* skewed: recent names come back often */
        unsigned fi = (unsigned)(x % 40) * (unsigned)((x >> 8) % 3 == 0) ;
        unsigned di = (unsigned)((x >> 16) % 40) * (unsigned)((x >> 24) % 2);
        char file[32], def[32];
        snprintf(file, sizeof file, "/src/file%u.c", fi);
        snprintf(def, sizeof def, "fn%u_%u", fi, di);
        if (encode(file, def, &fc, &dc) != 0) {
            failed++;
            break;
        }
        literal += (fc == 31) + (dc == 31);
        mt_mtf_name *fn = NULL, *dn = NULL;
        int rc = mt_mtf_decode(&dec, fc, file, strlen(file), dc, def, strlen(def), &fn, &dn);
        if (rc != 0 || strcmp(fn->str, file) != 0 || strcmp(dn->str, def) != 0)
            wrong++;
    }
    CHECK(!failed && wrong == 0 && literal > 1000 && literal < 30000,
          "20000 locations decoded from the encoder's codes: %d wrong (%d literal names)", wrong,
          literal);

    mt_mtf_free(&dec);
    memset(&dec, 0, sizeof dec);
    mt_mtf_name *fn = NULL, *dn = NULL;
    CHECK(mt_mtf_decode(&dec, 0, NULL, 0, 0, NULL, 0, &fn, &dn) == -1,
          "a fresh decoder: file code 0 names an empty entry (-1)");
    CHECK(mt_mtf_decode(&dec, 31, "a.c", 3, 5, NULL, 0, &fn, &dn) == -2,
          "a literal file with function code 5 of none: -2");
    CHECK(mt_mtf_decode(&dec, 0, NULL, 0, 31, "main", 4, &fn, &dn) == 0 &&
              strcmp(fn->str, "a.c") == 0 && strcmp(dn->str, "main") == 0,
          "the file kept from before, a literal function: a.c, main");
    mt_mtf_free(&enc);
    mt_mtf_free(&dec);
    return failures != 0;
}
