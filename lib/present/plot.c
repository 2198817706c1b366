/*
 * plot.c - SVG pictures of a selection: live memory over time (total and
 * filtered, and resident memory when the trace has it), the block-size
 * histogram by kind, and the lifetime scatter. Plain
 * SVG 1.1 written by hand: no plotting library is needed for three charts.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/present.h"

typedef struct frame_box {
    double x0, y0, w, h;   /* plotting area in pixels */
} frame_box;

/* A "nice" tick step for a range: 1, 2 or 5 times a power of ten. */
static double nice_step(double range, int ticks)
{
    if (range <= 0)
        return 1;
    double raw = range / ticks, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

static void header(FILE *out, int W, int H, const char *title, const char *subtitle)
{
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text x=\"%d\" y=\"20\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">",
            W, H, W, H, W / 2);
    mt_xml_put(out, title);
    fprintf(out, "</text>\n<text x=\"%d\" y=\"37\" text-anchor=\"middle\" fill=\"#555\">", W / 2);
    mt_xml_put(out, subtitle);
    fputs("</text>\n", out);
}

/* Axes with ticks; x in seconds or log2 buckets, y in bytes or seconds. */
static void axes(FILE *out, const frame_box *b, double xmax, const char *xlabel, double ymax,
                 int ybytes, const char *ylabel, double xlabel_dy)
{
    fprintf(out, "<g stroke=\"#333\" fill=\"none\"><path d=\"M%.1f %.1fV%.1fH%.1f\"/></g>\n", b->x0,
            b->y0, b->y0 + b->h, b->x0 + b->w);
    double xs = nice_step(xmax, 8);
    for (double x = 0; x <= xmax * 1.0001 && xmax > 0; x += xs) {
        double px = b->x0 + b->w * x / xmax;
        fprintf(out, "<path d=\"M%.1f %.1fv5\" stroke=\"#333\"/><text x=\"%.1f\" y=\"%.1f\" "
                     "text-anchor=\"middle\">%g</text>\n",
                px, b->y0 + b->h, px, b->y0 + b->h + 18, x);
    }
    double ys = nice_step(ymax, 6);
    if (ybytes) {
        /* steps that are round in the unit shown (KiB, MiB, ...) */
        double unit = 1;
        while (ymax / unit >= 1024)
            unit *= 1024;
        ys = nice_step(ymax / unit, 6) * unit;
    }
    for (double y = 0; y <= ymax * 1.0001 && ymax > 0; y += ys) {
        double py = b->y0 + b->h - b->h * y / ymax;
        char lab[32];
        if (ybytes)
            mt_format_bytes(lab, sizeof lab, y);
        else
            snprintf(lab, sizeof lab, "%g", y);
        fprintf(out, "<path d=\"M%.1f %.1fh-5\" stroke=\"#333\"/><path d=\"M%.1f %.1fh%.1f\" "
                     "stroke=\"#eee\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                b->x0, py, b->x0 + 1, py, b->w, b->x0 - 8, py + 4, lab);
    }
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", b->x0 + b->w / 2,
            b->y0 + b->h + xlabel_dy);
    mt_xml_put(out, xlabel);
    fprintf(out, "</text>\n<text transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\">",
            b->y0 + b->h / 2);
    mt_xml_put(out, ylabel);
    fputs("</text>\n", out);
}

static void polyline(FILE *out, const frame_box *b, const mt_curve *c, const double *v,
                     double xmax, double ymax, const char *color)
{
    fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", color);
    for (size_t i = 0; i < c->n; i++) {
        double t0 = (double)(c->time[i] - c->t0) / 1e6, t1 = t0 + (double)c->width / 1e6;
        double py = b->y0 + b->h - (ymax > 0 ? b->h * v[i] / ymax : 0);
        fprintf(out, "%.1f,%.1f %.1f,%.1f ", b->x0 + b->w * t0 / xmax, py,
                b->x0 + b->w * (t1 < xmax ? t1 : xmax) / xmax, py);
    }
    fputs("\"/>\n", out);
}

