/*
 * stacks.c - line-per-item text exports: allocation lifetimes (for
 * gnuplot) and collapsed stacks (for flamegraph.pl, inferno, speedscope).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/present.h"

/* Microseconds as seconds with six decimals, as "%.6f" prints us / 1e6
 * (the same digits for 0 <= us < 2^53: the double's error is far below
 * half a microsecond), without going through a double. Returns the end. */
static char *put_seconds(char *p, int64_t us)
{
    char tmp[24];
    int n = 0;
    uint64_t sec = (uint64_t)us / 1000000, frac = (uint64_t)us % 1000000;
    do {
        tmp[n++] = (char)('0' + sec % 10);
        sec /= 10;
    } while (sec);
    while (n)
        *p++ = tmp[--n];
    *p++ = '.';
    for (int k = 5; k >= 0; k--) {
        p[k] = (char)('0' + frac % 10);
        frac /= 10;
    }
    return p + 6;
}

void mt_lifetimes_line(FILE *out, const mt_alloc *a, mt_timedelta end, int json, int first)
{
    mt_timedelta c = a->collect == MT_TIME_NEVER ? end : a->collect;
    const int64_t big = (int64_t)1 << 53;
    if (a->time < 0 || c < a->time || c >= big) {
        /* not from a well-formed trace: the general way */
        if (json)
            fprintf(out, "%s\n{\"time\":%.6f,\"lifetime\":%.6f,\"size\":%llu,\"samples\":%llu,"
                         "\"collected\":%s}",
                    first ? "" : ",", (double)a->time / 1e6, (double)(c - a->time) / 1e6,
                    (unsigned long long)a->size, (unsigned long long)a->n_samples,
                    a->collect == MT_TIME_NEVER ? "false" : "true");
        else
            fprintf(out, "%.6f %.6f\n", (double)a->time / 1e6, (double)(c - a->time) / 1e6);
        return;
    }
    char line[160], *p = line;
    if (json) {
        p += sprintf(p, "%s\n{\"time\":", first ? "" : ",");
        p = put_seconds(p, a->time);
        memcpy(p, ",\"lifetime\":", 12);
        p = put_seconds(p + 12, c - a->time);
        p += sprintf(p, ",\"size\":%llu,\"samples\":%llu,\"collected\":%s}",
                     (unsigned long long)a->size, (unsigned long long)a->n_samples,
                     a->collect == MT_TIME_NEVER ? "false" : "true");
    } else {
        p = put_seconds(p, a->time);
        *p++ = ' ';
        p = put_seconds(p, c - a->time);
        *p++ = '\n';
    }
    fwrite(line, 1, (size_t)(p - line), out);
}

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
        mt_lifetimes_line(out, &a[i], end, json, first);
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

static void folded_path(FILE *out, const mt_tree *t, const mt_func *fn, uint32_t *path,
                        uint32_t node, int full_names)
{
    char nb[1024];
    size_t d = 0;
    for (uint32_t k = node; k; k = t->nodes[k].parent)
        path[d++] = k;
    for (size_t k = d; k > 0; k--) {
        folded_name(out, mt_display_name(nb, sizeof nb, fn[t->nodes[path[k - 1]].func].name,
                                         full_names));
        if (k > 1)
            fputc(';', out);
    }
}

int mt_report_folded_ex(FILE *out, const mt_selection *s, mt_metric weight, int full_names,
                        int *truncated)
{
    const mt_model *m = mt_selection_model(s);
    const mt_func *fn = mt_model_funcs(m);
    if (truncated)
        *truncated = 0;
    mt_tree *t = mt_query_tree(s, MT_TREE_TOP_DOWN, weight, 0);
    if (!t)
        return -1;
    uint32_t *path = malloc((t->n + 1) * sizeof *path);
    if (!path) {
        mt_tree_free(t);
        return -1;
    }
    for (size_t i = 1; i < t->n; i++) {
        const mt_tree_node *nd = &t->nodes[i];
        long long w = llround(mt_cost_get(&nd->self, weight));
        if (w > 0) {
            folded_path(out, t, fn, path, (uint32_t)i, full_names);
            fprintf(out, " %lld\n", w);
        }
        if (!t->truncated)
            continue;
        /* The tree stopped growing at MT_TREE_MAX_NODES: what the missing
         * descendants of a node cost is in its total only. Say so with a
         * [truncated] line under it, so that the flame graph's totals stay
         * right and the cut shows. */
        double below = mt_cost_get(&nd->total, weight) - mt_cost_get(&nd->self, weight);
        for (uint32_t c = nd->first_child; c; c = t->nodes[c].next_sibling)
            below -= mt_cost_get(&t->nodes[c].total, weight);
        long long cut = llround(below);
        if (cut > 0) {
            folded_path(out, t, fn, path, (uint32_t)i, full_names);
            fprintf(out, ";%s %lld\n", MT_TRUNCATED_NAME, cut);
            if (truncated)
                *truncated = 1;
        }
    }
    free(path);
    mt_tree_free(t);
    return ferror(out) ? -1 : 0;
}

int mt_report_folded(FILE *out, const mt_selection *s, mt_metric weight)
{
    return mt_report_folded_ex(out, s, weight, 0, NULL);
}
