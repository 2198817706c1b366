/*
 * top.c - the 'memtrace top' report: allocation sites by a metric, with
 * their share, sampling error and the callers they are reached through.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/present.h"

static void value(char *buf, size_t cap, mt_metric m, double v)
{
    if (m == MT_METRIC_ALLOC_BYTES || m == MT_METRIC_LIVE_BYTES || m == MT_METRIC_TEMP_BYTES)
        mt_format_bytes(buf, cap, v);
    else
        snprintf(buf, cap, "%.0f", v);
}

/* A metric that counts blocks: its error is its own (mt_cost_rse). */
static int counts(mt_metric m)
{
    return m == MT_METRIC_ALLOC_OBJECTS || m == MT_METRIC_LIVE_OBJECTS ||
           m == MT_METRIC_TEMP_OBJECTS;
}

/* The samples behind a metric's value (for its noise). */
static uint64_t samples_of(const mt_cost *c, mt_metric m)
{
    return mt_cost_samples(c, m);
}

/* When the selection holds memory of more than one kind (malloc and mmap
 * in a C trace), how much of each: sites are not split by kind, the
 * kind: filter does that. */
static void kinds_line(FILE *out, const mt_selection *s, mt_metric metric, const mt_cost *sel)
{
    const mt_model *m = mt_selection_model(s);
    if (mt_model_info(m)->word_size != 8)
        return;
    mt_stats st;
    if (mt_model_folded_by_source(m, st.by_source)) {
        /* A folded model keeps each source's total; an inside: clause,
         * applied to stacks afterwards, may leave out some of it: then no
         * line rather than a wrong one. */
        uint64_t samples = 0;
        for (int k = 0; k < 3; k++)
            samples += st.by_source[k].samples;
        if (samples != sel->samples)
            return;
        st.total = *sel;
    } else {
        mt_query_stats(s, &st);
    }
    if (!st.by_source[MT_SOURCE_MAJOR].allocs)
        return;
    double total = mt_cost_get(&st.total, metric);
    fputs("kinds:", out);
    for (unsigned src = 3; src-- > 0;) {   /* malloc first */
        if (!st.by_source[src].allocs)
            continue;
        double v = mt_cost_get(&st.by_source[src], metric);
        char b[32];
        value(b, sizeof b, metric, v);
        fprintf(out, " %s %s (%.0f%%)%s", mt_source_kind_name(m, src), b,
                total > 0 ? 100 * v / total : 0, src > 1 ? "," : "");
    }
    fputs("; --filter kind:mmap or kind:malloc shows one\n", out);
}

