/*
 * damaged.c - hand-made damaged traces: each must be refused with the
 * message "NAME: offset N: reason" at the right offset (or, for a foreign
 * or truncated last packet, skipped with a warning), never a crash or a
 * hang. Packets are built byte by byte here, independently of the writer.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memtrace/trace.h"
#include "../check.h"


/* ---- byte builder ---- */
typedef struct bytes {
    unsigned char d[1 << 16];
    size_t n;
} bytes;

static void u8(bytes *b, unsigned v) { b->d[b->n++] = (unsigned char)v; }
static void u16(bytes *b, unsigned v) { u8(b, v & 255); u8(b, v >> 8 & 255); }
static void u32(bytes *b, uint32_t v) { u16(b, v & 0xFFFF); u16(b, v >> 16); }
static void u64(bytes *b, uint64_t v) { u32(b, (uint32_t)v); u32(b, (uint32_t)(v >> 32)); }
static void str(bytes *b, const char *s) { do u8(b, (unsigned char)*s); while (*s++); }
static void put32_at(bytes *b, size_t at, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b->d[at + i] = (unsigned char)(v >> (8 * i));
}

#define T0 1600000000000000ll /* start time; low 25 bits: T0 & 0x1FFFFFF */
#define PID 77

/* Packet header (v2); returns its offset. Size is patched by end_packet. */
static size_t begin_packet(bytes *b, int64_t t0, int64_t t1, uint64_t pid, uint64_t id0,
                           uint64_t id1)
{
    size_t at = b->n;
    u32(b, 0xC1FC1FC1);
    u32(b, 0);
    u64(b, (uint64_t)t0);
    u64(b, (uint64_t)t1);
    u32(b, 0);
    u16(b, 2);
    u64(b, pid);
    u16(b, 0xFFFF);
    u16(b, 0);
    u64(b, 0);
    u64(b, id0);
    u64(b, id1);
    return at;
}

static void end_packet(bytes *b, size_t at)
{
    put32_at(b, at + 4, (uint32_t)((b->n - at) * 8));
}

static void ev(bytes *b, unsigned code, int64_t t)
{
    u32(b, (uint32_t)code << 25 | ((uint32_t)t & 0x1FFFFFF));
}

/* A valid trace-info packet (191-ish bytes). */
static void info_packet(bytes *b)
{
    size_t at = begin_packet(b, T0, T0, PID, 0, 0);
    ev(b, 0, T0);
    u64(b, 0x3FF0000000000000ull); /* 1.0 */
    u8(b, 64);
    str(b, "exe");
    str(b, "host");
    str(b, "");
    u64(b, PID);
    str(b, "ctx");
    end_packet(b, at);
}

static char last_warning[512];
static int nwarnings;
static void on_warning(void *ctx, const char *msg)
{
    (void)ctx;
    snprintf(last_warning, sizeof last_warning, "%s", msg);
    nwarnings++;
}

/* Reads the whole trace; returns the error message (static) or NULL. */
static const char *read_all(const bytes *b, size_t *nevents)
{
    static char msg[600];
    mt_reader_options o = {.on_warning = on_warning};
    char *err = NULL;
    nwarnings = 0;
    *nevents = 0;
    mt_reader *r = mt_reader_open_memory(b->d, b->n, "bad.ctf", &o, &err);
    if (!r) {
        snprintf(msg, sizeof msg, "%s", err ? err : "(no message)");
        free(err);
        return msg;
    }
    mt_event e;
    int rc;
    while ((rc = mt_reader_next(r, &e)) == 1)
        (*nevents)++;
    const char *res = NULL;
    if (rc < 0) {
        snprintf(msg, sizeof msg, "%s", mt_reader_error(r));
        res = msg;
    }
    mt_reader_close(r);
    return res;
}