/* Resident memory: a step line through the samples. */
static void rss_line(FILE *out, const frame_box *b, const mt_rss *r, double xmax, double ymax)
{
    fputs("<polyline fill=\"none\" stroke=\"#c0392b\" stroke-width=\"1.5\" points=\"", out);
    for (size_t i = 0; i < r->n; i++) {
        double t = (double)r->p[i].time / 1e6;
        if (t > xmax)
            t = xmax;
        double py = b->y0 + b->h - (ymax > 0 ? b->h * (double)r->p[i].rss / ymax : 0);
        fprintf(out, "%.1f,%.1f ", b->x0 + b->w * t / xmax, py);
    }
    fputs("\"/>\n", out);
}

/* The resident-memory ledger's rows that do not come from the samples
 * (docs/rss.md), stacked at each reading, held until the next: what the
 * resident memory holds besides the heap. */
static const struct {
    const char *color, *name;
} ledger_layer[] = {
    {"#f4d03f", "allocator: free but resident, metadata"},
    {"#a569bd", "thread stacks"},
    {"#5dade2", "modules' code and data"},
    {"#48c9b0", "file maps, shared memory"},
    {"#bfc9ca", "memtrace's own"},
};
#define LEDGER_LAYERS (sizeof ledger_layer / sizeof ledger_layer[0])

static double layer_bytes(const mt_rss_reading *r, size_t k)
{
    double v = 0;
    switch (k) {
    case 0: v = (r->a_free > 0 ? r->a_free : 0) + (r->a_meta > 0 ? r->a_meta : 0); break;
    case 1: v = (double)r->stack; break;
    case 2: v = (double)r->mod; break;
    case 3: v = (double)r->file + (double)r->shm; break;
    default: v = (double)r->own; break;
    }
    return v > 0 ? v : 0;
}

static void ledger_areas(FILE *out, const frame_box *b, const mt_rss *r, double xmax, double ymax)
{
    double bottom = b->y0 + b->h;
    /* the highest layer first, each lower one painted over it */
    for (size_t k = LEDGER_LAYERS; k-- > 0;) {
        fprintf(out, "<polygon fill=\"%s\" stroke=\"none\" points=\"",
                ledger_layer[k].color);
        double x_first = b->x0 + b->w * ((double)r->l[0].time / 1e6 < xmax ? (double)r->l[0].time / 1e6 : xmax) / xmax;
        fprintf(out, "%.1f,%.1f ", x_first, bottom);
        for (size_t i = 0; i < r->nl; i++) {
            double cum = 0;
            for (size_t j = 0; j <= k; j++)
                cum += layer_bytes(&r->l[i], j);
            double t0 = (double)r->l[i].time / 1e6;
            double t1 = i + 1 < r->nl ? (double)r->l[i + 1].time / 1e6 : xmax;
            if (t0 > xmax)
                t0 = xmax;
            if (t1 > xmax)
                t1 = xmax;
            double py = bottom - (ymax > 0 ? b->h * cum / ymax : 0);
            fprintf(out, "%.1f,%.1f %.1f,%.1f ", b->x0 + b->w * t0 / xmax, py,
                    b->x0 + b->w * t1 / xmax, py);
        }
        fprintf(out, "%.1f,%.1f\"/>\n", b->x0 + b->w, bottom);
    }
}

static void legend(FILE *out, const frame_box *b, int i, const char *color, const char *text)
{
    double y = b->y0 + 10 + 16 * i;
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"4\" fill=\"%s\"/>"
                 "<text x=\"%.1f\" y=\"%.1f\">",
            b->x0 + 14, y - 4, color, b->x0 + 34, y + 1);
    mt_xml_put(out, text);
    fputs("</text>\n", out);
}

/* The plotting area of a picture of these options. */
static void picture(const mt_plot_options *o, int *W, int *H, frame_box *b)
{
    *W = o->width > 0 ? o->width : 900;
    *H = o->height > 0 ? o->height : 420;
    b->x0 = 90;
    b->y0 = 50;
    b->w = *W - 120;
    b->h = *H - 110;
}