int mt_report_top(FILE *out, const mt_selection *s, const mt_top_options *o)
{
    const mt_model *m = mt_selection_model(s);
    mt_sites *t = mt_query_sites(s, o->metric, o->callers);
    if (!t)
        return -1;
    mt_site_vias *vias = mt_query_site_vias(s, t, o->metric);
    if (!vias) {
        mt_sites_free(t);
        return -1;
    }
    double total = mt_cost_get(&t->total, o->metric);
    size_t n = o->limit && o->limit < t->n ? o->limit : t->n;
    char b1[64], b2[64], name[1024];
    if (o->json) {
        fprintf(out, "{\"metric\":\"%s\",\"live_at_us\":%lld,\"filter\":", mt_metric_name(o->metric),
                (long long)mt_selection_live_at(s));
        mt_json_string(out, o->filter_text ? o->filter_text : "");
        fputs(",\"total\":", out);
        mt_json_cost(out, &t->total);
        if (o->at_peak && mt_model_peak_known(m)) {
            mt_peak pk;
            mt_model_peak(m, &pk);
            fprintf(out, ",\"peak_bytes\":%.0f", pk.bytes);
            mt_json_peak(out, "peak", &pk);
        }
        fprintf(out, ",\"n_sites\":%zu,\"sites\":[", t->n);
        for (size_t i = 0; i < n; i++) {
            const mt_site *st = &t->sites[i];
            double v = mt_cost_get(&st->cost, o->metric);
            fprintf(out, "%s\n{\"rank\":%zu,\"site\":", i ? "," : "", i + 1);
            mt_json_frame(out, m, st->frame);
            mt_json_frame_short(out, m, st->frame);
            fprintf(out, ",\"value\":%.1f,\"share\":%.6f,\"rse\":%.4f,\"cost\":", v,
                    total > 0 ? v / total : 0, mt_cost_rse(&st->cost, o->metric));
            mt_json_cost(out, &st->cost);
            fputs(",\"via\":[", out);
            for (size_t k = 0; k < vias[i].n && k < MT_MAX_VIAS; k++) {
                fputs(k ? ",{\"function\":" : "{\"function\":", out);
                mt_json_frame(out, m, vias[i].frame[k]);
                mt_json_frame_short(out, m, vias[i].frame[k]);
                fprintf(out, ",\"share\":%.6f}", vias[i].share[k]);
            }
            fprintf(out, "],\"n_via\":%zu", vias[i].n);
            fprintf(out, ",\"n_callers\":%zu,\"callers\":[", st->n_callers);
            size_t nc = st->n_callers < o->callers ? st->n_callers : o->callers;
            for (size_t k = 0; k < nc; k++) {
                const mt_site_caller *c = &st->callers[k];
                fputs(k ? ",{\"caller\":" : "{\"caller\":", out);
                if (c->frame == (mt_frame_id)-1)
                    fputs("null", out);
                else
                    mt_json_frame(out, m, c->frame);
                fputs(",\"cost\":", out);
                mt_json_cost(out, &c->cost);
                fputc('}', out);
            }
            fputs("]}", out);
        }
        fputs("]}\n", out);
    } else {
        const mt_trace_info *info = mt_model_info(m);
        static const char *const what[] = {"allocated bytes", "allocated blocks",
                                           "live bytes",      "live blocks",
                                           "samples",         "temporary blocks",
                                           "bytes in temporary blocks"};
        mt_text_put(out, info->executable_name);
        fprintf(out, ": by %s (estimated", what[o->metric]);
        int prof = mt_model_profile(m); /* a pprof profile: no times, maybe no error */
        if ((o->metric == MT_METRIC_LIVE_BYTES || o->metric == MT_METRIC_LIVE_OBJECTS) && prof) {
            fputs(" in use when the profile was written", out);
        } else if (o->metric == MT_METRIC_LIVE_BYTES || o->metric == MT_METRIC_LIVE_OBJECTS) {
            mt_format_time(b1, sizeof b1, mt_selection_live_at(s));
            fprintf(out, " at %s", b1);
        }
        value(b1, sizeof b1, o->metric, total);
        if (counts(o->metric) && total > 0 && prof != MT_PROFILE_NO_ERROR) {
            /* a count's own error, beside it */
            double rse = mt_cost_rse(&t->total, o->metric);
            size_t l = strlen(b1);
            snprintf(b1 + l, sizeof b1 - l, " ±%.*f%%%s", rse < 0.1 ? 1 : 0, 100 * rse,
                     mt_rse_mark(rse));
        }
        if (prof)
            fprintf(out, "), total %s from a pprof profile: %s\n", b1, mt_model_profile_kind(m));
        else
            fprintf(out, "), total %s from %llu samples in %llu sampled blocks\n", b1,
                    (unsigned long long)samples_of(&t->total, o->metric),
                    (unsigned long long)t->total.allocs);
        if (o->at_peak && mt_model_peak_known(m)) {
            /* the peak's estimate is the total at the curve's highest:
             * this line adds its interval (docs/estimates.md) */
            mt_peak pk;
            char pb[160];
            mt_model_peak(m, &pk);
            mt_format_peak(pb, sizeof pb, &pk);
            fprintf(out, "peak live %s (all allocations)\n", pb);
        }
        if (o->filter_text && o->filter_text[0])
        {
            fputs("filter: ", out);
            mt_text_put(out, o->filter_text);
            fputc('\n', out);
        }
        kinds_line(out, s, o->metric, &t->total);
        fprintf(out, "\n%4s %11s %6s %6s %7s  %s\n", "#", "value", "share", "cum", "±err", "site");
        /* Sites are sorted by value: those worth nothing (e.g. nothing of
         * theirs live at the time asked) end the list and are not shown. */
        size_t shown = 0;
        while (shown < t->n && mt_cost_get(&t->sites[shown].cost, o->metric) > 0)
            shown++;
        if (n > shown)
            n = shown;
        double cum = 0;
        for (size_t i = 0; i < n; i++) {
            const mt_site *st = &t->sites[i];
            double v = mt_cost_get(&st->cost, o->metric);
            double rse = mt_cost_rse(&st->cost, o->metric);
            cum += v;
            value(b1, sizeof b1, o->metric, v);
            if (prof == MT_PROFILE_NO_ERROR)
                snprintf(b2, sizeof b2, "-");
            else
                snprintf(b2, sizeof b2, "%.0f%%%s", 100 * rse, mt_rse_mark(rse));
            mt_format_frame_as(name, sizeof name, m, st->frame, o->full_names);
            fprintf(out, "%4zu %11s %5.1f%% %5.1f%% %7s  %s\n", i + 1, b1,
                    total > 0 ? 100 * v / total : 0, total > 0 ? 100 * cum / total : 0, b2, name);
            mt_report_vias(out, m, &vias[i], o->full_names);
            size_t nc = st->n_callers < o->callers ? st->n_callers : o->callers;
            for (size_t c = 0; c < nc; c++) {
                const mt_site_caller *sc = &st->callers[c];
                double cv = mt_cost_get(&sc->cost, o->metric);
                if (cv <= 0)
                    break;   /* callers are sorted by value too */
                value(b1, sizeof b1, o->metric, cv);
                if (sc->frame == (mt_frame_id)-1)
                    snprintf(name, sizeof name, "(no caller)");
                else
                    mt_format_frame_as(name, sizeof name, m, sc->frame, o->full_names);
                fprintf(out, "%4s %11s %5.1f%% %6s %7s    <- %s\n", "", b1,
                        v > 0 ? 100 * cv / v : 0, "", "", name);
            }
            if (st->n_callers > nc && nc > 0)
                fprintf(out, "%4s %11s %6s %6s %7s    <- ... %zu more callers\n", "", "", "", "", "",
                        st->n_callers - nc);
        }
        if (n < shown)
            fprintf(out, "... %zu more sites\n", shown - n);
        if (shown == 0)
            fprintf(out, "%4s (no site has any: nothing to show)\n", "");
        if (prof == MT_PROFILE_NO_ERROR)
            fprintf(out, "\n±err: unknown (-): the profile states no sampling period\n");
        else if (counts(o->metric))
            fprintf(out, "\n±err: relative standard error of the count (a sample of a block of "
                         "n bytes stands for 1/(rate n) blocks: a few samples of small blocks "
                         "make most of it); ~ noisy (>20%%), ? mostly noise (>50%%)\n");
        else
            fprintf(out, "\n±err: relative standard error 1/sqrt(samples); ~ noisy (>20%%), "
                         "? mostly noise (>50%%)\n");
    }
    free(vias);
    mt_sites_free(t);
    return ferror(out) ? -1 : 0;
}
