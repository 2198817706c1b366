/*
 * domains.c - the OCaml 5 domain of each allocation (mt_alloc.domain,
 * mt_model_domains, the filter's domain:N clause) on a v3 trace that three
 * domains wrote into one file, made here with the codec's writer: one
 * writer per domain (0, 5 and 300: a number above a byte's), their packets
 * put in time order in one file, the later domains' ids moved to chunks of
 * their own as OCaml 5's shared id counter gives them.
 *
 *   domain 0    t 0-999     10 blocks of 8 words (main;parse), 5 freed
 *   domain 5    t 1000-1999  4 blocks of 100 words (main;load), 1 freed
 *   domain 300  t 2000-2999  3 blocks of 2 words (main;leak)
 *   domain 0    t 3000-3999  2 blocks of 8 words; domain 5 frees one more
 *
 * Every route keeps the domains alike: the whole model, the folded model
 * on one and on two threads (the domain crosses the threads' pipe), and a
 * fold of the allocation index.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/trace/format.h"
#include "memtrace/analyze.h"
#include "memtrace/stream.h"
#include "testtrace.h"

typedef struct buf {
    unsigned char *p;
    size_t n, cap;
} buf;

static int buf_write(void *ctx, const void *data, size_t len)
{
    buf *b = ctx;
    if (b->n + len > b->cap) {
        size_t cap = (b->n + len) * 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, len);
    b->n += len;
    return 0;
}

static size_t packet_bytes(const unsigned char *p)
{
    uint32_t bits;
    memcpy(&bits, p + MT_HDR_SIZE_BITS, 4);
    return bits / 8;
}

/* Adds delta to the id range of every v3 packet in b[from..n). */
static void shift_ids(buf *b, size_t from, uint64_t delta)
{
    for (size_t off = from; off + MT_HDR_SIZE_V3 <= b->n; off += packet_bytes(b->p + off)) {
        for (int k = 0; k < 2; k++) {
            size_t at = off + 2 + (k ? MT_HDR_ID_END : MT_HDR_ID_BEGIN);
            uint64_t v;
            memcpy(&v, b->p + at, 8);
            v += delta;
            memcpy(b->p + at, &v, 8);
        }
        if (packet_bytes(b->p + off) == 0)
            break;
    }
}

enum { NDOM = 3 };
static const unsigned dom_no[NDOM] = {0, 5, 300};

/* The trace at path; 0, or -1 (the reason on stderr). */
static int write_trace(const char *path)
{
    buf b[NDOM] = {{0}};
    mt_writer *w[NDOM];
    mt_trace_info info = {0};
    info.sample_rate = 1;
    info.word_size = 64;
    info.executable_name = "domains-test";
    info.host_name = "h";
    info.ocaml_runtime_params = "";
    info.pid = 1;
    info.start_time = TT_START;
    for (int d = 0; d < NDOM; d++) {
        mt_writer_options o = {.version = 3, .domain = dom_no[d], .resolve = tt_resolve,
                               .write = buf_write, .write_ctx = &b[d]};
        char *err = NULL;
        if (!(w[d] = mt_writer_open(-1, &info, &o, &err))) {
            fprintf(stderr, "writer: %s\n", err ? err : "?");
            return -1;
        }
        mt_writer_flush(w[d]);
    }
    /* where each domain's phases end in its buffer */
    size_t mark[NDOM][3] = {{0}};
    for (int d = 0; d < NDOM; d++)
        mark[d][0] = b[d].n;   /* the trace-info packet */
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
        mark[d][1] = b[d].n;
    }
    for (int i = 10; i < 12; i++)
        rc |= mt_writer_put_alloc(w[0], TT_START + 3000 + i * 10, 8, 8, MT_SOURCE_MINOR, parse, 2, &id0[i]);
    rc |= mt_writer_put_collect(w[1], TT_START + 3500, id5[1]);
    for (int d = 0; d < NDOM; d++) {
        rc |= mt_writer_close(w[d]);
        mark[d][2] = b[d].n;
    }
    if (rc) {
        fprintf(stderr, "a writer failed\n");
        return -1;
    }
    shift_ids(&b[1], 0, (uint64_t)1 << 20);
    shift_ids(&b[2], 0, (uint64_t)2 << 20);
    /* domain 0's trace info; each phase of 0, 5 and 300; the second */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        return -1;
    }
    rc |= write(fd, b[0].p, mark[0][0]) != (ssize_t)mark[0][0];
    for (int ph = 1; ph <= 2; ph++)
        for (int d = 0; d < NDOM; d++) {
            size_t n = mark[d][ph] - mark[d][ph - 1];
            rc |= write(fd, b[d].p + mark[d][ph - 1], n) != (ssize_t)n;
        }
    close(fd);
    for (int d = 0; d < NDOM; d++)
        free(b[d].p);
    return rc ? -1 : 0;
}

