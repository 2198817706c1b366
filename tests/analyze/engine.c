/*
 * engine.c - unit test of the analysis engine on a small trace written with
 * the codec's writer, whose every figure is worked out by hand below:
 * totals, live memory over time and peak, each filter clause, hidden
 * frames, call trees, call graph, one function's callers and callees,
 * histograms and the curve.
 *
 * The trace (sample rate 0.5 per 64-bit word: one sample = 16 bytes):
 *   A0 t=100  len 4  ns 2 minor    main f malloc
 *   A1 t=200  len 8  ns 1 major    main g malloc
 *   A2 t=300  len 2  ns 3 external main f g malloc
 *   A3 t=400  len 1  ns 1 minor    main h[+hin inlined] malloc
 *   promote A0 t=450; collect A1 t=500; collect A0 t=1000
 *   A4 t=1100 len 16 ns 4 minor    main g f g malloc
 *   collect A3 t=1200 (end)
 * Live samples: 2@100 3@200 6@300 7@400 6@500 4@1000 8@1100 7@1200.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/load.h"
#include "memtrace/analyze.h"
#include "testtrace.h"

enum { MAIN = 0x10, F = 0x20, G = 0x30, H = 0x40, MALLOC = 0x50 };
static const mt_location loc_main = {"m.c", "main", 1, 0, 0};
static const mt_location loc_f = {"m.c", "f", 2, 0, 0};
static const mt_location loc_g = {"m.c", "g", 3, 0, 0};
static const mt_location loc_h[2] = {{"m.c", "h", 4, 0, 0}, {"m.c", "hin", 5, 0, 0}};
static const mt_location loc_malloc = {"libc.c", "malloc", 6, 0, 0};

static int resolve(void *ctx, mt_location_code code, const mt_location **l, size_t *n)
{
    (void)ctx;
    *n = 1;
    switch (code) {
    case MAIN: *l = &loc_main; return 0;
    case F: *l = &loc_f; return 0;
    case G: *l = &loc_g; return 0;
    case H: *l = loc_h; *n = 2; return 0;
    case MALLOC: *l = &loc_malloc; return 0;
    }
    return -1;
}

static const char *write_trace(void)
{
    static char path[4096];
    const char *dir = getenv("MT_TMP");
    snprintf(path, sizeof path, "%s/engine.ctf", dir ? dir : "/tmp");
    int fd;
    mt_writer *w = tt_writer_open(path, "engine-test", 0.5, resolve, &fd);
    if (!w)
        return NULL;
    const mt_timestamp T = TT_START;
    uint64_t s0[] = {MAIN, F, MALLOC}, s1[] = {MAIN, G, MALLOC}, s2[] = {MAIN, F, G, MALLOC},
             s3[] = {MAIN, H, MALLOC}, s4[] = {MAIN, G, F, G, MALLOC};
    mt_obj_id id;
    int rc = 0;
    rc |= mt_writer_put_alloc(w, T + 100, 4, 2, MT_SOURCE_MINOR, s0, 3, &id);
    rc |= mt_writer_put_alloc(w, T + 200, 8, 1, MT_SOURCE_MAJOR, s1, 3, &id);
    rc |= mt_writer_put_alloc(w, T + 300, 2, 3, MT_SOURCE_EXTERNAL, s2, 4, &id);
    rc |= mt_writer_put_alloc(w, T + 400, 1, 1, MT_SOURCE_MINOR, s3, 3, &id);
    rc |= mt_writer_put_promote(w, T + 450, 0);
    rc |= mt_writer_put_collect(w, T + 500, 1);
    rc |= mt_writer_put_collect(w, T + 1000, 0);
    rc |= mt_writer_put_alloc(w, T + 1100, 16, 4, MT_SOURCE_MINOR, s4, 5, &id);
    rc |= mt_writer_put_collect(w, T + 1200, 3);
    rc |= mt_writer_close(w);
    close(fd);
    return rc ? NULL : path;
}

static mt_model *M;

static uint64_t samples_of(const char *filter)
{
    char *err = NULL;
    mt_filter *f = mt_filter_parse(filter, &err, NULL);
    if (!f) {
        printf("FAIL: filter '%s': %s\n", filter, err);
        failures++;
        free(err);
        return (uint64_t)-1;
    }
    mt_selection *s = mt_select(M, f, MT_TIME_END);
    uint64_t k = mt_selection_total(s).samples;
    mt_selection_free(s);
    mt_filter_free(f);
    return k;
}

static mt_func_id func(const char *name)
{
    mt_func_id id = 0;
    size_t n = mt_model_find_funcs(M, name, 1, &id, 1);
    return n == 1 ? id : (mt_func_id)-1;
}

static const char *fname(mt_func_id f) { return mt_model_funcs(M)[f].name; }

int main(void)
{
    const char *path = write_trace();
    if (!path) {
        printf("FAIL: cannot write the test trace\n");
        return 1;
    }
    char *err = NULL;
    M = mt_model_load(path, NULL, &err);
    if (!M) {
        printf("FAIL: load: %s\n", err);
        return 1;
    }
    CHECK(mt_model_n_allocs(M) == 5, "5 allocations (%zu)", mt_model_n_allocs(M));
    CHECK(mt_model_bytes_per_sample(M) == 16, "16 bytes per sample");
    CHECK(mt_model_end(M) == 1200, "end of trace 1200us (%lld)", (long long)mt_model_end(M));
    CHECK(mt_model_peak_bytes(M) == 8 * 16 && mt_model_peak_time(M) == 1100,
          "peak 128 bytes at 1100us (%.0f at %lld)", mt_model_peak_bytes(M),
          (long long)mt_model_peak_time(M));
    CHECK(mt_model_live_at(M, 450) == 7 * 16, "live at 450us: 112 bytes");
    CHECK(mt_model_live_at(M, 500) == 6 * 16, "live at 500us: 96 (collected at t is not live at t)");
    CHECK(mt_model_live_at(M, 99) == 0, "nothing live before the first allocation");
    CHECK(mt_model_live_at(M, MT_TIME_END) == 7 * 16, "live at end 112 bytes");
    const mt_alloc *a = mt_model_allocs(M);
    CHECK(a[0].promote == 450 && a[0].collect == 1000 && a[2].collect == MT_TIME_NEVER,
          "promote and collect times recorded");
    CHECK(a[0].size == 32 && a[4].size == 128, "sizes in bytes (length x 8)");
    CHECK(fabs(mt_alloc_objects(M, &a[0]) - 0.8) < 1e-12,
          "objects estimate: 2 samples / (0.5 x (4+1 words)) = 0.8");
    CHECK(fabs(mt_alloc_objects(M, &a[2]) - 3.0) < 1e-12,
          "external block: no header word, 3 / (0.5 x 2) = 3");

    /* filters */
    struct { const char *f; uint64_t k; } cases[] = {
        {"", 11}, {"alloc:0-350us", 6}, {"alloc:<=0.35ms", 6}, {"alloc:>1ms", 4},
        {"live:450us", 7}, {"live:peak", 8}, {"live:end", 7}, {"live:0.45ms-0.5ms", 7},
        {"live:501us-999us", 6}, {"collect:never", 7}, {"collect:400us-1000us", 3},
        {"size:>=32", 7}, {"size:<32", 4}, {"size:16-64B", 6}, {"lifetime:<=300us", 5},
        {"lifetime:>300us", 6}, {"inside:g", 8}, {"!inside:g", 3}, {"inside:/^h/", 1},
        {"inside:\"in\"", 12 - 11 + 1 - 1 + 0}, {"source:minor", 7}, {"source:major,external", 4},
        {"!source:minor", 4}, {"inside:f inside:g", 7}, {"live:end size:>=100", 4},
    };
    /* "in": main contains "in" too: every allocation */
    cases[19].k = 11;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t k = samples_of(cases[i].f);
        CHECK(k == cases[i].k, "filter '%s' selects %llu samples (got %llu)", cases[i].f,
              (unsigned long long)cases[i].k, (unsigned long long)k);
    }

    /* sites, without and with hidden frames */
    mt_selection *s = mt_select(M, NULL, MT_TIME_END);
    mt_sites *st = mt_query_sites(s, MT_METRIC_SAMPLES, 10);
    const mt_frame *fr = mt_model_frames(M);
    CHECK(st->n == 1 && st->sites[0].cost.samples == 11 &&
              !strcmp(fname(fr[st->sites[0].frame].func), "malloc"),
          "one allocation site: malloc, 11 samples");
    CHECK(st->sites[0].n_callers == 3 && st->sites[0].callers[0].cost.samples == 8 &&
              !strcmp(fname(fr[st->sites[0].callers[0].frame].func), "g") &&
              st->sites[0].callers[1].cost.samples == 2 && st->sites[0].callers[2].cost.samples == 1 &&
              !strcmp(fname(fr[st->sites[0].callers[2].frame].func), "hin"),
          "malloc's callers: g 8, f 2, hin 1 (the inlined frame)");
    mt_sites_free(st);
    CHECK(st != NULL, "sites query");
    mt_cost tot = mt_selection_total(s);
    CHECK(tot.alloc_bytes == 176 && tot.live_bytes == 112 && tot.allocs == 5,
          "selection totals: 176 bytes allocated, 112 live at end");

    /* top-down and bottom-up trees */
    mt_tree *t = mt_query_tree(s, MT_TREE_TOP_DOWN, MT_METRIC_SAMPLES, 0);
    const mt_tree_node *n = t->nodes;
    uint32_t mainn = n[0].first_child;
    int ok = n[0].total.samples == 11 && mainn && !strcmp(fname(n[mainn].func), "main") &&
             n[mainn].total.samples == 11 && !n[mainn].next_sibling;
    uint64_t fk = 0, gk = 0, hk = 0;
    for (uint32_t c = n[mainn].first_child; c; c = n[c].next_sibling) {
        if (!strcmp(fname(n[c].func), "f")) fk = n[c].total.samples;
        if (!strcmp(fname(n[c].func), "g")) gk = n[c].total.samples;
        if (!strcmp(fname(n[c].func), "h")) hk = n[c].total.samples;
    }
    CHECK(ok && fk == 5 && gk == 5 && hk == 1, "top-down: main 11 -> f 5, g 5, h 1");
    mt_tree_free(t);
    t = mt_query_tree(s, MT_TREE_BOTTOM_UP, MT_METRIC_SAMPLES, 0);
    n = t->nodes;
    uint32_t ma = n[0].first_child, c1 = ma ? n[ma].first_child : 0;
    CHECK(ma && !strcmp(fname(n[ma].func), "malloc") && n[ma].total.samples == 11 && c1 &&
              !strcmp(fname(n[c1].func), "g") && n[c1].total.samples == 8,
          "bottom-up: malloc 11 <- g 8 first");
    mt_tree_free(t);
    /* min_fraction 0.3 keeps exactly the nodes of the full tree with at
     * least 3.3 of the 11 samples (a parent never has fewer than its
     * children), and nothing else. */
    t = mt_query_tree(s, MT_TREE_TOP_DOWN, MT_METRIC_SAMPLES, 0);
    size_t heavy = 0;
    for (size_t i = 1; i < t->n; i++)
        heavy += t->nodes[i].total.samples >= 4;
    mt_tree_free(t);
    t = mt_query_tree(s, MT_TREE_TOP_DOWN, MT_METRIC_SAMPLES, 0.3);
    size_t kept = 0;
    for (size_t i = 1; i < t->n; i++)
        kept += t->nodes[i].total.samples >= 4;
    CHECK(heavy >= 3 && kept == heavy && t->n - 1 == heavy,
          "min_fraction 0.3 keeps the %zu nodes with >= 3.3 samples, drops the others (%zu kept)",
          heavy, t->n - 1);
    mt_tree_free(t);

    t = mt_query_tree(s, MT_TREE_BOTTOM_UP, MT_METRIC_SAMPLES, 0.5);
    n = t->nodes;
    ok = t->n == 4 && !t->truncated && n[1].total.samples == 11 && !strcmp(fname(n[2].func), "g") &&
         n[2].total.samples == 8 && !strcmp(fname(n[3].func), "f") && n[3].total.samples == 7 &&
         n[3].parent == 2;
    CHECK(ok, "bottom-up, min_fraction 0.5: malloc 11 <- g 8 <- f 7 only (%zu nodes)", t->n);
    mt_tree_free(t);
    t = mt_query_tree(s, MT_TREE_TOP_DOWN, MT_METRIC_SAMPLES, 0.5);
    CHECK(t->n == 2 && t->nodes[1].total.samples == 11 && t->nodes[1].self.samples == 0 &&
              t->nodes[0].total.samples == 11,
          "top-down, min_fraction 0.5: main 11 only, dropped callees' cost stays in its total");
    mt_tree_free(t);

    /* call graph */
    mt_graph *g = mt_query_graph(s, MT_METRIC_SAMPLES, 0);
    uint64_t cum[8] = {0}, flat_malloc = 0, e_fg = 0, e_gf = 0, e_gm = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const char *nm = fname(g->nodes[i].func);
        if (!strcmp(nm, "f")) cum[0] = g->nodes[i].cum.samples;
        if (!strcmp(nm, "g")) cum[1] = g->nodes[i].cum.samples;
        if (!strcmp(nm, "main")) cum[2] = g->nodes[i].cum.samples;
        if (!strcmp(nm, "malloc")) flat_malloc = g->nodes[i].flat.samples;
    }
    for (size_t i = 0; i < g->n_edges; i++) {
        const char *a1 = fname(g->nodes[g->edges[i].caller].func), *b1 = fname(g->nodes[g->edges[i].callee].func);
        if (!strcmp(a1, "f") && !strcmp(b1, "g")) e_fg = g->edges[i].cost.samples;
        if (!strcmp(a1, "g") && !strcmp(b1, "f")) e_gf = g->edges[i].cost.samples;
        if (!strcmp(a1, "g") && !strcmp(b1, "malloc")) e_gm = g->edges[i].cost.samples;
    }
    CHECK(g->n_nodes == 6 && cum[0] == 9 && cum[1] == 8 && cum[2] == 11 && flat_malloc == 11,
          "graph: 6 functions, cum f 9, g 8 (recursion counted once), main 11, flat malloc 11");
    CHECK(e_fg == 7 && e_gf == 4 && e_gm == 8, "graph edges: f->g 7, g->f 4, g->malloc 8");
    mt_graph_free(g);

    g = mt_query_graph(s, MT_METRIC_SAMPLES, 0.5);
    e_fg = e_gf = 0;
    for (size_t i = 0; i < g->n_edges; i++) {
        const char *a1 = fname(g->nodes[g->edges[i].caller].func), *b1 = fname(g->nodes[g->edges[i].callee].func);
        if (!strcmp(a1, "f") && !strcmp(b1, "g")) e_fg = g->edges[i].cost.samples;
        if (!strcmp(a1, "g") && !strcmp(b1, "f")) e_gf = g->edges[i].cost.samples;
    }
    CHECK(g->n_nodes == 4 && g->n_edges == 6 && e_fg == 7 && e_gf == 4 &&
              g->nodes[0].cum.samples == 11 && g->nodes[3].cum.samples == 8,
          "graph, min_fraction 0.5: main, malloc, f, g and their 6 edges, same costs");
    mt_graph_free(g);

    /* one function */
    mt_func_report *r = mt_query_func(s, func("g"), MT_METRIC_SAMPLES);
    CHECK(r && r->flat.samples == 0 && r->cum.samples == 8 && r->n_callers == 2 &&
              r->callers[0].cost.samples == 7 && !strcmp(fname(r->callers[0].func), "f") &&
              r->callers[1].cost.samples == 5 && r->n_callees == 2 &&
              r->callees[0].cost.samples == 8 && r->callees[1].cost.samples == 4,
          "g: cum 8; callers f 7, main 5; callees malloc 8, f 4");
    mt_func_report_free(r);

    /* histograms */
    mt_histogram *h = mt_query_histogram(s, MT_HIST_SIZE);
    CHECK(h->n == 9 && h->cost[4].samples == 1 && h->lo[4] == 8 && h->hi[4] == 16 &&
              h->cost[5].samples == 3 && h->cost[8].samples == 4 && h->by_source[5 * 3 + 2].samples == 3,
          "size histogram: 8B->[8,16) 1, 16B 3 (external), 128B 4");
    mt_histogram_free(h);
    h = mt_query_histogram(s, MT_HIST_LIFETIME);
    /* lifetimes: A1 300 -> [256,512), A3 800 & A0 900 & A2 900 -> [512,1024), A4 100 -> [64,128) */
    CHECK(h->cost[9].samples == 1 && h->cost[10].samples == 6 && h->cost[7].samples == 4 &&
              h->never_collected.samples == 7,
          "lifetime histogram: [64,128) 4, [256,512) 1, [512,1024) 6; never collected 7");
    mt_histogram_free(h);

    /* curve: 12 buckets of 100us over [0, 1200) */
    mt_curve *cv = mt_query_curve(s, 0, 1200, 12);
    double want[12] = {0, 2, 3, 6, 7, 6, 6, 6, 6, 6, 4, 8};
    ok = cv->width == 100;
    for (int i = 0; i < 12; i++)
        if (cv->total[i] != want[i] * 16)
            ok = 0;
    CHECK(ok, "curve: max live per 100us bucket (a drop at a bucket's start is not carried in)");
    CHECK(cv->peak_filtered == 128 && cv->peak_filtered_time == 1100, "curve: exact peak");
    mt_curve_free(cv);

    /* hidden frames keep their cost */
    mt_filter *hf = mt_filter_parse("hide:malloc hide:/^h/", &err, NULL);
    mt_selection *hs = mt_select(M, hf, MT_TIME_END);
    st = mt_query_sites(hs, MT_METRIC_SAMPLES, 0);
    CHECK(st->n == 3 && !strcmp(fname(fr[st->sites[0].frame].func), "g") && st->sites[0].cost.samples == 8 &&
              st->sites[1].cost.samples == 2 && !strcmp(fname(fr[st->sites[2].frame].func), "main") &&
              mt_selection_total(hs).samples == 11,
          "hide:malloc hide:/^h/: sites g 8, f 2, main 1; total still 11");
    mt_sites_free(st);
    mt_selection_free(hs);
    mt_filter_free(hf);

    /* stats */
    mt_stats so;
    mt_query_stats(s, &so);
    /* the peak: the curve's highest, and the estimate below it within its interval */
    CHECK(so.median_lifetime_us == 800 && so.mean_lifetime_us == 725 && so.peak.curve_max == 128 &&
              so.peak_filtered.curve_max == 128 && so.peak_bytes == so.peak.bytes &&
              so.peak.lo <= so.peak.bytes && so.peak.bytes <= 128 && 128 <= so.peak.hi &&
              so.peak_filtered_bytes == so.peak_bytes && so.never_collected_bytes == 112 &&
              so.promoted_bytes == 32 && so.by_source[MT_SOURCE_MINOR].samples == 7,
          "stats: median lifetime 800us (by samples), mean 725us (collected), peak, promoted 32 B");
    mt_filter *sf = mt_filter_parse("source:minor", NULL, NULL);
    mt_selection *ss = mt_select(M, sf, MT_TIME_END);
    mt_query_stats(ss, &so);
    /* minor: A0 (2, 100..1000), A3 (1, 400..1200), A4 (4, 1100..): peak 5 at 1100 */
    CHECK(so.peak_filtered.curve_max == 5 * 16 && so.peak_filtered_time == 1100 &&
              so.peak_filtered_bytes == so.peak_filtered.bytes,
          "stats of source:minor: filtered peak 80 bytes at 1100us (got %.0f at %lld)",
          so.peak_filtered.curve_max, (long long)so.peak_filtered_time);
    mt_selection_free(ss);
    mt_filter_free(sf);

    /* live cost at the peak */
    mt_selection *ps = mt_select(M, NULL, MT_TIME_PEAK);
    CHECK(mt_selection_live_at(ps) == 1100 && mt_selection_total(ps).live_samples == 8,
          "selection live at peak: 8 samples at 1100us");
    mt_selection_free(ps);
    mt_selection_free(s);
    mt_model_free(M);
    return failures ? 1 : 0;
}
