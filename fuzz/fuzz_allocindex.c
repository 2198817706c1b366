/*
 * fuzz_allocindex.c - libFuzzer target for the allocation index
 * (lib/analyze/allocindex.c): an index file is opened and folded (no
 * filter, and a filter with stack and allocation clauses) against the
 * model of a small trace made once at start. Any byte string must give a
 * fold or a clean refusal: no crash, no sanitizer report, no hang.
 *
 * The first input byte chooses what the rest is: even, the records of an
 * index under the good header of the start's index (cut or padded to the
 * header's length: the records are decoded before their hash is found
 * wrong, so the decoder meets every mutation); odd, a whole file.
 *
 *   make fuzz                        # builds build/fuzz/fuzz_allocindex (clang)
 *   mkdir -p /tmp/corpus && build/fuzz/fuzz_allocindex -max_total_time=600 \
 *       -rss_limit_mb=1024 /tmp/corpus
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../lib/analyze/load.h"
#include "memtrace/analyze.h"
#include "memtrace/stream.h"
#include "memtrace/trace.h"

#define HDR 128

static const mt_location locs[4] = {
    {"a.c", "main", 1, 0, 0}, {"a.c", "parse", 2, 0, 0}, {"b.c", "grow", 3, 0, 0},
    {"b.c", "leak", 4, 0, 0},
};

static int resolve(void *ctx, mt_location_code code, const mt_location **l, size_t *n)
{
    (void)ctx;
    if (code < 0x100 || code >= 0x104)
        return -1;
    *l = &locs[code - 0x100];
    *n = 1;
    return 0;
}

static mt_model *base;
static mt_alloc_index_id id;
static unsigned char *good;      /* the start's index file */
static size_t good_len;
static mt_filter *filter;

static int put(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    (void)m;
    return mt_alloc_index_writer_add(ctx, a, seq);
}

/* A trace of a few hundred allocations, its folded model and its index. */
static int setup(void)
{
    char path[] = "/tmp/fuzz-allocindex-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    mt_trace_info info = {0};
    info.sample_rate = 0.01;
    info.word_size = 64;
    info.executable_name = "fuzz";
    info.host_name = "h";
    info.ocaml_runtime_params = "";
    info.pid = 1;
    info.start_time = 1000000000;
    mt_writer_options wo = {0};
    wo.resolve = resolve;
    char *err = NULL;
    mt_writer *w = mt_writer_open(fd, &info, &wo, &err);
    if (!w)
        return -1;
    mt_timestamp t = info.start_time;
    mt_obj_id prev = 0;
    for (int i = 0; i < 300; i++) {
        uint64_t st[3] = {0x100, 0x101 + (uint64_t)(i % 2), 0x102 + (uint64_t)(i % 3 == 0)};
        mt_obj_id oid;
        t += 1 + i % 7;
        mt_writer_put_alloc(w, t, 1 + (uint64_t)(i * 37 % 900), 1 + (uint64_t)(i % 4),
                            (mt_source)(i % 3), st, 1 + (size_t)(i % 3), &oid);
        if (i % 11 == 0)
            mt_writer_put_promote(w, t, oid);
        if (i && i % 5)
            mt_writer_put_collect(w, t + 3, prev);
        prev = oid;
    }
    mt_writer_close(w);
    close(fd);
    if (mt_alloc_index_trace_id(path, &id) < 0)
        return -1;
    int ix = memfd_create("index", 0);
    mt_alloc_index_writer *iw = mt_alloc_index_writer_new(ix);
    mt_model_options mo = {0};
    mo.fold = 1;
    mo.fold_live_at = MT_TIME_END;
    mo.on_fold = put;
    mo.fold_ctx = iw;
    base = mt_model_load(path, &mo, &err);
    unlink(path);
    if (!base || mt_alloc_index_writer_finish(iw, base, &id) < 0)
        return -1;
    good_len = (size_t)lseek(ix, 0, SEEK_END);
    good = malloc(good_len);
    if (!good || pread(ix, good, good_len, 0) != (ssize_t)good_len)
        return -1;
    close(ix);
    filter = mt_filter_parse("inside:grow size:<=4k lifetime:>=1us", &err, NULL);
    return filter ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        if (setup() < 0)
            abort();
        ready = 1;
    }
    if (size < 1)
        return 0;
    int fd = memfd_create("fuzz", 0);
    if (fd < 0)
        return 0;
    if (data[0] & 1) {
        if (write(fd, data + 1, size - 1) < 0) {
            close(fd);
            return 0;
        }
    } else {
        size_t want = good_len - HDR, have = size - 1 < want ? size - 1 : want;
        unsigned char *file = calloc(1, good_len);
        if (!file) {
            close(fd);
            return 0;
        }
        memcpy(file, good, HDR);
        memcpy(file + HDR, data + 1, have);
        ssize_t wr = write(fd, file, good_len);
        free(file);
        if (wr != (ssize_t)good_len) {
            close(fd);
            return 0;
        }
    }
    char *why = NULL;
    mt_alloc_index *x = mt_alloc_index_open_fd(fd, &id, &why);
    free(why);
    if (!x)
        return 0;
    for (int k = 0; k < 2; k++) {
        mt_alloc_index_fold_options o = {0};
        o.filter = k ? filter : NULL;
        char *err = NULL;
        mt_model *m = mt_alloc_index_fold(x, base, &o, &err);
        if (m) {
            mt_selection *s = mt_select_sites(m, o.filter, MT_TIME_END, NULL, NULL);
            mt_selection_free(s);
        }
        mt_model_free(m);
        free(err);
    }
    mt_alloc_index_close(x);
    return 0;
}
