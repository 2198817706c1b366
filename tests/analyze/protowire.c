/*
 * protowire.c - unit test of the protobuf wire codec (lib/common/protowire.h):
 * bytes the writer makes, spelled out by hand from the protobuf encoding
 * rules, read back by the reader; and the reader's refusals of hostile
 * input, each with its message and its offset.
 */
#include <stdio.h>
#include <string.h>

#include "protowire.h"

static int failures;

static void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "PASS" : "FAIL", what);
    failures += !ok;
}

static mt_pb_in cursor(const uint8_t *b, size_t n)
{
    mt_pb_in d;
    memset(&d, 0, sizeof d);
    d.base = d.p = b;
    d.end = b + n;
    return d;
}

/* Reads one field of b; the failure's message and offset. */
static int refused(const uint8_t *b, size_t n, const char *why, size_t off)
{
    mt_pb_in d = cursor(b, n), sub;
    uint64_t f, v;
    unsigned wt;
    if (mt_pb_read_key(&d, &f, &wt) == 0) {
        if (wt == MT_PB_LEN)
            mt_pb_read_len(&d, &sub);
        else if (wt == MT_PB_VARINT)
            mt_pb_read_varint(&d, &v);
        else
            mt_pb_skip(&d, wt);
    }
    if (!d.failed || strcmp(d.why, why) || d.why_off != off)
        printf("  got: failed %d, \"%s\" at %zu\n", d.failed, d.why, d.why_off);
    return d.failed && !strcmp(d.why, why) && d.why_off == off;
}

int main(void)
{
    mt_pb p = {0}, sub = {0}, tmp = {0};
    mt_pb_uint(&p, 1, 150);           /* 08 96 01: the encoding guide's example */
    mt_pb_uint(&p, 2, 0);             /* omitted */
    mt_pb_utf8(&sub, 1, "ab\xff");    /* 0a 05 'a' 'b' ef bf bd */
    mt_pb_msg(&p, 3, &sub);           /* 1a 07 ... */
    uint64_t v[] = { 1, 300 };
    mt_pb_packed(&p, 4, v, 2, &tmp);  /* 22 03 01 ac 02 */
    mt_pb_fixed64(&p, 5, 0x0102030405060708ull);   /* 29 08 07 06 05 04 03 02 01 */
    static const uint8_t want[] = { 0x08, 0x96, 0x01, 0x1a, 0x07, 0x0a, 0x05, 'a', 'b',
                                    0xef, 0xbf, 0xbd, 0x22, 0x03, 0x01, 0xac, 0x02, 0x29,
                                    0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01 };
    check(!p.oom && p.n == sizeof want && !memcmp(p.b, want, sizeof want),
          "writer: the bytes the encoding rules give");

    mt_pb_in d = cursor(p.b, p.n), m, in;
    uint64_t f, x, y;
    unsigned wt;
    int ok = mt_pb_read_key(&d, &f, &wt) == 0 && f == 1 && wt == MT_PB_VARINT &&
             mt_pb_read_varint(&d, &x) == 0 && x == 150;
    ok = ok && mt_pb_read_key(&d, &f, &wt) == 0 && f == 3 && wt == MT_PB_LEN &&
         mt_pb_read_len(&d, &m) == 0 && m.end - m.p == 7 && mt_pb_read_key(&m, &f, &wt) == 0 &&
         f == 1 && mt_pb_read_len(&m, &in) == 0 && in.end - in.p == 5 &&
         !memcmp(in.p, "ab\xef\xbf\xbd", 5) && m.p == m.end;
    ok = ok && mt_pb_read_key(&d, &f, &wt) == 0 && f == 4 && mt_pb_read_len(&d, &m) == 0 &&
         mt_pb_read_varint(&m, &x) == 0 && mt_pb_read_varint(&m, &y) == 0 && x == 1 &&
         y == 300 && m.p == m.end;
    ok = ok && mt_pb_read_key(&d, &f, &wt) == 0 && f == 5 && wt == MT_PB_I64 &&
         mt_pb_skip(&d, wt) == 0 && d.p == d.end && !d.failed;
    check(ok, "reader: the writer's fields back, nested and packed");

    static const uint8_t trunc[] = { 0x08, 0x96 };
    check(refused(trunc, sizeof trunc, "truncated varint", 1), "truncated varint, at its start");
    static const uint8_t big[] = { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 };
    check(refused(big, sizeof big, "varint beyond 64 bits", 1), "varint beyond 64 bits");
    static const uint8_t field0[] = { 0x00, 0x01 };
    check(refused(field0, sizeof field0, "field number 0", 0), "field number 0");
    static const uint8_t group[] = { 0x0b };
    check(refused(group, sizeof group, "field 1: wire type 3 (groups or unknown) not allowed", 0),
          "a group is refused");
    static const uint8_t longlen[] = { 0x0a, 0x05, 'a', 'b' };
    check(refused(longlen, sizeof longlen, "length 5 beyond the 2 bytes left", 1),
          "a length beyond the message");
    static const uint8_t fixed[] = { 0x09, 1, 2, 3 };
    check(refused(fixed, sizeof fixed, "truncated fixed-size field", 1),
          "a fixed64 cut short");

    /* a failure inside a sub-message goes up with its own offset */
    static const uint8_t nested[] = { 0x1a, 0x02, 0x08, 0x80 };
    d = cursor(nested, sizeof nested);
    ok = mt_pb_read_key(&d, &f, &wt) == 0 && mt_pb_read_len(&d, &m) == 0 &&
         mt_pb_read_key(&m, &f, &wt) == 0 && mt_pb_read_varint(&m, &x) < 0 &&
         mt_pb_up(&d, &m) < 0 && !strcmp(d.why, "truncated varint") && d.why_off == 3;
    check(ok, "a sub-message's failure becomes the message's, offset from the input's start");

    mt_pb_free(&p);
    mt_pb_free(&sub);
    mt_pb_free(&tmp);
    return failures ? 1 : 0;
}
