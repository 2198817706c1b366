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

static void xml_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        default:
            if ((unsigned char)*s >= 0x20)
                fputc(*s, out);
        }
    }
}

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
    xml_text(out, title);
    fprintf(out, "</text>\n<text x=\"%d\" y=\"37\" text-anchor=\"middle\" fill=\"#555\">", W / 2);
    xml_text(out, subtitle);
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
    xml_text(out, xlabel);
    fprintf(out, "</text>\n<text transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\">",
            b->y0 + b->h / 2);
    xml_text(out, ylabel);
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

static void legend(FILE *out, const frame_box *b, int i, const char *color, const char *text)
{
    double y = b->y0 + 10 + 16 * i;
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"4\" fill=\"%s\"/>"
                 "<text x=\"%.1f\" y=\"%.1f\">",
            b->x0 + 14, y - 4, color, b->x0 + 34, y + 1);
    xml_text(out, text);
    fputs("</text>\n", out);
}

int mt_plot_svg(FILE *out, const mt_selection *s, const mt_plot_options *o)
{
    const mt_model *m = mt_selection_model(s);
    int W = o->width > 0 ? o->width : 900, H = o->height > 0 ? o->height : 420;
    frame_box b = {90, 50, W - 120, H - 110};
    const char *title = o->title ? o->title : mt_model_info(m)->executable_name;
    char sub[200], t1[32], t2[32];
    mt_cost tot = mt_selection_total(s);
    if (o->kind == MT_PLOT_MEMORY) {
        size_t n = (size_t)b.w / 2;
        mt_curve *c = mt_query_curve(s, 0, mt_model_end(m) + 1, n ? n : 1);
        if (!c)
            return -1;
        double ymax = 0;
        for (size_t i = 0; i < c->n; i++)
            if (c->total[i] > ymax)
                ymax = c->total[i];
        if (o->rss && (double)o->rss->peak_rss > ymax)
            ymax = (double)o->rss->peak_rss;
        ymax = ymax > 0 ? ymax * 1.05 : 1;
        double xmax = (double)(mt_model_end(m) + 1) / 1e6;
        mt_format_bytes(t1, sizeof t1, mt_model_peak_bytes(m));
        mt_format_time(t2, sizeof t2, mt_model_peak_time(m));
        snprintf(sub, sizeof sub, "live memory (estimated); peak %s at %s", t1, t2);
        header(out, W, H, title, sub);
        axes(out, &b, xmax, "time (s)", ymax, 1, "live bytes", 38);
        polyline(out, &b, c, c->total, xmax, ymax, "#888");
        legend(out, &b, 0, "#888", "all allocations");
        int li = 1;
        if (tot.allocs != mt_model_n_allocs(m)) {
            polyline(out, &b, c, c->filtered, xmax, ymax, "#1f6fd0");
            legend(out, &b, li++, "#1f6fd0", "selected allocations");
        }
        if (o->rss) {
            char pk[32], lab[80];
            mt_format_bytes(pk, sizeof pk, (double)o->rss->peak_rss);
            snprintf(lab, sizeof lab, "resident memory (RSS), peak %s", pk);
            rss_line(out, &b, o->rss, xmax, ymax);
            legend(out, &b, li++, "#c0392b", lab);
        }
        mt_curve_free(c);
    } else if (o->kind == MT_PLOT_SIZES) {
        mt_histogram *h = mt_query_histogram(s, MT_HIST_SIZE);
        if (!h)
            return -1;
        double ymax = 0;
        for (size_t i = 0; i < h->n; i++)
            if (h->cost[i].alloc_bytes > ymax)
                ymax = h->cost[i].alloc_bytes;
        ymax = ymax > 0 ? ymax * 1.05 : 1;
        mt_format_bytes(t1, sizeof t1, tot.alloc_bytes);
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
        mt_histogram_free(h);
    } else {
        const mt_alloc *a = mt_model_allocs(m);
        size_t n = mt_model_n_allocs(m);
        mt_timedelta end = mt_model_end(m);
        double xmax = (double)(end + 1) / 1e6, ymax = 0;
        for (size_t i = 0; i < n; i++)
            if (mt_selection_has(s, i)) {
                mt_timedelta c = a[i].collect == MT_TIME_NEVER ? end : a[i].collect;
                if ((double)(c - a[i].time) / 1e6 > ymax)
                    ymax = (double)(c - a[i].time) / 1e6;
            }
        ymax = ymax > 0 ? ymax * 1.05 : 1;
        snprintf(sub, sizeof sub, "lifetime of each sampled block (%llu); grey: never collected",
                 (unsigned long long)tot.allocs);
        header(out, W, H, title, sub);
        axes(out, &b, xmax, "allocation time (s)", ymax, 0, "lifetime (s)", 38);
        /* at most one dot per pixel column and row */
        size_t cols = (size_t)b.w + 1, rows = (size_t)b.h + 1;
        uint8_t *seen = calloc(cols * rows, 1);
        if (!seen)
            return -1;
        fputs("<g>\n", out);
        for (size_t i = 0; i < n; i++) {
            if (!mt_selection_has(s, i))
                continue;
            int never = a[i].collect == MT_TIME_NEVER;
            mt_timedelta c = never ? end : a[i].collect;
            double x = (double)a[i].time / 1e6, y = (double)(c - a[i].time) / 1e6;
            size_t px = (size_t)(b.w * x / xmax), py = (size_t)(b.h * y / ymax);
            if (px >= cols || py >= rows)
                continue;
            uint8_t bit = never ? 2 : 1;
            if (seen[py * cols + px] & bit)
                continue;
            seen[py * cols + px] |= bit;
            fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.5\" fill=\"%s\"/>\n",
                    b.x0 + (double)px, b.y0 + b.h - (double)py, never ? "#999" : "#1f6fd0");
        }
        fputs("</g>\n", out);
        free(seen);
    }
    fputs("</svg>\n", out);
    return ferror(out) ? -1 : 0;
}