/* The trace must fail with "bad.ctf: offset OFF: ..." containing reason. */
static void expect_error(const char *what, const bytes *b, unsigned long off, const char *reason)
{
    size_t n;
    const char *m = read_all(b, &n);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "bad.ctf: offset %lu: ", off);
    if (m && strncmp(m, prefix, strlen(prefix)) == 0 && strstr(m, reason)) {
        printf("PASS: %s -> %s\n", what, m);
    } else {
        printf("FAIL: %s: expected \"%s...%s\", got \"%s\"\n", what, prefix, reason,
               m ? m : "(no error)");
        failures++;
    }
}

int main(void)
{
    bytes b;
    size_t info_len, at, n;

    /* The valid base: trace info, one events packet with one short alloc. */
    b.n = 0;
    info_packet(&b);
    info_len = b.n;
    at = begin_packet(&b, T0 + 10, T0 + 20, PID, 0, 1);
    ev(&b, 101, T0 + 15);  /* 1-word short alloc */
    u8(&b, 0);             /* common prefix */
    u8(&b, 1);             /* one codeword */
    u16(&b, 5 << 2 | 3);   /* miss into bucket 5 */
    u64(&b, 0xABCDEF);
    end_packet(&b, at);
    const char *m = read_all(&b, &n);
    CHECK(m == NULL && n == 1, "hand-made base trace reads (1 event): %s", m ? m : "ok");
    bytes base = b;

    /* 1. Not a trace at all. */
    b = base;
    b.d[0] = 'X';
    expect_error("bad magic", &b, 0, "bad magic");
    /* 2. Empty file, truncated first header, truncated trace-info packet. */
    b.n = 0;
    expect_error("empty file", &b, 0, "empty file");
    b = base;
    b.n = 40;
    expect_error("truncated header", &b, 0, "truncated packet header");
    b = base;
    b.n = info_len - 3;
    expect_error("truncated trace-info packet", &b, 0, "truncated trace-info packet");
    /* 3. Version from the future, in the first and in a later packet. */
    b = base;
    b.d[28] = 9;
    expect_error("unsupported version", &b, 28, "unsupported format version 9");
    b = base;
    b.d[info_len + 28] = 1;
    expect_error("version change", &b, info_len + 28, "format version 1 in a version 2 trace");
    /* 4. Bad event code in the events packet. */
    b = base;
    b.d[info_len + 66 + 3] = (unsigned char)(50 << 1 | (b.d[info_len + 66 + 3] & 1));
    expect_error("bad event code", &b, info_len + 66, "unknown event code 50");
    /* 5. Packet size smaller than the header, and not whole bytes. */
    b = base;
    put32_at(&b, info_len + 4, 10 * 8);
    expect_error("packet smaller than header", &b, info_len + 4, "smaller than its 66-byte header");
    b = base;
    put32_at(&b, info_len + 4, 1001);
    expect_error("packet size in odd bits", &b, info_len + 4, "not whole bytes");
    /* 6. Times: begin after end; event outside the packet's range. */
    b = base;
    b.d[info_len + 8] = 0xFF;
    expect_error("begin after end", &b, info_len + 8, "after its end");
    b = base;
    put32_at(&b, info_len + 66, 101u << 25 | (uint32_t)((T0 + 25) & 0x1FFFFFF));
    expect_error("event outside its packet's time range", &b, info_len + 66, "outside its packet's range");
    /* 7. Declared ids disagree with the allocations present. */
    b = base;
    b.d[info_len + 58] = 3;
    expect_error("alloc id sync", &b, info_len + 58, "allocation ids up to 3");
    /* 8. Extra bytes after the trace-info event. */
    b.n = 0;
    at = begin_packet(&b, T0, T0, PID, 0, 0);
    ev(&b, 0, T0);
    u64(&b, 0x3FF0000000000000ull);
    u8(&b, 64);
    str(&b, "e"); str(&b, "h"); str(&b, ""); u64(&b, PID); str(&b, ""); u8(&b, 1);
    end_packet(&b, at);
    expect_error("junk after trace info", &b, at + b.n - 1, "unexpected bytes after the trace-info event");
    /* 9. A string without its NUL (runs to the packet end). */
    b.n = 0;
    at = begin_packet(&b, T0, T0, PID, 0, 0);
    ev(&b, 0, T0);
    u64(&b, 0x3FF0000000000000ull);
    u8(&b, 64);
    u8(&b, 'e');
    end_packet(&b, at);
    expect_error("unterminated string", &b, 66 + 13, "executable name runs past the end");

    /* Events packets built from scratch after the valid info packet. */
#define EVENTS(id0, id1) (b = base, b.n = info_len, at = begin_packet(&b, T0 + 10, T0 + 20, PID, id0, id1))
    /* 10. A vint cut by the packet's end. */
    EVENTS(0, 1);
    ev(&b, 2, T0 + 12);
    u8(&b, 255);
    u16(&b, 0);
    end_packet(&b, at);
    expect_error("vint past the packet end", &b, info_len + 70, "allocation length runs past the end");
    /* 11. Bad allocation source. */
    EVENTS(0, 1);
    ev(&b, 2, T0 + 12);
    u8(&b, 3); u8(&b, 1); u8(&b, 7); u8(&b, 0); u16(&b, 0);
    end_packet(&b, at);
    expect_error("bad source byte", &b, info_len + 72, "bad allocation source 7");
    /* 12. A codeword count larger than the codewords present. */
    EVENTS(0, 1);
    ev(&b, 101, T0 + 12);
    u8(&b, 0); u8(&b, 3); u16(&b, 1 << 2);
    end_packet(&b, at);
    expect_error("missing codewords", &b, info_len + 74, "backtrace codeword runs past the end");
    /* 13. MTF: a file name code pointing at an empty slot, then a function
     * name code pointing at an empty slot of a known file. */
    EVENTS(0, 0);
    ev(&b, 1, T0 + 12);
    u64(&b, 0x1234); u8(&b, 1);
    u32(&b, 10); u16(&b, 5 << 6 | 31 << 11); /* file code 5, defname literal */
    str(&b, "f");
    end_packet(&b, at);
    expect_error("MTF file index to an empty slot", &b, info_len + 79, "file name code 5 refers to an empty table slot");
    EVENTS(0, 0);
    ev(&b, 1, T0 + 12);
    u64(&b, 0x1234); u8(&b, 1);
    u32(&b, 10); u16(&b, 31 << 6 | 2 << 11); /* file literal, defname code 2 */
    str(&b, "file.c");
    end_packet(&b, at);
    expect_error("MTF name index to an empty slot", &b, info_len + 79, "function name code 2 refers to an empty table slot");
    /* 14. The same code described twice, differently. */
    EVENTS(0, 0);
    for (int i = 0; i < 2; i++) {
        ev(&b, 1, T0 + 12);
        u64(&b, 0x1234); u8(&b, 1);
        u32(&b, 10 + (uint32_t)i); u16(&b, 31 << 6 | 31 << 11);
        str(&b, "file.c"); str(&b, "fn");
    }
    end_packet(&b, at);
    expect_error("contradicting location events", &b, info_len + 66 + 29, "contradicts an earlier one");
    /* 15. Promotion with a negative delta; collection of an object before id 0. */
    EVENTS(0, 0);
    ev(&b, 3, T0 + 12);
    u8(&b, 254); u32(&b, 0xFFFFFFFF);
    end_packet(&b, at);
    expect_error("negative promotion delta", &b, info_len + 66, "negative object delta -1");
    EVENTS(0, 0);
    ev(&b, 4, T0 + 12);
    u8(&b, 0);
    end_packet(&b, at);
    expect_error("collection before the first object", &b, info_len + 66, "refers to an object before id 0");
    /* 16. A second trace-info event. */
    EVENTS(0, 0);
    ev(&b, 0, T0 + 12);
    end_packet(&b, at);
    expect_error("second trace info", &b, info_len + 66, "a second trace-info event");
    /* 17. Time going backwards between packets that are otherwise in order
     * is skipped (memtrace 0.2.x); inside a packet it is an error. */
    EVENTS(0, 0);
    ev(&b, 1, T0 + 15); u64(&b, 1); u8(&b, 0);
    ev(&b, 1, T0 + 12); u64(&b, 2); u8(&b, 0);
    end_packet(&b, at);
    expect_error("time going backwards", &b, info_len + 66 + 13, "before the previous event's");
    /* 18. Cache verification failure: slot 5 should hold 0xABCDEF. */
    b = base;
    at = begin_packet(&b, T0 + 30, T0 + 30, PID, 1, 1);
    end_packet(&b, at);
    b.d[at + 38] = 5; b.d[at + 39] = 0;
    b.d[at + 42] = 0xEE;
    expect_error("cache verification", &b, at + 38, "cache verification failed at slot 5");
    b.d[at + 42] = 0xEF; b.d[at + 43] = 0xCD; b.d[at + 44] = 0xAB;
    m = read_all(&b, &n);
    CHECK(m == NULL && n == 1, "a correct verifier passes: %s", m ? m : "ok");

    /* Skipped with a warning, not errors. */
    b = base;
    at = begin_packet(&b, T0 + 30, T0 + 30, 999, 1, 2);
    ev(&b, 101, T0 + 30); u8(&b, 0); u8(&b, 0);
    end_packet(&b, at);
    m = read_all(&b, &n);
    CHECK(m == NULL && n == 1 && nwarnings == 1 && strstr(last_warning, "pid 999"),
          "foreign-pid packet skipped with a warning: %s", last_warning);
    b = base;
    at = begin_packet(&b, T0 + 30, T0 + 30, PID, 1, 2);
    put32_at(&b, at + 4, 0xFFFFFFF8u); /* claims ~512 MiB */
    m = read_all(&b, &n);
    CHECK(m == NULL && n == 1 && nwarnings == 1 &&
              strstr(last_warning, "bad.ctf: offset ") && strstr(last_warning, "truncated"),
          "huge packet size at the end: skipped as truncated: %s", last_warning);
    b = base;
    b.n += 20; /* a header cut short after the last packet */
    memcpy(b.d + base.n, b.d, 20);
    m = read_all(&b, &n);
    CHECK(m == NULL && n == 1 && nwarnings == 1 && strstr(last_warning, "truncated packet header"),
          "truncated trailing header skipped with a warning: %s", last_warning);

    /* A directory is not a trace: read error with the name. */
    char *err = NULL;
    mt_reader *r = mt_reader_open(".", NULL, &err);
    CHECK(!r && err && strncmp(err, ".: offset 0: read error", 23) == 0,
          "reading a directory fails with a read error: %s", err ? err : "?");
    free(err);
    err = NULL;
    r = mt_reader_open("/nonexistent/trace.ctf", NULL, &err);
    CHECK(!r && err && strstr(err, "/nonexistent/trace.ctf: No such file"),
          "a missing file names the file: %s", err ? err : "?");
    free(err);

    /* Streaming from a pipe with a huge declared packet: bounded memory. */
    int fds[2];
    if (pipe(fds) == 0) {
        b = base;
        at = begin_packet(&b, T0 + 30, T0 + 30, PID, 1, 2);
        put32_at(&b, at + 4, 0xFFFFFFF8u);
        if (write(fds[1], b.d, b.n) == (ssize_t)b.n) {
            close(fds[1]);
            mt_reader_options o = {.on_warning = on_warning};
            nwarnings = 0;
            r = mt_reader_open_fd(fds[0], "pipe", &o, NULL);
            mt_event e;
            int k = 0, rc;
            while (r && (rc = mt_reader_next(r, &e)) == 1)
                k++;
            CHECK(r && k == 1 && nwarnings == 1, "pipe input with a huge last packet: skipped");
            mt_reader_close(r);
        }
        close(fds[0]);
    }
    return failures ? 1 : 0;
}
