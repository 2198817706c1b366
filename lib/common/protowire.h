/*
 * protowire.h - the protobuf wire format, both directions, in one place
 * (protowire.c): written by hand, since the schemas are small and a
 * generated codec would need a code generator at build time.
 *
 * Writing, for the output formats (pprof's profile.proto in
 * lib/present/pprof.c, OTLP profiles in lib/present/otlp.c): a growable
 * byte buffer and the few field kinds they need (varints, length-delimited
 * bytes, UTF-8 strings, embedded messages, packed varints). Proto3 rules:
 * a varint field of value zero is omitted. An allocation failure sets oom
 * and empties the buffer; every later call is then a no-op the caller
 * checks once at the end.
 *
 * Reading, for pprof profiles given as input (lib/analyze/profile_read.c):
 * a cursor over bytes in memory that checks everything against hostile
 * input: a length beyond what is left of its message, a varint longer
 * than 10 bytes or beyond 64 bits, field number 0, groups and unknown
 * wire types are errors, each with its offset from the start of the
 * input. It allocates nothing.
 *
 * Compiled into the analysis library only (never the recorder's).
 */
#ifndef MEMTRACE_PROTOWIRE_H
#define MEMTRACE_PROTOWIRE_H

#include <stddef.h>
#include <stdint.h>

typedef struct mt_pb {
    uint8_t *b;
    size_t n, cap;
    int oom;
} mt_pb;

/* room for k more bytes (sets oom on failure) */
void mt_pb_need(mt_pb *p, size_t k);
void mt_pb_varint(mt_pb *p, uint64_t v);
/* a varint field; zero is omitted */
void mt_pb_uint(mt_pb *p, unsigned field, uint64_t v);
/* a varint field written even when zero (inside packed or oneof-like uses) */
void mt_pb_uint_always(mt_pb *p, unsigned field, uint64_t v);
/* a 64-bit little-endian field (wire type 1: fixed64); zero is omitted */
void mt_pb_fixed64(mt_pb *p, unsigned field, uint64_t v);
void mt_pb_bytes(mt_pb *p, unsigned field, const void *data, size_t len);
/* a string field: each byte that does not begin a well-formed UTF-8
 * character is written as U+FFFD (protobuf decoders reject the message
 * otherwise) */
void mt_pb_utf8(mt_pb *p, unsigned field, const char *s);
/* append sub as an embedded message field, then empty sub (an oom of sub
 * becomes p's) */
void mt_pb_msg(mt_pb *p, unsigned field, mt_pb *sub);
/* packed repeated varints, built in tmp */
void mt_pb_packed(mt_pb *p, unsigned field, const uint64_t *v, size_t n, mt_pb *tmp);
void mt_pb_free(mt_pb *p);

/* A string table (pprof's and OTLP's string_table): each distinct string
 * once, in first-use order, by pointer (the strings must outlive it). */
typedef struct mt_pb_strtab {
    const char **v;
    size_t n, cap;
    uint32_t *slots;     /* index + 1 */
    size_t mask;
    int oom;
} mt_pb_strtab;

/* s's index, added if new (0 and oom set on allocation failure) */
uint64_t mt_pb_str_index(mt_pb_strtab *t, const char *s);
void mt_pb_strtab_free(mt_pb_strtab *t);

/* ---- reading ---- */

/* The wire types a reader accepts (3 and 4, groups, are refused). */
enum { MT_PB_VARINT = 0, MT_PB_I64 = 1, MT_PB_LEN = 2, MT_PB_I32 = 5 };

/* A cursor over one message [p, end) of the input that starts at base.
 * The first failure is kept (why, at why_off bytes from base); every
 * later one is ignored. Start one with { base, base, base + len }. */
typedef struct mt_pb_in {
    const uint8_t *base;     /* the whole input: offsets are from here */
    const uint8_t *p, *end;  /* the message being read */
    char why[200];
    size_t why_off;
    int failed;
} mt_pb_in;

/* Records a failure at at (unless one is recorded already): -1. */
int mt_pb_fail(mt_pb_in *d, const uint8_t *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A varint: 0, or -1 ("truncated varint", "varint beyond 64 bits",
 * "varint longer than 10 bytes"). */
int mt_pb_read_varint(mt_pb_in *d, uint64_t *out);
/* A field's key: its number (not 0) and an accepted wire type. 0 or -1. */
int mt_pb_read_key(mt_pb_in *d, uint64_t *field, unsigned *wt);
/* A length-delimited field's bytes: sub covers them (same base), d moves
 * past them. 0 or -1 (a length beyond the bytes left). */
int mt_pb_read_len(mt_pb_in *d, mt_pb_in *sub);
/* Moves past a field's value of wire type wt. 0 or -1. */
int mt_pb_skip(mt_pb_in *d, unsigned wt);
/* A failure of sub, a cursor inside d, becomes d's: -1; else 0. */
int mt_pb_up(mt_pb_in *d, const mt_pb_in *sub);

#endif
