/*
 * rssformat.c - unit test of the TRACE.rss format (lib/common/rssformat.c):
 * a header, a sample line and a ledger line written by hand and read back
 * to the same figures; versions 1 and 2 read, others refused; unknown
 * keys skipped; damaged lines refused with a reason.
 */
#include <stdio.h>
#include <string.h>

#include "rssformat.h"

static int failures;

static void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "PASS" : "FAIL", what);
    failures += !ok;
}

int main(void)
{
    char buf[MT_RSSF_MAX_LINE];
    const char *why = NULL;
    int version;
    unsigned long long pid;
    long long start;

    check(mt_rssf_header(buf, sizeof buf, 4242, 1700000000000000LL) > 0 &&
              strcmp(buf, "memtrace-rss 2 4242 1700000000000000\n") == 0,
          "header: version 2, pid, start");
    check(mt_rssf_parse_header(buf, &version, &pid, &start, &why) == 0 && version == 2 &&
              pid == 4242 && start == 1700000000000000LL,
          "header read back");
    check(mt_rssf_parse_header("memtrace-rss 1 7 9\n", &version, &pid, &start, &why) == 0 &&
              version == 1 && pid == 7 && start == 9,
          "a version 1 header still reads");
    check(mt_rssf_parse_header("memtrace-rss 3 7 9\n", &version, &pid, &start, &why) != 0 &&
              strstr(why, "version"),
          "version 3 refused, saying so");
    check(mt_rssf_parse_header("garbage\n", &version, &pid, &start, &why) != 0,
          "not a header refused");

    int64_t v[5];
    check(mt_rssf_sample(buf, sizeof buf, 100, 4096, -1, 0, 8192) > 0 &&
              strcmp(buf, "100 4096 - 0 8192\n") == 0,
          "sample line: '-' for a figure not taken");
    check(mt_rssf_parse_sample(buf, v, &why) == 0 && v[0] == 100 && v[1] == 4096 &&
              v[2] == -1 && v[3] == 0 && v[4] == 8192,
          "sample line read back");
    check(mt_rssf_parse_sample("100 4096 - 0 8192 77 more\n", v, &why) == 0,
          "sample line: further fields ignored");
    check(mt_rssf_parse_sample("12x34 5 - - -\n", v, &why) != 0, "damaged sample line refused");

    mt_rssf_ledger l, r;
    mt_rssf_ledger_clear(&l);
    l.time_us = 123;
    l.rss = 10 << 20;
    l.anon = 6 << 20;
    l.stack = 1 << 20;
    l.mod = 2 << 20;
    l.file = 0;
    l.shm = 512 << 10;
    l.own = 512 << 10;
    l.a_inuse = 5 << 20;
    l.a_free = 1 << 20;
    strcpy(l.alloc, "jemalloc");
    int n = mt_rssf_ledger_line(buf, sizeof buf, &l);
    check(n > 0 && buf[n - 1] == '\n' && strncmp(buf, "L 123 rss=10485760 ", 19) == 0 &&
              !strstr(buf, "pss=") && strstr(buf, " alloc=jemalloc\n"),
          "ledger line: keys not taken left out");
    check(mt_rssf_is_ledger(buf) && !mt_rssf_is_ledger("100 4096 - 0 8192\n"),
          "ledger lines told from sample lines");
    check(mt_rssf_parse_ledger(buf, &r, &why) == 0 && r.time_us == 123 && r.rss == l.rss &&
              r.anon == l.anon && r.stack == l.stack && r.mod == l.mod && r.file == 0 &&
              r.shm == l.shm && r.own == l.own && r.a_inuse == l.a_inuse &&
              r.a_free == l.a_free && r.pss == -1 && r.a_meta == -1 &&
              strcmp(r.alloc, "jemalloc") == 0,
          "ledger line read back, absent keys -1");
    check(mt_rssf_parse_ledger("L 5 rss=4096 future=abc later=7 anon=4096\n", &r, &why) == 0 &&
              r.rss == 4096 && r.anon == 4096,
          "unknown keys skipped");
    check(mt_rssf_parse_ledger("L 5 rss=x\n", &r, &why) != 0 && strstr(why, "number"),
          "a known key with a bad value refused");
    check(mt_rssf_parse_ledger("L 5 rss\n", &r, &why) != 0, "a key without a value refused");
    check(mt_rssf_parse_ledger("L x rss=1\n", &r, &why) != 0, "a bad time refused");
    check(mt_rssf_parse_ledger("L 5 alloc=Je!\n", &r, &why) != 0, "a bad allocator name refused");
    check(mt_rssf_parse_ledger("L 5 rss=99999999999999999999\n", &r, &why) != 0,
          "a value out of range refused");
    l.alloc[0] = '\0';
    check(mt_rssf_ledger_line(buf, 20, &l) == -1, "a ledger line too long for the buffer: -1");
    return failures != 0;
}
