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

void mt_json_cost(FILE *out, const mt_cost *c)
{
    fprintf(out,
            "{\"alloc_bytes\":%.0f,\"alloc_objects\":%.1f,\"live_bytes\":%.0f,"
            "\"live_objects\":%.1f,\"samples\":%llu,\"live_samples\":%llu,\"allocs\":%llu}",
            c->alloc_bytes, c->alloc_objects, c->live_bytes, c->live_objects,
            (unsigned long long)c->samples, (unsigned long long)c->live_samples,
            (unsigned long long)c->allocs);
}

void mt_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\t': fputs("\\t", out); break;
        case '\r': fputs("\\r", out); break;
        default:
            if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

void mt_format_frame(char *buf, size_t cap, const mt_model *m, mt_frame_id f)
{
    const mt_frame *fr = &mt_model_frames(m)[f];
    const mt_func *fn = &mt_model_funcs(m)[fr->func];
    if (fn->filename[0] && fr->line == 0)   /* no line known: none invented */
        snprintf(buf, cap, "%s (%s)", fn->name, fn->filename);
    else if (fn->filename[0])
        snprintf(buf, cap, "%s (%s:%u)", fn->name, fn->filename, fr->line);
    else
        snprintf(buf, cap, "%s", fn->name);
}

const char *mt_noise_mark(uint64_t k)
{
    double e = mt_noise(k);
    return e > MT_NOISE ? "?" : e > MT_NOISY ? "~" : "";
}
