/*
 * buf.h - little-endian fixed-width integers and memtrace's variable-length
 * integers (vints), read from and written to plain byte arrays.
 *
 * The format is little-endian whatever the host; these helpers assemble
 * values byte by byte (the compiler turns them into single loads/stores on
 * x86 and ARM). Bounds are the caller's business: the reader checks them
 * before calling these.
 */
#ifndef MT_TRACE_BUF_H
#define MT_TRACE_BUF_H

#include <stdint.h>
#include <string.h>

#include "check.h"

static inline uint16_t mt_get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t mt_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static inline uint64_t mt_get64(const uint8_t *p)
{
    return (uint64_t)mt_get32(p) | ((uint64_t)mt_get32(p + 4) << 32);
}

static inline void mt_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void mt_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void mt_put64(uint8_t *p, uint64_t v)
{
    mt_put32(p, (uint32_t)v);
    mt_put32(p + 4, (uint32_t)(v >> 32));
}

/* Size in bytes of a vint's encoding, given its first (tag) byte. */
static inline unsigned mt_vint_size(uint8_t tag)
{
    if (tag < 253)
        return 1;
    return tag == 253 ? 3 : tag == 254 ? 5 : 9;
}

/* Decode a vint whose mt_vint_size(p[0]) bytes are all available. Values are
 * what the OCaml reader sees: tag 254 carries a signed 32-bit number, tag 255
 * a 64-bit one of which the top bit is lost (OCaml ints have 63 bits). */
static inline int64_t mt_get_vint(const uint8_t *p)
{
    uint8_t tag = p[0];
    if (tag < 253)
        return tag;
    if (tag == 253)
        return mt_get16(p + 1);
    if (tag == 254)
        return (int32_t)mt_get32(p + 1);
    return (int64_t)(mt_get64(p + 1) << 1) >> 1;
}

/* Encode v in the shortest form the OCaml writer would choose; returns the
 * number of bytes written (at most 9). */
static inline unsigned mt_put_vint(uint8_t *p, uint64_t v)
{
    if (v < 253) {
        p[0] = (uint8_t)v;
        return 1;
    }
    if (v <= 0xFFFF) {
        p[0] = 253;
        mt_put16(p + 1, (uint16_t)v);
        MT_ASSERT(mt_get_vint(p) == (int64_t)v);
        return 3;
    }
    if (v <= 0x7FFFFFFF) {
        p[0] = 254;
        mt_put32(p + 1, (uint32_t)v);
        MT_ASSERT(mt_get_vint(p) == (int64_t)v);   /* reads back: the shortest form holds it */
        return 5;
    }
    p[0] = 255;
    mt_put64(p + 1, v);
    return 9;
}

#endif
