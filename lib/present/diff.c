/*
 * diff.c - the 'memtrace diff' report: per entry (site, function or call
 * path) the two estimates, the difference with its standard error, z and
 * the Holm-adjusted p-value, as a text table or JSON.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/compare.h"
#include "memtrace/present.h"

static int is_bytes(mt_metric m)
{
    return m == MT_METRIC_ALLOC_BYTES || m == MT_METRIC_LIVE_BYTES;
}

static void value(char *buf, size_t cap, mt_metric m, double v, int sign, const char *unit)
{
    char b[48];
    if (is_bytes(m))
        mt_format_bytes(b, sizeof b, v);
    else
        snprintf(b, sizeof b, fabs(v) >= 100 || v == 0 ? "%.0f" : "%.3g", v);
    snprintf(buf, cap, "%s%s%s", sign && v > 0 ? "+" : "", b, unit);
}

static void pval(char *buf, size_t cap, double p)
{
    if (p < 1e-10)
        snprintf(buf, cap, "< 1e-10");
    else if (p < 0.001)
        snprintf(buf, cap, "%.1e", p);
    else
        snprintf(buf, cap, "%.3f", p);
}

static const char *key_word(mt_diff_key k, int plural)
{
    switch (k) {
    case MT_DIFF_SITE: return plural ? "sites" : "site";
    case MT_DIFF_FUNCTION: return plural ? "functions" : "function";
    case MT_DIFF_PATH: return plural ? "call paths" : "call path";
    }
    return "?";
}

static void json_num(FILE *out, const char *name, double v)
{
    if (isfinite(v))
        fprintf(out, ",\"%s\":%.17g", name, v);
    else
        fprintf(out, ",\"%s\":null", name);
}

/* The entry's name, malloc'd (NULL when out of memory). */
static char *name_of(const mt_diff *d, const mt_diff_entry *e)
{
    size_t len = mt_diff_entry_name(d, e, NULL, 0);
    char *s = malloc(len + 1);
    if (s)
        mt_diff_entry_name(d, e, s, len + 1);
    return s;
}

static void json_entry(FILE *out, const mt_diff *d, const mt_diff_entry *e)
{
    char *nm = name_of(d, e);
    fputs("{\"name\":", out);
    mt_json_string(out, nm ? nm : "?");
    free(nm);
    fputs(",\"function\":", out);
    mt_json_string(out, e->function ? e->function : "");
    fputs(",\"file\":", out);
    mt_json_string(out, e->file ? e->file : "");
    fprintf(out, ",\"line\":%u", e->line);
    json_num(out, "base", e->base.value);
    json_num(out, "base_se", mt_estimate_se(&e->base));
    fprintf(out, ",\"base_samples\":%llu", (unsigned long long)e->base.samples);
    json_num(out, "new", e->new_.value);
    json_num(out, "new_se", mt_estimate_se(&e->new_));
    fprintf(out, ",\"new_samples\":%llu", (unsigned long long)e->new_.samples);
    json_num(out, "delta", e->delta);
    json_num(out, "se", e->se);
    json_num(out, "z", e->z);
    json_num(out, "p", e->p);
    json_num(out, "p_adj", e->p_adj);
    fprintf(out, ",\"tested\":%s,\"significant\":%s}", e->tested ? "true" : "false",
            e->significant ? "true" : "false");
}

/* The estimate of a side's peak (of all its allocations) when live is
 * measured there: the total at the curve's highest reads high where
 * memory stays near it (docs/estimates.md). */
static void json_peak(FILE *out, const mt_peak *p)
{
    if (!p)
        return;
    fprintf(out, ",\"peak_bytes\":%.0f", p->bytes);
    mt_json_peak(out, "peak", p);
}

static void text_peak(FILE *out, const mt_peak *p)
{
    char b[160];
    if (!p || !(p->sd > 0))
        return;
    mt_format_peak(b, sizeof b, p);
    fprintf(out, "        peak live %s (all allocations, docs/estimates.md)\n", b);
}

int mt_report_diff(FILE *out, const mt_diff *d, const mt_diff_report_options *o)
{
    return mt_report_diff_peaks(out, d, o, NULL, NULL);
}

