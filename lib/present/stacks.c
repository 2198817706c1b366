/*
 * stacks.c - line-per-item text exports: allocation lifetimes (for
 * gnuplot) and collapsed stacks (for flamegraph.pl, inferno, speedscope).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/present.h"

int mt_report_lifetimes(FILE *out, const mt_selection *s, int json)
{
    const mt_model *m = mt_selection_model(s);
    const mt_alloc *a = mt_model_allocs(m);
    size_t n = mt_model_n_allocs(m);
    mt_timedelta end = mt_model_end(m);
    int first = 1;
    if (json)
        fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        if (!mt_selection_has(s, i))
            continue;
        mt_timedelta c = a[i].collect == MT_TIME_NEVER ? end : a[i].collect;
        if (json) {
            fprintf(out, "%s\n{\"time\":%.6f,\"lifetime\":%.6f,\"size\":%llu,\"samples\":%llu,"
                         "\"collected\":%s}",
                    first ? "" : ",", (double)a[i].time / 1e6, (double)(c - a[i].time) / 1e6,
                    (unsigned long long)a[i].size, (unsigned long long)a[i].n_samples,
                    a[i].collect == MT_TIME_NEVER ? "false" : "true");
        } else {
            fprintf(out, "%.6f %.6f\n", (double)a[i].time / 1e6, (double)(c - a[i].time) / 1e6);
        }
        first = 0;
    }
    if (json)
        fputs("\n]\n", out);
    return ferror(out) ? -1 : 0;
}

/* Names in folded lines must not hold ';' (the separator, written ':');
 * control characters (newlines included) are escaped as everywhere
 * (mt_text_put); spaces are fine for flamegraph.pl (it splits on the last
 * space). */
static void folded_name(FILE *out, const char *s)
{
    if (!strchr(s, ';')) {
        mt_text_put(out, s);
        return;
    }
    char *copy = strdup(s);
    if (!copy)
        return; /* the report fails on the stream's error or not at all */
    for (char *p = copy; (p = strchr(p, ';'));)
        *p = ':';
    mt_text_put(out, copy);
    free(copy);
}

int mt_report_folded(FILE *out, const mt_selection *s, mt_metric weight)
{
    const mt_model *m = mt_selection_model(s);
    const mt_func *fn = mt_model_funcs(m);
    mt_tree *t = mt_query_tree(s, MT_TREE_TOP_DOWN, weight, 0);
    if (!t)
        return -1;
    uint32_t *path = malloc((t->n + 1) * sizeof *path);
    if (!path) {
        mt_tree_free(t);
        return -1;
    }
    for (size_t i = 1; i < t->n; i++) {
        double v = mt_cost_get(&t->nodes[i].self, weight);
        long long w = llround(v);
        if (w <= 0)
            continue;
        size_t d = 0;
        for (uint32_t k = (uint32_t)i; k; k = t->nodes[k].parent)
            path[d++] = k;
        for (size_t k = d; k > 0; k--) {
            folded_name(out, fn[t->nodes[path[k - 1]].func].name);
            if (k > 1)
                fputc(';', out);
        }
        fprintf(out, " %lld\n", w);
    }
    free(path);
    mt_tree_free(t);
    return ferror(out) ? -1 : 0;
}
