/*
 * sinktrace.h - what the codec's unit tests of small traces share: CHECK
 * (tests/check.h), an in-memory sink for the writer, and a writer of a v2 trace of a C
 * program (8-bit words) whose every location code is f.c:1 f.
 * Header-only: each test is one .c file.
 */
#ifndef MT_TESTS_SINKTRACE_H
#define MT_TESTS_SINKTRACE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "memtrace/trace.h"

/* The start time of every trace written here. */
#define ST_START 1700000000000000LL

/* A trace in memory (a static one: 1 MiB). */
typedef struct sink {
    unsigned char data[1 << 20];
    size_t len;
} sink;

static inline int sink_write(void *ctx, const void *buf, size_t len)
{
    sink *s = ctx;
    if (s->len + len > sizeof s->data)
        return -1;
    memcpy(s->data + s->len, buf, len);
    s->len += len;
    return 0;
}

static inline int sink_resolve(void *ctx, mt_location_code code, const mt_location **locs,
                               size_t *n)
{
    (void)ctx;
    (void)code;
    static const mt_location loc = { "f.c", "f", 1, 0, 0 };
    *locs = &loc;
    *n = 1;
    return 0;
}

/* A writer of a new trace into s (emptied); exits the test if it cannot. */
static inline mt_writer *sink_writer_open(sink *s)
{
    mt_trace_info info;
    memset(&info, 0, sizeof info);
    info.sample_rate = 1e-4;
    info.word_size = 8;
    info.executable_name = "x";
    info.host_name = "h";
    info.ocaml_runtime_params = "";
    info.pid = 42;
    info.start_time = ST_START;
    info.context = "";
    mt_writer_options o;
    memset(&o, 0, sizeof o);
    o.version = 2;
    o.resolve = sink_resolve;
    o.write = sink_write;
    o.write_ctx = s;
    char *err = NULL;
    s->len = 0;
    mt_writer *w = mt_writer_open(-1, &info, &o, &err);
    if (!w) {
        printf("FAIL: writer: %s\n", err);
        exit(1);
    }
    return w;
}

#endif
