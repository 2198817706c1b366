/*
 * leaks_fold.c - leak suspects from the collector's sums (lib/analyze/
 * leakfold.c) against the test run block by block: on fixture traces,
 * every site of mt_query_leaks has the growth, error, live bytes at the
 * end, kept share, units and samples that mt_leak_test gives on that
 * site's blocks gathered here from the whole model's allocations; and a
 * folded read feeding the collector (mt_read, mt_query_leaks_fold) gives
 * the same report, row for row and bit for bit, as the whole model.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/load.h"
#include "memtrace/leaks.h"
#include "../check.h"

typedef struct keyed {
    uint64_t key;
    size_t i;
} keyed;

static int by_key(const void *x, const void *y)
{
    const keyed *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

static uint64_t frame_key(const mt_model *m, mt_frame_id f)
{
    if (f == MT_NO_FRAME)
        return UINT64_MAX;
    const mt_frame *fr = &mt_model_frames(m)[f];
    return (uint64_t)fr->func << 32 | fr->line;
}

static int close_to(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-300;
}

/* Every site of r against mt_leak_test on its blocks; the count of sites
 * that differ. */
static int against_blocks(const mt_selection *s, const mt_leak_report *r)
{
    const mt_model *m = mt_selection_model(s);
    const mt_alloc *al = mt_model_allocs(m);
    const mt_node *nodes = mt_selection_nodes(s);
    size_t na = mt_model_n_allocs(m), n = 0;
    double bps = mt_model_bytes_per_sample(m);
    keyed *k = malloc((na ? na : 1) * sizeof *k);
    mt_leak_block *b = malloc((na ? na : 1) * sizeof *b);
    for (size_t i = 0; i < na; i++) {
        if (!mt_selection_has(s, i))
            continue;
        mt_node_id node = mt_selection_stack_of(s, i);
        k[n++] = (keyed){node ? frame_key(m, nodes[node].frame) : UINT64_MAX, i};
    }
    qsort(k, n, sizeof *k, by_key);
    int bad = 0;
    for (size_t e = 0; e < r->n; e++) {
        const mt_leak_site *site = &r->sites[e];
        uint64_t key = frame_key(m, site->frame), samples = 0;
        size_t nb = 0;
        for (size_t i = 0; i < n; i++) {
            if (k[i].key != key)
                continue;
            const mt_alloc *a = &al[k[i].i];
            b[nb++] = (mt_leak_block){a->time, a->collect, (double)a->n_samples * bps};
            samples += a->n_samples;
        }
        mt_leak_site want;
        mt_leak_test(b, nb, r->from, r->to, &want);
        if (!close_to(site->growth, want.growth) || !close_to(site->growth_se, want.growth_se) ||
            !close_to(site->live_end, want.live_end) || !close_to(site->kept, want.kept) ||
            !close_to(site->live_high, want.live_high) || site->units != want.units ||
            site->samples != samples) {
            if (bad++ < 3)
                printf("  site %zu: growth %g/%g se %g/%g live %g/%g kept %g/%g units %llu/%llu "
                       "samples %llu/%llu\n", e, site->growth, want.growth, site->growth_se,
                       want.growth_se, site->live_end, want.live_end, site->kept, want.kept,
                       (unsigned long long)site->units, (unsigned long long)want.units,
                       (unsigned long long)site->samples, (unsigned long long)samples);
        }
    }
    free(k);
    free(b);
    return bad;
}

