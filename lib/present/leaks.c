/*
 * leaks.c - the leak-suspect report of `memtrace leaks` (text and JSON):
 * the sites whose live memory keeps growing (mt_query_leaks), each with
 * its growth rate and error, the bytes it holds at the end, the share of
 * its bytes that outlive the window, and the corrected p-value; and the
 * smallest leak the trace could have shown when nothing is found.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "memtrace/leaks.h"
#include "memtrace/present.h"

static void rate(char *buf, size_t cap, double bytes_per_s, int sign)
{
    char b[40];
    mt_format_bytes(b, sizeof b, fabs(bytes_per_s));
    snprintf(buf, cap, "%s%s/s", sign ? bytes_per_s < 0 ? "-" : "+" : "", b);
}

static void pvalue(char *buf, size_t cap, double p)
{
    if (p < 1e-9)
        snprintf(buf, cap, "<1e-9");
    else if (p < 0.001)
        snprintf(buf, cap, "%.0e", p);
    else
        snprintf(buf, cap, "%.3f", p);
}

static void json_number(FILE *out, const char *key, double v)
{
    if (isfinite(v))
        fprintf(out, ",\"%s\":%.6g", key, v);
    else
        fprintf(out, ",\"%s\":null", key);
}

static int report_json(FILE *out, const mt_model *m, const mt_leak_report *r,
                       const mt_leaks_report_options *o, size_t n)
{
    fprintf(out, "{\"from_us\":%lld,\"to_us\":%lld,\"alpha\":%g,\"filter\":", (long long)r->from,
            (long long)r->to, r->alpha);
    mt_json_string(out, o->filter_text ? o->filter_text : "");
    fprintf(out, ",\"n_sites\":%zu,\"n_tested\":%zu,\"n_suspects\":%zu", r->n_sites, r->n_tested,
            r->n_suspects);
    json_number(out, "min_growth_bytes_per_s", r->min_growth);
    fputs(",\"sites\":[", out);
    for (size_t i = 0; i < n; i++) {
        const mt_leak_site *e = &r->sites[i];
        fprintf(out, "%s\n{\"rank\":%zu,\"site\":", i ? "," : "", i + 1);
        if (e->frame == MT_NO_FRAME) {
            fputs("null", out);
        } else {
            mt_json_frame(out, m, e->frame);
            mt_json_frame_short(out, m, e->frame);
        }
        fprintf(out, ",\"suspect\":%s,\"tested\":%s", e->suspect ? "true" : "false",
                e->tested ? "true" : "false");
        json_number(out, "growth_bytes_per_s", e->growth);
        json_number(out, "growth_se", e->growth_se);
        json_number(out, "z", e->z);
        json_number(out, "p", e->p);
        json_number(out, "p_adj", e->p_adj);
        json_number(out, "live_end_bytes", e->live_end);
        json_number(out, "kept", e->kept);
        json_number(out, "lost_bytes", e->lost);
        fprintf(out, ",\"units\":%llu,\"samples\":%llu}", (unsigned long long)e->units,
                (unsigned long long)e->samples);
    }
    fputs("]}\n", out);
    return ferror(out) ? -1 : 0;
}

int mt_report_leaks(FILE *out, const mt_selection *s, const mt_leak_report *r,
                    const mt_leaks_report_options *o)
{
    const mt_model *m = mt_selection_model(s);
    size_t n = o->all ? r->n : r->n_suspects;
    if (o->limit && n > o->limit)
        n = o->limit;
    if (o->json)
        return report_json(out, m, r, o, n);
    char b1[64], b2[64], b3[64], name[2048];
    _Static_assert(sizeof b1 >= 40 + 4, "room for a rate");
    mt_format_time(b1, sizeof b1, r->from);
    mt_format_time(b2, sizeof b2, r->to);
    mt_text_put(out, mt_model_info(m)->executable_name);
    fprintf(out, ": leak suspects, the sites whose live memory grows from %s to %s%s\n", b1, b2,
            o->from_given ? "" : " (the later half of the trace)");
    if (o->filter_text && o->filter_text[0]) {
        fputs("filter: ", out);
        mt_text_put(out, o->filter_text);
        fputc('\n', out);
    }
    fprintf(out, "%zu suspect%s among %zu sites (%zu with enough samples to be tested; Holm, alpha %g)\n",
            r->n_suspects, r->n_suspects == 1 ? "" : "s", r->n_sites, r->n_tested, r->alpha);
    int verdicts = r->n && !isnan(r->sites[0].lost);
    if (n) {
        fprintf(out, "\n%4s %12s %11s %11s %5s%s %9s %-10s  %s\n", "#", "growth", "±err",
                "live at end", "kept", verdicts ? "  lost at exit" : "", "p (Holm)", "verdict",
                "site");
        for (size_t i = 0; i < n; i++) {
            const mt_leak_site *e = &r->sites[i];
            char kept[16], p[32];
            rate(b1, sizeof b1, e->growth, 1);
            rate(b2, sizeof b2, e->growth_se, 0);
            mt_format_bytes(b3, sizeof b3, e->live_end);
            if (isnan(e->kept))
                snprintf(kept, sizeof kept, "-");
            else
                snprintf(kept, sizeof kept, "%.0f%%", 100 * e->kept);
            if (e->tested)
                pvalue(p, sizeof p, e->p_adj);
            else
                snprintf(p, sizeof p, "untested");
            if (e->frame == MT_NO_FRAME)
                snprintf(name, sizeof name, "(no stack)");
            else
                mt_format_frame_as(name, sizeof name, m, e->frame, o->full_names);
            const char *verdict = e->suspect ? "suspect"
                                : e->tested && e->growth > 0 && e->p_adj < r->alpha ? "given back"
                                                                                     : "-";
            char lost[48] = "";
            if (verdicts) {
                char lb[40];
                mt_format_bytes(lb, sizeof lb, e->lost);
                snprintf(lost, sizeof lost, " %14s", lb);
            }
            fprintf(out, "%4zu %12s %11s %11s %5s%s %9s %-10s  %s\n", i + 1, b1, b2, b3, kept, lost,
                    p, verdict, name);
        }
        if ((o->all ? r->n : r->n_suspects) > n)
            fprintf(out, "... %zu more\n", (o->all ? r->n : r->n_suspects) - n);
    }
    if (!r->n_suspects) {
        fprintf(out, "\nNo site's live memory grows beyond the noise and stays held to the end.\n");
        if (r->min_growth > 0) {
            rate(b1, sizeof b1, r->min_growth, 0);
            fprintf(out, "At this sampling rate a leak would have to grow by about %s to be\n"
                         "found in this window 80%% of the time (memtrace leaks --plan).\n",
                    b1);
        }
    }
    if (n)
        fputs("\ngrowth: slope of the site's live bytes over the window, ±err its standard error;\n"
              "kept: share of its bytes whose blocks outlive the window's length (blocks still\n"
              "live at the end count as censored, not leaked); p: corrected for the sites tested;\n"
              "given back: grew, but held less than half its highest by the end.\n",
              out);
    if (n && verdicts)
        fputs("lost at exit: bytes the leak scan found unreachable (memtrace run --leaks).\n", out);
    return ferror(out) ? -1 : 0;
}
