/*
 * fold.c - unit test of folded models (mt_model_options.fold): the same
 * per-stack costs as a whole model for many filters and times, memory that
 * does not grow with the number of freed allocations, blocks freed in
 * scrambled order or long after the window of recent ids moved on, the
 * never-collected blocks folded in the same order by either sort, and a
 * folded model refusing another filter, folding at a given peak.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/load.h"
#include "memtrace/analyze.h"
#include "testtrace.h"

static uint64_t rnd_state = 88172645463325252ULL;
static uint64_t rnd(void) { return tt_rnd(&rnd_state); }

/* n allocations on a few stacks; most freed soon, some much later, some
 * never; with jumpy ids, some ids are far ahead (explicit ids are not
 * possible with the writer, so "jumpy" frees blocks in scrambled order). */
static int write_trace(const char *path, size_t n, int scrambled)
{
    int fd;
    mt_writer *w = tt_writer_open(path, "fold-test", 0.01, tt_resolve, &fd);
    if (!w)
        return -1;
    /* short-lived and long-lived blocks, each freed a fixed time after
     * their allocation (two queues), and with scrambled, a stack of blocks
     * freed newest first */
    enum { QMAX = 1 << 21, STACK = 1000 };
    static uint64_t qid[2][QMAX], sid[STACK];
    static int64_t qdue[2][QMAX];
    size_t head[2] = {0, 0}, tail[2] = {0, 0}, ns = 0;
    const int64_t delay[2] = {300, 1200000};
    mt_timestamp t = TT_START;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        t += 1 + (int64_t)(rnd() % 3);
        for (int q = 0; q < 2; q++)
            while (head[q] != tail[q] && qdue[q][head[q] % QMAX] <= t)
                rc |= mt_writer_put_collect(w, t, qid[q][head[q]++ % QMAX]);
        uint64_t st[4] = {TT_MAIN, TT_PARSE + rnd() % 2, TT_CACHE_PUT + rnd() % 3,
                           TT_XMALLOC + rnd() % 3};
        size_t len = 2 + rnd() % 3;
        mt_obj_id id;
        uint64_t words = 1 + rnd() % 300;
        rc |= mt_writer_put_alloc(w, t, words, 1 + words / 100, (mt_source)(rnd() % 3), st, len,
                                  &id);
        uint64_t r = rnd() % 100;
        if (r < 5)
            continue; /* never freed */
        if (scrambled && r < 30) {
            if (ns == STACK)
                while (ns > STACK / 2)
                    rc |= mt_writer_put_collect(w, t, sid[--ns]);
            sid[ns++] = id;
            continue;
        }
        int q = r < 75 ? 0 : 1;
        if (tail[q] - head[q] == QMAX)
            continue;
        qid[q][tail[q] % QMAX] = id;
        qdue[q][tail[q]++ % QMAX] = t + delay[q];
    }
    rc |= mt_writer_close(w);
    close(fd);
    return rc;
}

typedef struct sum { size_t n; mt_cost c[64]; mt_node_id node[64]; } sum;

static int collect(void *ctx, mt_node_id node, const mt_cost *c)
{
    sum *s = ctx;
    if (s->n < 64) {
        s->c[s->n] = *c;
        s->node[s->n] = node;
    }
    s->n++;
    return 0;
}

static int near(double a, double b)
{
    double d = a > b ? a - b : b - a;
    return d <= 1e-9 * (a > b ? a : b) + 1e-12;
}

static int same_costs(const sum *a, const sum *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n && i < 64; i++) {
        const mt_cost *x = &a->c[i], *y = &b->c[i];
        if (a->node[i] != b->node[i] || x->samples != y->samples || x->allocs != y->allocs ||
            x->live_samples != y->live_samples || x->temp_samples != y->temp_samples ||
            !near(x->alloc_bytes, y->alloc_bytes) || !near(x->alloc_objects, y->alloc_objects) ||
            !near(x->live_bytes, y->live_bytes) || !near(x->live_objects, y->live_objects) ||
            !near(x->temp_objects, y->temp_objects))
            return 0;
    }
    return 1;
}