static mt_filter *filter(const char *text)
{
    char *err = NULL;
    mt_filter *f = mt_filter_parse(text, &err, NULL);
    if (!f)
        fprintf(stderr, "filter %s: %s\n", text, err ? err : "?");
    free(err);
    return f;
}

/* Allocations selected by text (live at the end), and live then. */
static void count(const mt_model *m, const char *text, uint64_t *allocs, double *live_bytes)
{
    mt_filter *f = filter(text);
    char *err = NULL;
    mt_selection *s = f ? mt_select_sites(m, f, MT_TIME_END, NULL, &err) : NULL;
    mt_cost c = s ? mt_selection_total(s) : (mt_cost){0};
    *allocs = c.allocs;
    *live_bytes = c.live_bytes;
    mt_selection_free(s);
    mt_filter_free(f);
    free(err);
}

static void check_domain_filters(const mt_model *m, const char *route)
{
    static const struct { const char *f; uint64_t allocs; double live; } want[] = {
        {"domain:0", 12, 7 * 64},   {"domain:5", 4, 2 * 800},  {"domain:300", 3, 3 * 16},
        {"!domain:0", 7, 1648},     {"domain:5 live:end", 2, 1600}, {"domain:7", 0, 0},
        {"", 19, 7 * 64 + 1600 + 48},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        uint64_t n;
        double live;
        count(m, want[i].f, &n, &live);
        CHECK(n == want[i].allocs && live == want[i].live,
              "%s: '%s' selects %llu allocations, %.0f bytes live at the end (want %llu, %.0f)",
              route, want[i].f, (unsigned long long)n, live, (unsigned long long)want[i].allocs,
              want[i].live);
    }
}

/* on_fold of a folded read: allocations seen per domain number. */
static int tally(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    (void)seq;
    unsigned ids[MT_MAX_DOMAINS];
    size_t n = mt_model_domains(m, ids, MT_MAX_DOMAINS);
    unsigned *per = ctx;
    if (a->domain < n)
        per[ids[a->domain] == 300 ? 2 : ids[a->domain] == 5 ? 1 : 0]++;
    else
        per[3]++;
    return 0;
}

typedef struct index_ctx {
    mt_alloc_index_writer *w;
    unsigned per[4];
} index_ctx;

static int to_index(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    index_ctx *c = ctx;
    tally(c->per, m, a, seq);
    return mt_alloc_index_writer_add(c->w, a, seq);
}