int mt_report_diff_peaks(FILE *out, const mt_diff *d, const mt_diff_report_options *o,
                         const mt_peak *base_peak, const mt_peak *new_peak)
{
    const char *unit = o->unit ? o->unit : "";
    const char *bn = o->base_name ? o->base_name : "base";
    const char *nn = o->new_name ? o->new_name : "new";
    mt_metric metric = d->opts.metric;
    if (o->json) {
        fprintf(out, "{\"metric\":\"%s\",\"key\":\"%s\",\"alpha\":%g,\"per_second\":%s,",
                mt_metric_name(metric),
                d->opts.key == MT_DIFF_SITE ? "site" : d->opts.key == MT_DIFF_FUNCTION ? "function" : "path",
                d->opts.alpha, unit[0] ? "true" : "false");
        fputs("\"base\":{\"name\":", out);
        mt_json_string(out, bn);
        fprintf(out, ",\"live_at_us\":%lld", (long long)d->base_at);
        json_peak(out, base_peak);
        fputs("},\"new\":{\"name\":", out);
        mt_json_string(out, nn);
        fprintf(out, ",\"live_at_us\":%lld", (long long)d->new_at);
        json_peak(out, new_peak);
        fprintf(out, "},\"same_trace\":%s,", d->same_trace ? "true" : "false");
        fprintf(out, "\"n_entries\":%zu,\"n_tested\":%zu,\"n_significant\":%zu,\"total\":", d->n,
                d->n_tested, d->n_significant);
        json_entry(out, d, &d->total);
        fputs(",\"entries\":[", out);
        size_t nj = o->json_limit && o->json_limit < d->n ? o->json_limit : d->n;
        for (size_t i = 0; i < nj; i++) {
            fputs(i ? ",\n" : "\n", out);
            json_entry(out, d, &d->entries[i]);
        }
        fputs("]}\n", out);
        return ferror(out) ? -1 : 0;
    }

    static const char *const what[] = {"allocated bytes", "allocated blocks", "live bytes",
                                       "live blocks", "samples"};
    char b1[64], b2[64], b3[64], b4[64], b5[64];
    fprintf(out, "memtrace diff: %s%s per %s\n", what[metric], unit[0] ? " per second" : "",
            key_word(d->opts.key, 0));
    fputs("  base: ", out);
    mt_text_put(out, bn);
    if (metric == MT_METRIC_LIVE_BYTES || metric == MT_METRIC_LIVE_OBJECTS) {
        mt_format_time(b1, sizeof b1, d->base_at);
        fprintf(out, " (live at %s)", b1);
    }
    value(b1, sizeof b1, metric, d->total.base.value, 0, unit);
    fprintf(out, ": %s from %llu samples\n", b1, (unsigned long long)d->total.base.samples);
    text_peak(out, base_peak);
    fputs("  new:  ", out);
    mt_text_put(out, nn);
    if (metric == MT_METRIC_LIVE_BYTES || metric == MT_METRIC_LIVE_OBJECTS) {
        mt_format_time(b1, sizeof b1, d->new_at);
        fprintf(out, " (live at %s)", b1);
    }
    value(b1, sizeof b1, metric, d->total.new_.value, 0, unit);
    fprintf(out, ": %s from %llu samples\n", b1, (unsigned long long)d->total.new_.samples);
    text_peak(out, new_peak);
    const mt_diff_entry *t = &d->total;
    value(b1, sizeof b1, metric, t->delta, 1, unit);
    value(b2, sizeof b2, metric, t->se, 0, unit);
    pval(b3, sizeof b3, t->p);
    fprintf(out, "  total: %s ± %s", b1, b2);
    if (t->base.value > 0)
        fprintf(out, " (%+.1f%%)", 100 * t->delta / t->base.value);
    fprintf(out, ", z = %+.1f, p %s%s\n\n", t->z, b3[0] == '<' ? "" : "= ", b3);

    size_t n = o->limit && o->limit < d->n ? o->limit : d->n;
    if (!o->all) {
        /* by default: the significant entries, or when there are none the
         * few closest to it, so that the reader sees what was near */
        size_t sig = 0;
        while (sig < d->n && d->entries[sig].significant)
            sig++;
        size_t want = sig ? sig : (d->n < 5 ? d->n : 5);
        if (n > want)
            n = want;
    }
    if (n) {
        fprintf(out, "%4s %11s %11s %12s %10s %6s %8s  %s\n", "#", "base", "new", "Δ", "±", "z",
                "p(Holm)", key_word(d->opts.key, 0));
        for (size_t i = 0; i < n; i++) {
            const mt_diff_entry *e = &d->entries[i];
            value(b1, sizeof b1, metric, e->base.value, 0, "");
            value(b2, sizeof b2, metric, e->new_.value, 0, "");
            value(b3, sizeof b3, metric, e->delta, 1, "");
            value(b4, sizeof b4, metric, e->se, 0, "");
            if (e->tested)
                pval(b5, sizeof b5, e->p_adj);
            else
                snprintf(b5, sizeof b5, "-");
            char *nm = name_of(d, e);
            fprintf(out, "%4zu %11s %11s %12s %10s %+6.1f %8s %s ", i + 1, b1, b2, b3, b4, e->z,
                    b5, e->significant ? "*" : " ");
            mt_text_put(out, nm ? nm : "?");
            fputc('\n', out);
            free(nm);
        }
        if (n < d->n)
            fprintf(out, "... %zu more %s (--all, --limit 0)\n", d->n - n, key_word(d->opts.key, 1));
        fputc('\n', out);
    }
    if (d->n_significant)
        fprintf(out, "%zu of %zu %s differ significantly (*)", d->n_significant, d->n,
                key_word(d->opts.key, 1));
    else
        fprintf(out, "no significant difference in %zu %s", d->n, key_word(d->opts.key, 1));
    fprintf(out, ": Holm-Bonferroni at %g%% over the %zu with enough samples to differ\n",
            100 * d->opts.alpha, d->n_tested);
    fprintf(out, "±: standard error of Δ; p(Holm) '-': too few samples to tell\n");
    return ferror(out) ? -1 : 0;
}