static void compare(const char *path, const char *filter, mt_timedelta at)
{
    char *err = NULL;
    mt_filter *f = mt_filter_parse(filter, &err, NULL);
    if (!f) {
        CHECK(0, "filter '%s' parses: %s", filter, err);
        free(err);
        return;
    }
    mt_model *whole = mt_model_load(path, NULL, &err);
    mt_model_options fo = {0};
    fo.fold = 1;
    fo.fold_filter = f;
    fo.fold_live_at = at;
    if (whole && (at == MT_TIME_PEAK || mt_filter_uses_peak(f))) {
        fo.fold_peak_known = 1;
        fo.fold_peak = mt_model_peak_time(whole);
    }
    mt_model *folded = whole ? mt_model_load(path, &fo, &err) : NULL;
    if (!whole || !folded) {
        CHECK(0, "load %s: %s", path, err);
        free(err);
        mt_model_free(whole);
        mt_filter_free(f);
        return;
    }
    mt_selection *sw = mt_select(whole, f, at), *sf = mt_select(folded, f, at);
    static sum a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    if (sw)
        mt_selection_each_stack(sw, collect, &a);
    if (sf)
        mt_selection_each_stack(sf, collect, &b);
    mt_cost ta = sw ? mt_selection_total(sw) : (mt_cost){0};
    mt_cost tb = sf ? mt_selection_total(sf) : (mt_cost){0};
    CHECK(sw && sf && same_costs(&a, &b) && ta.samples == tb.samples &&
              ta.live_samples == tb.live_samples && near(ta.alloc_objects, tb.alloc_objects),
          "folded = whole for '%s' at %lld: %zu stacks, %llu samples (%llu live)", filter,
          (long long)at, b.n, (unsigned long long)tb.samples,
          (unsigned long long)tb.live_samples);
    uint64_t na = 0, nw = 0, ca = 0, cw = 0;
    mt_model_event_counts(folded, &na, NULL, &ca);
    mt_model_event_counts(whole, &nw, NULL, &cw);
    CHECK(na == nw && ca == cw && mt_model_end(folded) == mt_model_end(whole),
          "folded model counts the same events (%llu allocations)", (unsigned long long)na);
    if (mt_model_peak_known(folded))
        CHECK(mt_model_peak_time(folded) == mt_model_peak_time(whole) &&
                  mt_model_peak_bytes(folded) == mt_model_peak_bytes(whole),
              "folded model finds the same peak");
    mt_selection_free(sw);
    mt_selection_free(sf);
    mt_model_free(whole);
    mt_model_free(folded);
    mt_filter_free(f);
}

/* The blocks never collected are folded in allocation order after a
 * radix sort; the route qsort (mt_read_force) takes the general qsort instead (the
 * fallback for sequence numbers too wide to pack). Both give the same
 * stacks in the same order with exactly the same costs. */
static void compare_sorts(const char *path)
{
    mt_model_options fo = {0};
    fo.fold = 1;
    fo.fold_live_at = MT_TIME_END;
    char *err = NULL;
    mt_model *radix = mt_model_load(path, &fo, &err);
    mt_read_force("qsort");
    mt_model *qs = radix ? mt_model_load(path, &fo, &err) : NULL;
    mt_read_force("auto");
    mt_selection *sr = radix ? mt_select(radix, NULL, MT_TIME_END) : NULL;
    mt_selection *sq = qs ? mt_select(qs, NULL, MT_TIME_END) : NULL;
    static sum a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    if (sr && sq) {
        mt_selection_each_stack(sr, collect, &a);
        mt_selection_each_stack(sq, collect, &b);
    }
    mt_cost ta = sr ? mt_selection_total(sr) : (mt_cost){0};
    mt_cost tb = sq ? mt_selection_total(sq) : (mt_cost){0};
    CHECK(sr && sq && a.n > 1 && a.n == b.n && memcmp(&a, &b, sizeof a) == 0 &&
              memcmp(&ta, &tb, sizeof ta) == 0 && ta.live_samples > 0,
          "never-collected blocks: radix sort = qsort, bit for bit (%zu stacks, %llu live samples)",
          a.n, (unsigned long long)ta.live_samples);
    free(err);
    mt_selection_free(sr);
    mt_selection_free(sq);
    mt_model_free(radix);
    mt_model_free(qs);
}