int main(void)
{
    char path[4096], ipath[4200];
    if (tt_scratch_file(path, sizeof path, "domains") < 0 || write_trace(path) < 0)
        return 1;

    /* the whole model */
    char *err = NULL;
    mt_model *m = mt_model_load(path, NULL, &err);
    CHECK(m != NULL, "the three-domain v3 trace loads (%s)", err ? err : "ok");
    if (!m)
        return 1;
    unsigned ids[MT_MAX_DOMAINS];
    size_t nd = mt_model_domains(m, ids, MT_MAX_DOMAINS);
    CHECK(nd == 3 && ids[0] == 0 && ids[1] == 5 && ids[2] == 300,
          "mt_model_domains: 0, 5, 300 in order of first allocation (%zu)", nd);
    const mt_alloc *a = mt_model_allocs(m);
    size_t n = mt_model_n_allocs(m);
    unsigned per[4] = {0};
    int sizes_ok = 1;
    for (size_t i = 0; i < n; i++) {
        tally(per, m, &a[i], i);
        unsigned d = a[i].domain < nd ? ids[a[i].domain] : 9999;
        sizes_ok &= a[i].size == (d == 0 ? 64u : d == 5 ? 800u : 16u);
    }
    CHECK(n == 19 && per[0] == 12 && per[1] == 4 && per[2] == 3 && per[3] == 0 && sizes_ok,
          "every allocation has its domain: 12 of 0, 4 of 5, 3 of 300 (%u, %u, %u, %u bad)",
          per[0], per[1], per[2], per[3]);
    check_domain_filters(m, "whole model");

    /* folded, on one thread and on two */
    for (int threads = 1; threads <= 2; threads++) {
        mt_model_options o = {0};
        o.fold = 1;
        o.fold_live_at = MT_TIME_END;
        o.read_threads = threads;
        unsigned fper[4] = {0};
        o.on_fold = tally;
        o.fold_ctx = fper;
        mt_model *fm = mt_model_load(path, &o, &err);
        CHECK(fm && fper[0] == 12 && fper[1] == 4 && fper[2] == 3 && fper[3] == 0,
              "folded, %d thread(s): on_fold sees each allocation's domain (%u, %u, %u, %u bad)",
              threads, fper[0], fper[1], fper[2], fper[3]);
        mt_model_free(fm);
        mt_filter *f = filter("domain:5");
        o.on_fold = NULL;
        o.fold_filter = f;
        fm = mt_model_load(path, &o, &err);
        uint64_t k = 0;
        double live = 0;
        if (fm) {
            mt_selection *s = mt_select_sites(fm, f, MT_TIME_END, NULL, &err);
            mt_cost c = s ? mt_selection_total(s) : (mt_cost){0};
            k = c.allocs;
            live = c.live_bytes;
            mt_selection_free(s);
        }
        CHECK(k == 4 && live == 1600,
              "folded, %d thread(s), with domain:5: 4 allocations, 1600 bytes live (%llu, %.0f)",
              threads, (unsigned long long)k, live);
        mt_model_free(fm);
        mt_filter_free(f);
    }

    /* the allocation index keeps the domains */
    snprintf(ipath, sizeof ipath, "%s.idx", path);
    int ifd = open(ipath, O_RDWR | O_CREAT | O_TRUNC, 0644);
    index_ctx ic = {mt_alloc_index_writer_new(ifd), {0}};
    mt_model_options o = {0};
    o.fold = 1;
    o.fold_live_at = MT_TIME_END;
    o.on_fold = to_index;
    o.fold_ctx = &ic;
    mt_model *base = mt_model_load(path, &o, &err);
    mt_alloc_index_id tid;
    int wrote = base && ic.w && mt_alloc_index_trace_id(path, &tid) == 0 &&
                mt_alloc_index_writer_finish(ic.w, base, &tid) == 0;
    close(ifd);
    CHECK(wrote, "an allocation index of the three-domain trace is written");
    mt_alloc_index *x = wrote ? mt_alloc_index_open_fd(open(ipath, O_RDONLY), &tid, &err) : NULL;
    mt_filter *f = filter("domain:300");
    mt_alloc_index_fold_options fo = {.filter = f};
    mt_model *im = x ? mt_alloc_index_fold(x, base, &fo, &err) : NULL;
    uint64_t k = 0;
    if (im) {
        mt_selection *s = mt_select_sites(im, f, MT_TIME_END, NULL, &err);
        k = s ? mt_selection_total(s).allocs : 0;
        mt_selection_free(s);
    }
    CHECK(im && k == 3, "the index folded with domain:300 selects its 3 allocations (%llu; %s)",
          (unsigned long long)k, err ? err : "ok");
    mt_alloc_index_model_free(im);
    mt_alloc_index_close(x);
    mt_filter_free(f);
    mt_model_free(base);
    unlink(ipath);

    /* the clause's spelling */
    f = filter("domain:007 !domain:65535");
    char *text = f ? mt_filter_to_string(f) : NULL;
    CHECK(text && !strcmp(text, "domain:7 !domain:65535"),
          "domain:N prints canonically (%s)", text ? text : "NULL");
    free(text);
    mt_filter_free(f);
    static const char *const bad[] = {"domain:", "domain:x", "domain:65536", "domain:1,2",
                                      "domain:-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t pos = 0;
        free(err);
        err = NULL;
        mt_filter *b = mt_filter_parse(bad[i], &err, &pos);
        CHECK(!b && err && strstr(err, "domain number") && pos == 7,
              "'%s' is refused at column 8 (%s)", bad[i], err ? err : "accepted");
        mt_filter_free(b);
    }
    free(err);
    mt_model_free(m);
    unlink(path);
    return failures != 0;
}