/* Bit for bit (NaN as NaN). */
static int same(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* The folded read's report against the whole model's, row by row: the
 * count of rows that differ (names compared, figures bit for bit). */
static int against_fold(const char *path, const mt_model *wm, const mt_leak_report *wr,
                        const mt_leak_options *o)
{
    mt_leak_fold *lf = mt_leak_fold_new(mt_model_end(wm), o);
    if (!lf)
        return -1;
    mt_sink sink = {.on_done = mt_leak_fold_alloc, .on_reset = mt_leak_fold_reset, .ctx = lf};
    mt_read_request rq = {.paths = &path, .n = 1, .fold = 1, .stream = 1,
                          .live_at = MT_TIME_END, .sinks = &sink, .n_sinks = 1};
    char *err = NULL;
    mt_model *fm = mt_read(&rq, &err);
    mt_selection *fs = fm ? mt_select_sites(fm, NULL, MT_TIME_END, NULL, &err) : NULL;
    mt_leak_report *fr = fs ? mt_query_leaks_fold(fs, lf, o) : NULL;
    int bad = -1;
    if (fr && fr->n == wr->n && fr->n_tested == wr->n_tested && fr->n_suspects == wr->n_suspects) {
        bad = 0;
        for (size_t i = 0; i < fr->n; i++) {
            mt_leak_site a = fr->sites[i], b = wr->sites[i];
            int same_site = (a.frame == MT_NO_FRAME) == (b.frame == MT_NO_FRAME);
            if (same_site && a.frame != MT_NO_FRAME) {
                const mt_frame *x = &mt_model_frames(fm)[a.frame], *y = &mt_model_frames(wm)[b.frame];
                same_site = x->line == y->line &&
                            !strcmp(mt_model_funcs(fm)[x->func].name, mt_model_funcs(wm)[y->func].name);
            }
            bad += !same_site || !same(a.growth, b.growth) || !same(a.growth_se, b.growth_se) ||
                   !same(a.z, b.z) || !same(a.p, b.p) || !same(a.p_adj, b.p_adj) ||
                   !same(a.live_end, b.live_end) || !same(a.live_high, b.live_high) ||
                   !same(a.kept, b.kept) || !same(a.lost, b.lost) || a.units != b.units ||
                   a.samples != b.samples || a.tested != b.tested || a.suspect != b.suspect;
        }
    }
    free(err);
    mt_leak_report_free(fr);
    mt_selection_free(fs);
    mt_model_free(fm);
    mt_leak_fold_free(lf);
    return bad;
}

int main(void)
{
    const char *dir = getenv("MT_FIXTURES");
    const char *names[] = {"upstream_ocamlopt_v3", "leak", "upstream_lists_and_sets_v1", "prodcons"};
    for (size_t t = 0; t < sizeof names / sizeof names[0]; t++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.ctf", dir ? dir : "tests/fixtures/memtrace", names[t]);
        char *err = NULL;
        mt_model *m = mt_model_load(path, NULL, &err);
        if (!m) {
            printf("FAIL: load %s: %s\n", path, err ? err : "?");
            return 1;
        }
        for (int w = 0; w < 2; w++) {
            /* the later half, and the later two thirds */
            mt_leak_options o = {0.05, w ? mt_model_end(m) / 3 : MT_TIME_NEVER};
            mt_selection *s = mt_select(m, NULL, MT_TIME_END);
            mt_leak_report *r = s ? mt_query_leaks(s, &o) : NULL;
            CHECK(r && r->n > 0, "%s window %d: a report with sites", names[t], w);
            if (r) {
                int bad = against_blocks(s, r);
                CHECK(bad == 0, "%s window %d: each of %zu sites as mt_leak_test on its blocks "
                      "(%d differ)", names[t], w, r->n, bad);
            }
            mt_leak_report_free(r);
            mt_selection_free(s);
            s = mt_select_sites(m, NULL, MT_TIME_END, NULL, NULL);
            r = s ? mt_query_leaks(s, &o) : NULL;
            int bad = r ? against_fold(path, m, r, &o) : -1;
            CHECK(bad == 0, "%s window %d: the folded read's %zu rows are the whole model's, bit "
                  "for bit (%d differ)", names[t], w, r ? r->n : 0, bad);
            mt_leak_report_free(r);
            mt_selection_free(s);
        }
        mt_model_free(m);
    }
    return failures != 0;
}
