/*
 * names.c - function names as reports print them: shortened C++ names
 * (mt_name_simplify) unless the full names are asked for, and names cut
 * to a width in the middle, never in the function's own name.
 */
#include <stdio.h>
#include <string.h>

#include "memtrace/present.h"

const char *mt_display_name(char *buf, size_t cap, const char *name, int full)
{
    if (full || !cap)
        return name;
    mt_name_simplify(name, buf, cap);
    return buf;
}

void mt_format_frame_as(char *buf, size_t cap, const mt_model *m, mt_frame_id f, int full)
{
    const mt_frame *fr = &mt_model_frames(m)[f];
    const mt_func *fn = &mt_model_funcs(m)[fr->func];
    char nb[1024];
    const char *name = mt_display_name(nb, sizeof nb, fn->name, full);
    if (!cap)
        return;
    size_t n = mt_text_escape(buf, cap, name);
    if (fn->filename[0] && n + 4 < cap) {
        memcpy(buf + n, " (", 3);
        n += 2;
        n += mt_text_escape(buf + n, cap - n, fn->filename);
        if (fr->line)
            snprintf(buf + n, cap - n, ":%u)", fr->line);
        else /* no line known (a module+0xoffset frame): none invented */
            snprintf(buf + n, cap - n, ")");
    }
}

void mt_json_frame(FILE *out, const mt_model *m, mt_frame_id f)
{
    const mt_frame *fr = &mt_model_frames(m)[f];
    const mt_func *fn = &mt_model_funcs(m)[fr->func];
    fputs("{\"function\":", out);
    mt_json_string(out, fn->name);
    fputs(",\"file\":", out);
    mt_json_string(out, fn->filename);
    fprintf(out, ",\"line\":%u}", fr->line);
}

void mt_json_frame_short(FILE *out, const mt_model *m, mt_frame_id f)
{
    char shortname[1024];
    const mt_func *fn = &mt_model_funcs(m)[mt_model_frames(m)[f].func];
    fputs(",\"short\":", out);
    mt_json_string(out, mt_display_name(shortname, sizeof shortname, fn->name, 0));
}

void mt_report_vias(FILE *out, const mt_model *m, const mt_site_vias *v, int full)
{
    if (!v->n)
        return;
    fprintf(out, "%4s %11s %6s %6s %7s    via ", "", "", "", "", "");
    /* overloads may share a short name: one entry per name shown */
    char nb[MT_MAX_VIAS][512];
    double share[MT_MAX_VIAS];
    size_t n = 0;
    for (size_t k = 0; k < v->n && k < MT_MAX_VIAS; k++) {
        const mt_func *fn = &mt_model_funcs(m)[mt_model_frames(m)[v->frame[k]].func];
        char tmp[512];
        const char *name = mt_display_name(tmp, sizeof tmp, fn->name, full);
        size_t j = 0;
        char esc[512];
        mt_text_escape(esc, sizeof esc, name);
        while (j < n && strcmp(nb[j], esc))
            j++;
        if (j == n) {
            memcpy(nb[n], esc, sizeof esc);
            share[n++] = 0;
        }
        share[j] += v->share[k];
    }
    for (size_t a = 1; a < n; a++) /* biggest first again after merging */
        for (size_t b = a; b > 0 && share[b] > share[b - 1]; b--) {
            char t[512];
            double x = share[b];
            memcpy(t, nb[b], sizeof t);
            memcpy(nb[b], nb[b - 1], sizeof t);
            memcpy(nb[b - 1], t, sizeof t);
            share[b] = share[b - 1];
            share[b - 1] = x;
        }
    for (size_t k = 0; k < n; k++) {
        if (100 * share[k] < 0.5)
            fprintf(out, "%s%s <1%%", k ? ", " : "", nb[k]);
        else
            fprintf(out, "%s%s %.0f%%", k ? ", " : "", nb[k], 100 * share[k]);
    }
    if (v->n > MT_MAX_VIAS)
        fprintf(out, ", ... %zu more", v->n - MT_MAX_VIAS);
    fputc('\n', out);
}
