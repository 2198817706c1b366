/*
 * domains.c - the OCaml 5 domain of each allocation (mt_alloc.domain,
 * mt_model_domains, the filter's domain:N clause) on a v3 trace that three
 * domains wrote into one file (domaintrace.h: 12 allocations of domain 0,
 * 4 of domain 5, 3 of domain 300). Every route keeps the domains alike: the
 * whole model, the folded model on one and on two threads (the domain
 * crosses the threads' pipe), and a fold of the allocation index.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/load.h"
#include "memtrace/analyze.h"
#include "memtrace/stream.h"
#include "domaintrace.h"

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
    if (tt_scratch_file(path, sizeof path, "domains") < 0 || dt_write_trace(path) < 0)
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
    mt_model_free(im);
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
