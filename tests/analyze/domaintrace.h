/*
 * domaintrace.h - a small v3 trace that three OCaml 5 domains wrote into
 * one file, made with the codec's writer (for tests/analyze/domains.c and
 * tests/tools/gen_domains.c): one writer per domain (0, 5 and 300: a
 * number above a byte's), their packets put in time order in one file, the
 * later domains' ids moved to chunks of their own as OCaml 5's shared id
 * counter gives them. Sample rate 1 per 64-bit word.
 *
 *   domain 0    t 0-999     10 blocks of 8 words (main;parse), 5 freed
 *   domain 5    t 1000-1999  4 blocks of 100 words (main;load), 1 freed
 *   domain 300  t 2000-2999  3 blocks of 2 words (main;leak)
 *   domain 0    t 3000-3999  2 blocks of 8 words; domain 5 frees one more
 *
 * Each domain's writer writes into a sink of tests/trace/sinktrace.h. Header-only.
 */
#ifndef MT_TESTS_DOMAINTRACE_H
#define MT_TESTS_DOMAINTRACE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/trace/format.h"
#include "../trace/sinktrace.h"
#include "testtrace.h"

static inline size_t dt_packet_bytes(const unsigned char *p)
{
    uint32_t bits;
    memcpy(&bits, p + MT_HDR_SIZE_BITS, 4);
    return bits / 8;
}

/* Adds delta to the id range of every v3 packet of b from offset from on. */
static inline void dt_shift_ids(sink *b, size_t from, uint64_t delta)
{
    for (size_t off = from; off + MT_HDR_SIZE_V3 <= b->len; off += dt_packet_bytes(b->data + off)) {
        for (int k = 0; k < 2; k++) {
            size_t at = off + 2 + (k ? MT_HDR_ID_END : MT_HDR_ID_BEGIN);
            uint64_t v;
            memcpy(&v, b->data + at, 8);
            v += delta;
            memcpy(b->data + at, &v, 8);
        }
        if (dt_packet_bytes(b->data + off) == 0)
            break;
    }
}

enum { NDOM = 3 };
static const unsigned dt_domains[NDOM] = {0, 5, 300};

/* The trace at path; 0, or -1 (the reason on stderr; exits when a writer
 * cannot even start). */
static inline int dt_write_trace(const char *path)
{
    sink *b = calloc(NDOM, sizeof *b);
    if (!b)
        return -1;
    mt_writer *w[NDOM];
    mt_trace_info info = tt_info("domains-test", 1, 64);
    for (int d = 0; d < NDOM; d++) {
        mt_writer_options o = {.version = 3, .domain = dt_domains[d], .resolve = tt_resolve,
                               .write = sink_write, .write_ctx = &b[d]};
        char *err = NULL;
        if (!(w[d] = mt_writer_open(-1, &info, &o, &err))) {
            fprintf(stderr, "writer: %s\n", err ? err : "?");
            exit(1);
        }
        mt_writer_flush(w[d]);
    }
    /* where each domain's phases end in its buffer */
    size_t mark[NDOM][3] = {{0}};
    for (int d = 0; d < NDOM; d++)
        mark[d][0] = b[d].len;   /* the trace-info packet */
    mt_location_code parse[] = {TT_MAIN, TT_PARSE}, load[] = {TT_MAIN, TT_LOAD},
                     leak[] = {TT_MAIN, TT_LEAK};
    mt_obj_id id0[12], id5[4], id;
    int rc = 0;
    for (int i = 0; i < 10; i++) {
        rc |= mt_writer_put_alloc(w[0], TT_START + 10 + i * 50, 8, 8, MT_SOURCE_MINOR, parse, 2, &id0[i]);
        if (i % 2)
            rc |= mt_writer_put_collect(w[0], TT_START + 20 + i * 50, id0[i]);
    }
    for (int i = 0; i < 4; i++)
        rc |= mt_writer_put_alloc(w[1], TT_START + 1100 + i * 100, 100, 100, MT_SOURCE_MAJOR, load, 2, &id5[i]);
    rc |= mt_writer_put_collect(w[1], TT_START + 1900, id5[0]);
    for (int i = 0; i < 3; i++)
        rc |= mt_writer_put_alloc(w[2], TT_START + 2100 + i * 100, 2, 2, MT_SOURCE_MINOR, leak, 2, &id);
    for (int d = 0; d < NDOM; d++) {
        rc |= mt_writer_flush(w[d]);
        mark[d][1] = b[d].len;
    }
    for (int i = 10; i < 12; i++)
        rc |= mt_writer_put_alloc(w[0], TT_START + 3000 + i * 10, 8, 8, MT_SOURCE_MINOR, parse, 2, &id0[i]);
    rc |= mt_writer_put_collect(w[1], TT_START + 3500, id5[1]);
    for (int d = 0; d < NDOM; d++) {
        rc |= mt_writer_close(w[d]);
        mark[d][2] = b[d].len;
    }
    if (rc) {
        fprintf(stderr, "a writer failed\n");
        free(b);
        return -1;
    }
    dt_shift_ids(&b[1], 0, (uint64_t)1 << 20);
    dt_shift_ids(&b[2], 0, (uint64_t)2 << 20);
    /* domain 0's trace info; each phase of 0, 5 and 300; the second */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        free(b);
        return -1;
    }
    rc |= write(fd, b[0].data, mark[0][0]) != (ssize_t)mark[0][0];
    for (int ph = 1; ph <= 2; ph++)
        for (int d = 0; d < NDOM; d++) {
            size_t n = mark[d][ph] - mark[d][ph - 1];
            rc |= write(fd, b[d].data + mark[d][ph - 1], n) != (ssize_t)n;
        }
    close(fd);
    free(b);
    return rc ? -1 : 0;
}

#endif
