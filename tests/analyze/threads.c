/*
 * threads.c - queries on one model and one selection from several threads
 * at once (as the web viewer serves several tabs): every thread must get
 * the same answers as a single thread. The first curve query builds the
 * model's event list lazily; all threads race for it here.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyze/load.h"
#include "memtrace/analyze.h"

#define THREADS 4

static mt_model *M;
static mt_selection *S;

typedef struct result {
    double peak, curve_sum, tree_total, graph_total, live_end;
    size_t sites;
} result;

static void *work(void *arg)
{
    result *r = arg;
    r->peak = mt_model_peak_bytes(M);
    mt_curve *c = mt_query_curve(S, 0, MT_TIME_END, 100);
    for (size_t i = 0; c && i < c->n; i++)
        r->curve_sum += c->total[i] + c->filtered[i];
    mt_curve_free(c);
    mt_tree *t = mt_query_tree(S, MT_TREE_TOP_DOWN, MT_METRIC_ALLOC_BYTES, 0.001);
    r->tree_total = t ? t->nodes[0].total.alloc_bytes : -1;
    mt_tree_free(t);
    mt_graph *g = mt_query_graph(S, MT_METRIC_ALLOC_BYTES, 0.001);
    r->graph_total = g ? g->total.alloc_bytes : -1;
    mt_graph_free(g);
    mt_sites *st = mt_query_sites(S, MT_METRIC_LIVE_BYTES, 3);
    r->sites = st ? st->n : 0;
    mt_sites_free(st);
    r->live_end = mt_model_live_at(M, 100000);
    /* a selection of one's own too */
    mt_filter *f = mt_filter_parse("live:peak", NULL, NULL);
    mt_selection *s = mt_select(M, f, MT_TIME_PEAK);
    r->live_end += mt_selection_total(s).live_bytes;
    mt_selection_free(s);
    mt_filter_free(f);
    return NULL;
}

int main(void)
{
    const char *dir = getenv("MT_FIXTURES");
    char path[4096];
    snprintf(path, sizeof path, "%s/leak.ctf", dir ? dir : "tests/fixtures/memtrace");
    char *err = NULL;
    int failures = 0;
    for (int round = 0; round < 3; round++) {
        M = mt_model_load(path, NULL, &err);
        if (!M) {
            printf("FAIL: %s\n", err);
            return 1;
        }
        S = mt_select(M, NULL, MT_TIME_END);
        pthread_t th[THREADS];
        result r[THREADS + 1] = {{0}};
        for (int i = 0; i < THREADS; i++)
            pthread_create(&th[i], NULL, work, &r[i]);
        for (int i = 0; i < THREADS; i++)
            pthread_join(th[i], NULL);
        work(&r[THREADS]); /* alone, after */
        for (int i = 0; i < THREADS; i++)
            if (r[i].peak != r[THREADS].peak || r[i].curve_sum != r[THREADS].curve_sum ||
                r[i].tree_total != r[THREADS].tree_total || r[i].graph_total != r[THREADS].graph_total ||
                r[i].sites != r[THREADS].sites || r[i].live_end != r[THREADS].live_end)
                failures++;
        if (r[THREADS].peak != 24608000)
            failures++;
        mt_selection_free(S);
        mt_model_free(M);
    }
    if (failures)
        printf("FAIL: concurrent queries disagree (%d)\n", failures);
    else
        printf("PASS: %d threads x 3 models: concurrent queries give the single-thread answers\n", THREADS);
    return failures != 0;
}
