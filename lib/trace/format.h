/*
 * format.h - constants of memtrace's trace format shared by the reader and
 * the writer: packet header layout, event codes, backtrace cache geometry.
 * docs/format.md explains what each of them means.
 */
#ifndef MT_TRACE_FORMAT_H
#define MT_TRACE_FORMAT_H

#include <stdint.h>

#define MT_MAGIC 0xC1FC1FC1u
#define MT_MAX_VERSION 3

/* Packet header: 66 bytes in v1/v2; v3 inserts a u16 domain at offset 38. */
#define MT_HDR_SIZE_V2 66
#define MT_HDR_SIZE_V3 68
#define MT_HDR_MAGIC 0
#define MT_HDR_SIZE_BITS 4
#define MT_HDR_TIME_BEGIN 8
#define MT_HDR_TIME_END 16
#define MT_HDR_FLUSH 24
/* flush_duration (always 0 for OCaml, ignored by every reader) of the packet
 * our writer writes when the recording process ends: see mt_writer_flush_until. */
#define MT_FLUSH_END_MARK 0x454e4421u
/* flush_duration of a packet whose allocations are blocks carried over from
 * the previous piece of a rotated recording: see mt_writer_set_carried. */
#define MT_FLUSH_CARRY_MARK 0x43415259u
#define MT_HDR_VERSION 28
#define MT_HDR_PID 30
#define MT_HDR_DOMAIN 38 /* v3 only */
/* Offsets of the following fields in a v1/v2 header; add 2 in v3. */
#define MT_HDR_VERIFY_IX 38
#define MT_HDR_VERIFY_PRED 40
#define MT_HDR_VERIFY_VAL 42
#define MT_HDR_ID_BEGIN 50
#define MT_HDR_ID_END 58

#define MT_MAX_PACKET 32768      /* writer's packet buffer */
#define MT_NO_VERIFY 0xFFFF      /* cache_verify_ix meaning "no check" */

/* Event header: low 25 bits of the time, then a 7-bit code. */
#define MT_TIME_BITS 25
#define MT_TIME_MASK ((1u << MT_TIME_BITS) - 1)
enum {
    MT_EV_INFO = 0,
    MT_EV_LOCATION = 1,
    MT_EV_ALLOC = 2,
    MT_EV_PROMOTE = 3,
    MT_EV_COLLECT = 4,
    MT_EV_SHORT_ALLOC = 100 /* 101..116: short allocation of 1..16 words */
};

/* Backtrace cache shared in spirit by both sides: 2^14 slots. */
#define MT_CACHE_BITS 14
#define MT_CACHE_SIZE (1u << MT_CACHE_BITS)

/* Move-to-front tables of file and function names: 31 entries each. */
#define MT_MTF_SIZE 31
#define MT_MTF_LITERAL 31

/* Location bit-field widths (line 20, start 8, end 10, two 5-bit MTF codes). */
#define MT_LOC_LINE_MAX 0xFFFFFu
#define MT_LOC_START_MAX 0xFFu
#define MT_LOC_END_MAX 0x3FFu

/* OCaml ints have 63 bits: codes read from a trace keep the low 63. */
#define MT_CODE_MASK 0x7FFFFFFFFFFFFFFFull

#endif