size_t mt_plot_memory_buckets(const mt_plot_options *o)
{
    int W, H;
    frame_box b;
    picture(o, &W, &H, &b);
    size_t n = (size_t)b.w / 2;
    return n ? n : 1;
}

int mt_plot_memory_svg(FILE *out, const mt_model *m, const mt_curve *c, int filtered,
                       const mt_plot_options *o)
{
    int W, H;
    frame_box b;
    picture(o, &W, &H, &b);
    const char *title = o->title ? o->title : mt_model_info(m)->executable_name;
    char sub[240], t1[160], t2[32];
    double ymax = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->total[i] > ymax)
            ymax = c->total[i];
    if (o->rss && (double)o->rss->peak_rss > ymax)
        ymax = (double)o->rss->peak_rss;
    ymax = ymax > 0 ? ymax * 1.05 : 1;
    double xmax = (double)(mt_model_end(m) + 1) / 1e6;
    mt_peak pk;   /* the peak's estimate: the curve's highest reads high (docs/estimates.md) */
    mt_model_peak(m, &pk);
    mt_format_peak(t1, sizeof t1, &pk);
    mt_format_time(t2, sizeof t2, mt_model_peak_time(m));
    snprintf(sub, sizeof sub, "live memory (estimated); peak %s at %s", t1, t2);
    header(out, W, H, title, sub);
    axes(out, &b, xmax, "time (s)", ymax, 1, "live bytes", 38);
    if (o->rss && o->rss->nl)
        ledger_areas(out, &b, o->rss, xmax, ymax);
    polyline(out, &b, c, c->total, xmax, ymax, "#888");
    legend(out, &b, 0, "#888", "all allocations");
    int li = 1;
    if (filtered) {
        polyline(out, &b, c, c->filtered, xmax, ymax, "#1f6fd0");
        legend(out, &b, li++, "#1f6fd0", "selected allocations");
    }
    if (o->rss) {
        char pk[32], lab[80];
        mt_format_bytes(pk, sizeof pk, (double)o->rss->peak_rss);
        snprintf(lab, sizeof lab, "resident memory (RSS), peak %s", pk);
        rss_line(out, &b, o->rss, xmax, ymax);
        legend(out, &b, li++, "#c0392b", lab);
        for (size_t k = 0; o->rss->nl && k < LEDGER_LAYERS; k++)
            legend(out, &b, li++, ledger_layer[k].color, ledger_layer[k].name);
    }
    fputs("</svg>\n", out);
    return ferror(out) ? -1 : 0;
}

int mt_plot_sizes_svg(FILE *out, const mt_model *m, const mt_histogram *h, double alloc_bytes,
                      const mt_plot_options *o)
{
    int W, H;
    frame_box b;
    picture(o, &W, &H, &b);
    const char *title = o->title ? o->title : mt_model_info(m)->executable_name;
    char sub[200], t1[32];
    double ymax = 0;
    for (size_t i = 0; i < h->n; i++)
        if (h->cost[i].alloc_bytes > ymax)
            ymax = h->cost[i].alloc_bytes;
    ymax = ymax > 0 ? ymax * 1.05 : 1;
    mt_format_bytes(t1, sizeof t1, alloc_bytes);
    snprintf(sub, sizeof sub, "bytes allocated by block size (estimated; total %s)", t1);
    header(out, W, H, title, sub);
    b.h -= 22; /* room for the slanted size labels */
    axes(out, &b, 0, "block size (power-of-two buckets)", ymax, 1, "bytes allocated", 62);
    static const char *const colors[3] = {"#1f6fd0", "#d0701f", "#2a9d3a"};
    const char *names[3];
    for (unsigned k = 0; k < 3; k++)
        names[k] = mt_source_kind_name(m, k);
    double bw = h->n ? b.w / (double)h->n : b.w;
    for (size_t i = 0; i < h->n; i++) {
        double y = b.y0 + b.h;
        for (int src = 0; src < 3; src++) {
            double v = h->by_source[i * 3 + src].alloc_bytes, ph = b.h * v / ymax;
            if (v <= 0)
                continue;
            y -= ph;
            fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                         "fill=\"%s\"><title>%s: %.0f bytes</title></rect>\n",
                    b.x0 + bw * (double)i + 1, y, bw - 2, ph, colors[src], names[src], v);
        }
        if (h->cost[i].allocs || i % 4 == 0) {
            mt_format_bytes(t1, sizeof t1, (double)h->lo[i]);
            fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"10\" "
                         "transform=\"rotate(-45 %.1f %.1f)\">%s</text>\n",
                    b.x0 + bw * ((double)i + 0.5), b.y0 + b.h + 12,
                    b.x0 + bw * ((double)i + 0.5), b.y0 + b.h + 12, t1);
        }
    }
    int li = 0;
    for (int src = 0; src < 3; src++) {
        mt_cost c = {0};
        for (size_t i = 0; i < h->n; i++)
            c.allocs += h->by_source[i * 3 + src].allocs;
        if (c.allocs)
            legend(out, &b, li++, colors[src], names[src]);
    }
    fputs("</svg>\n", out);
    return ferror(out) ? -1 : 0;
}