int main(void)
{
    const char *dir = getenv("MT_TMP");
    char p1[4096], p2[4096];
    snprintf(p1, sizeof p1, "%s/fold1.ctf", dir ? dir : "/tmp");
    snprintf(p2, sizeof p2, "%s/fold2.ctf", dir ? dir : "/tmp");
    if (write_trace(p1, 300000, 0) < 0 || write_trace(p2, 200000, 1) < 0) {
        printf("FAIL: cannot write the test traces\n");
        return 1;
    }
    const char *filters[] = {"", "size:>=1k", "!inside:cache_put", "inside:parse hide:load",
                             "lifetime:<100us", "live:200ms", "collect:never", "live:100ms-300ms",
                             "alloc:100ms-400ms source:minor,external", "live:peak",
                             "live:peak size:<1k", "live:end !inside:xmalloc"};
    mt_timedelta times[] = {MT_TIME_END, 150000, MT_TIME_PEAK, 0};
    for (size_t i = 0; i < sizeof filters / sizeof *filters; i++)
        for (size_t k = 0; k < 4; k++) {
            compare(p1, filters[i], times[k]);
            if (k == 0)
                compare(p2, filters[i], times[k]);
        }

    /* memory follows the live blocks and stacks, not the allocations */
    char p3[4096];
    snprintf(p3, sizeof p3, "%s/fold3.ctf", dir ? dir : "/tmp");
    if (write_trace(p3, 1500000, 0) < 0) {
        printf("FAIL: cannot write the big test trace\n");
        return 1;
    }
    /* more allocations than the window of recent ids: blocks move to the
     * table and back out of it */
    compare(p3, "", MT_TIME_END);
    compare(p3, "lifetime:>1s !inside:tmp", 1500000);
    compare_sorts(p2);
    compare_sorts(p3);
    mt_model_options fo = {0};
    fo.fold = 1;
    fo.fold_live_at = MT_TIME_END;
    char *err = NULL;
    mt_model *small = mt_model_load(p1, &fo, &err), *big = mt_model_load(p3, &fo, &err);
    mt_model *whole = mt_model_load(p3, NULL, &err);
    CHECK(small && big && whole, "models load");
    if (small && big && whole) {
        size_t ms = mt_model_memory(small), mb = mt_model_memory(big),
               mw = mt_model_memory(whole);
        CHECK(mb < 2 * ms + (1 << 20) && mb * 10 < mw,
              "a folded model of 5x the allocations is about as big (%zu vs %zu bytes; whole "
              "model %zu)", mb, ms, mw);
        CHECK(mt_model_n_allocs(big) == 0 && mt_model_is_folded(big) && !mt_model_is_folded(whole),
              "a folded model keeps no allocation records");
        mt_filter *f = mt_filter_parse("size:>=1k", &err, NULL);
        mt_selection *s = mt_select_err(big, f, MT_TIME_END, &err);
        CHECK(!s && err, "a folded model refuses another filter: %s", err ? err : "(none)");
        free(err);
        err = NULL;
        mt_model_options po = {0};
        po.fold = 1;
        po.fold_live_at = MT_TIME_PEAK;
        mt_model *pm = mt_model_load(p1, &po, &err);
        CHECK(!pm && err, "folding at the peak without its time is refused: %s",
              err ? err : "(none)");
        mt_model_free(pm);
        free(err);
        mt_selection_free(s);
        mt_filter_free(f);
    }
    mt_model_free(small);
    mt_model_free(big);
    mt_model_free(whole);
    return failures ? 1 : 0;
}
