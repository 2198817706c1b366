/*
 * protowire.h - the protobuf wire writer the output formats share (pprof's
 * profile.proto in pprof.c, OTLP profiles in otlp.c): a growable byte
 * buffer and the few field kinds they need (varints, length-delimited
 * bytes, UTF-8 strings, embedded messages, packed varints). Proto3 rules:
 * a varint field of value zero is omitted. An allocation failure sets oom
 * and empties the buffer; every later call is then a no-op the caller
 * checks once at the end.
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

#endif