/* The lifetime scatter: at most one dot per pixel and colour, the one of
 * the first allocation (in file order) that falls there, so that the dots
 * come out the same whatever order the allocations are given in. */
typedef struct dot {
    uint64_t key;            /* (py * cols + px) * 2 + never; UINT64_MAX: empty */
    uint64_t seq;
} dot;

struct mt_plot_scatter {
    frame_box b;
    int W, H;
    double xmax, ymax;
    size_t cols, rows;
    mt_timedelta end;
    dot *dots;
    size_t mask, n;
};

mt_plot_scatter *mt_plot_scatter_new(const mt_plot_options *o, mt_timedelta end,
                                     mt_timedelta max_life)
{
    mt_plot_scatter *sc = calloc(1, sizeof *sc);
    if (!sc)
        return NULL;
    picture(o, &sc->W, &sc->H, &sc->b);
    sc->end = end;
    sc->xmax = (double)(end + 1) / 1e6;
    double ymax = (double)max_life / 1e6;
    sc->ymax = ymax > 0 ? ymax * 1.05 : 1;
    sc->cols = (size_t)sc->b.w + 1;
    sc->rows = (size_t)sc->b.h + 1;
    return sc;
}

void mt_plot_scatter_free(mt_plot_scatter *sc)
{
    if (!sc)
        return;
    free(sc->dots);
    free(sc);
}

static size_t dot_home(uint64_t key, size_t mask)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 17) & mask;
}

int mt_plot_scatter_add(mt_plot_scatter *sc, const mt_alloc *a, uint64_t seq)
{
    int never = a->collect == MT_TIME_NEVER;
    mt_timedelta c = never ? sc->end : a->collect;
    double x = (double)a->time / 1e6, y = (double)(c - a->time) / 1e6;
    size_t px = (size_t)(sc->b.w * x / sc->xmax), py = (size_t)(sc->b.h * y / sc->ymax);
    if (px >= sc->cols || py >= sc->rows)
        return 0;
    uint64_t key = ((uint64_t)py * sc->cols + px) * 2 + (uint64_t)never;
    if (!sc->dots || (sc->n + 1) * 2 > sc->mask + 1) {
        size_t cap = sc->dots ? (sc->mask + 1) * 2 : 1024;
        dot *d = malloc(cap * sizeof *d);
        if (!d)
            return -1;
        for (size_t i = 0; i < cap; i++)
            d[i].key = UINT64_MAX;
        for (size_t i = 0; sc->dots && i <= sc->mask; i++) {
            if (sc->dots[i].key == UINT64_MAX)
                continue;
            size_t j = dot_home(sc->dots[i].key, cap - 1);
            while (d[j].key != UINT64_MAX)
                j = (j + 1) & (cap - 1);
            d[j] = sc->dots[i];
        }
        free(sc->dots);
        sc->dots = d;
        sc->mask = cap - 1;
    }
    size_t j = dot_home(key, sc->mask);
    while (sc->dots[j].key != UINT64_MAX && sc->dots[j].key != key)
        j = (j + 1) & sc->mask;
    if (sc->dots[j].key == UINT64_MAX) {
        sc->dots[j].key = key;
        sc->dots[j].seq = seq;
        sc->n++;
    } else if (seq < sc->dots[j].seq) {
        sc->dots[j].seq = seq;
    }
    return 0;
}

