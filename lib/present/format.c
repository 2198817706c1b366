/*
 * format.c - shared formatting of reports: human-readable bytes and times,
 * frame names, JSON strings, noise markers.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "memtrace/present.h"

void mt_format_bytes(char *buf, size_t cap, double b)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u = 0;
    double v = b < 0 ? -b : b;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    if (b < 0)
        v = -v;
    if (u == 0)
        snprintf(buf, cap, "%.0f B", v);
    else
        snprintf(buf, cap, v >= 100 || v <= -100 ? "%.0f %s" : v >= 10 || v <= -10 ? "%.1f %s" : "%.2f %s", v, units[u]);
}

void mt_format_time(char *buf, size_t cap, mt_timedelta us)
{
    if (us >= 1000000 || us <= -1000000)
        snprintf(buf, cap, "%.3fs", (double)us / 1e6);
    else if (us >= 1000 || us <= -1000)
        snprintf(buf, cap, "%.3gms", (double)us / 1e3);
    else
        snprintf(buf, cap, "%lldus", (long long)us);
}

/* One "name":value of a cost, after a comma unless first: a double in
 * fmt ("%.0f", "%.1f"), or an unsigned count when fmt is NULL. (512
 * bytes: the longest double printed with %.0f has 309 digits.) */
static void cost_field(mt_put_fn put, void *ctx, int first, const char *name, const char *fmt,
                       double v, uint64_t u)
{
    char b[512];
    int n = snprintf(b, sizeof b, "%s\"%s\":", first ? "" : ",", name);
    if (fmt)
        n += snprintf(b + n, sizeof b - (size_t)n, fmt, v);
    else
        n += snprintf(b + n, sizeof b - (size_t)n, "%llu", (unsigned long long)u);
    put(ctx, b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}

void mt_json_cost_to(const mt_cost *c, mt_put_fn put, void *ctx)
{
    put(ctx, "{", 1);
    cost_field(put, ctx, 1, "alloc_bytes", "%.0f", c->alloc_bytes, 0);
    cost_field(put, ctx, 0, "alloc_objects", "%.1f", c->alloc_objects, 0);
    cost_field(put, ctx, 0, "live_bytes", "%.0f", c->live_bytes, 0);
    cost_field(put, ctx, 0, "live_objects", "%.1f", c->live_objects, 0);
    cost_field(put, ctx, 0, "samples", NULL, 0, c->samples);
    cost_field(put, ctx, 0, "live_samples", NULL, 0, c->live_samples);
    cost_field(put, ctx, 0, "allocs", NULL, 0, c->allocs);
    cost_field(put, ctx, 0, "temp_bytes", "%.0f", c->temp_bytes, 0);
    cost_field(put, ctx, 0, "temp_objects", "%.1f", c->temp_objects, 0);
    cost_field(put, ctx, 0, "temp_samples", NULL, 0, c->temp_samples);
    /* each figure's own standard error */
    static const struct { const char *name; mt_metric m; } se[] = {
        {"alloc_bytes_se", MT_METRIC_ALLOC_BYTES}, {"alloc_objects_se", MT_METRIC_ALLOC_OBJECTS},
        {"live_bytes_se", MT_METRIC_LIVE_BYTES},   {"live_objects_se", MT_METRIC_LIVE_OBJECTS},
        {"temp_bytes_se", MT_METRIC_TEMP_BYTES},   {"temp_objects_se", MT_METRIC_TEMP_OBJECTS},
    };
    for (size_t i = 0; i < sizeof se / sizeof se[0]; i++) {
        double v = mt_cost_get(c, se[i].m);
        cost_field(put, ctx, 0, se[i].name, "%.1f", v > 0 ? v * mt_cost_rse(c, se[i].m) : 0, 0);
    }
    put(ctx, "}", 1);
}

void mt_json_cost(FILE *out, const mt_cost *c)
{
    mt_json_cost_to(c, mt_put_file, out);
}

void mt_format_frame(char *buf, size_t cap, const mt_model *m, mt_frame_id f)
{
    mt_format_frame_as(buf, cap, m, f, 1);
}

void mt_format_peak(char *buf, size_t cap, const mt_peak *p)
{
    char v[32], lo[32], hi[32];
    mt_format_bytes(v, sizeof v, p->bytes);
    if (!(p->sd > 0)) {
        snprintf(buf, cap, "%s", v);
        return;
    }
    mt_format_bytes(lo, sizeof lo, p->lo);
    mt_format_bytes(hi, sizeof hi, p->hi);
    snprintf(buf, cap, "%s (95%% interval %s - %s)", v, lo, hi);
}

void mt_json_peak(FILE *out, const char *prefix, const mt_peak *p)
{
    fprintf(out, ",\"%s_lo_bytes\":%.0f,\"%s_hi_bytes\":%.0f,\"%s_sd_bytes\":%.0f,"
                 "\"%s_curve_max_bytes\":%.0f,\"%s_readings\":%.2f",
            prefix, p->lo, prefix, p->hi, prefix, p->sd, prefix, p->curve_max, prefix, p->readings);
}

const char *mt_rse_mark(double e)
{
    return e > MT_NOISE ? "?" : e > MT_NOISY ? "~" : "";
}

const char *mt_noise_mark(uint64_t k)
{
    return mt_rse_mark(mt_noise(k));
}