static int cmp_dot(const void *x, const void *y)
{
    const dot *a = x, *b = y;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int mt_plot_lifetimes_svg(FILE *out, const mt_model *m, const mt_plot_scatter *sc,
                          uint64_t n_selected, const mt_plot_options *o)
{
    const char *title = o->title ? o->title : mt_model_info(m)->executable_name;
    char sub[200];
    frame_box b = sc->b;
    dot *v = malloc((sc->n ? sc->n : 1) * sizeof *v);
    if (!v)
        return -1;
    size_t n = 0;
    for (size_t i = 0; sc->dots && i <= sc->mask; i++)
        if (sc->dots[i].key != UINT64_MAX)
            v[n++] = sc->dots[i];
    qsort(v, n, sizeof *v, cmp_dot);
    snprintf(sub, sizeof sub, "lifetime of each sampled block (%llu); grey: never collected",
             (unsigned long long)n_selected);
    header(out, sc->W, sc->H, title, sub);
    axes(out, &b, sc->xmax, "allocation time (s)", sc->ymax, 0, "lifetime (s)", 38);
    fputs("<g>\n", out);
    for (size_t i = 0; i < n; i++) {
        int never = (int)(v[i].key & 1);
        uint64_t pix = v[i].key / 2;
        size_t px = (size_t)(pix % sc->cols), py = (size_t)(pix / sc->cols);
        fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.5\" fill=\"%s\"/>\n",
                b.x0 + (double)px, b.y0 + b.h - (double)py, never ? "#999" : "#1f6fd0");
    }
    fputs("</g>\n", out);
    free(v);
    fputs("</svg>\n", out);
    return ferror(out) ? -1 : 0;
}

int mt_plot_svg(FILE *out, const mt_selection *s, const mt_plot_options *o)
{
    const mt_model *m = mt_selection_model(s);
    mt_cost tot = mt_selection_total(s);
    int rc = -1;
    if (o->kind == MT_PLOT_MEMORY) {
        mt_curve *c = mt_query_curve(s, 0, mt_model_end(m) + 1, mt_plot_memory_buckets(o));
        if (c)
            rc = mt_plot_memory_svg(out, m, c, tot.allocs != mt_model_n_allocs(m), o);
        mt_curve_free(c);
    } else if (o->kind == MT_PLOT_SIZES) {
        mt_histogram *h = mt_query_histogram(s, MT_HIST_SIZE);
        if (h)
            rc = mt_plot_sizes_svg(out, m, h, tot.alloc_bytes, o);
        mt_histogram_free(h);
    } else {
        const mt_alloc *a = mt_model_allocs(m);
        size_t n = mt_model_n_allocs(m);
        mt_timedelta end = mt_model_end(m), life = 0;
        for (size_t i = 0; i < n; i++)
            if (mt_selection_has(s, i)) {
                mt_timedelta c = a[i].collect == MT_TIME_NEVER ? end : a[i].collect;
                if (c - a[i].time > life)
                    life = c - a[i].time;
            }
        mt_plot_scatter *sc = mt_plot_scatter_new(o, end, life);
        int ok = sc != NULL;
        for (size_t i = 0; i < n && ok; i++)
            if (mt_selection_has(s, i) && mt_plot_scatter_add(sc, &a[i], i) < 0)
                ok = 0;
        if (ok)
            rc = mt_plot_lifetimes_svg(out, m, sc, tot.allocs, o);
        mt_plot_scatter_free(sc);
    }
    return rc;
}
