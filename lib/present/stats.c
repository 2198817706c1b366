/*
 * stats.c - the 'memtrace stats' report: totals, estimates, peak, rates
 * and histograms of sizes and lifetimes per kind (malloc, mmap in C traces;
 * the OCaml sources otherwise), resident memory when the trace has it, as
 * text or JSON. JSON keeps the source names in by_source and the
 * histograms, and adds by_kind.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/present.h"

static const char *const source_names[3] = {"minor", "major", "external"};

static void json_hist(FILE *out, const mt_histogram *h)
{
    fputc('[', out);
    for (size_t b = 0; b < h->n; b++) {
        fprintf(out, "%s\n{\"lo\":%llu,\"hi\":%llu,\"cost\":", b ? "," : "",
                (unsigned long long)h->lo[b], (unsigned long long)h->hi[b]);
        mt_json_cost(out, &h->cost[b]);
        for (int src = 0; src < 3; src++) {
            fprintf(out, ",\"%s\":", source_names[src]);
            mt_json_cost(out, &h->by_source[b * 3 + src]);
        }
        fputc('}', out);
    }
    fputc(']', out);
}

static void text_hist(FILE *out, const mt_model *m, const mt_histogram *h, int sources_used)
{
    char lo[32], hi[32], v[32];
    fprintf(out, "  %-21s %8s %11s %6s", h->kind == MT_HIST_SIZE ? "block size" : "lifetime",
            "samples", "bytes", "share");
    for (int src = 0; src < 3; src++)
        if (sources_used & (1 << src))
            fprintf(out, " %11s", mt_source_kind_name(m, (unsigned)src));
    fputc('\n', out);
    double total = 0;
    for (size_t b = 0; b < h->n; b++)
        total += h->cost[b].alloc_bytes;
    for (size_t b = 0; b < h->n; b++) {
        if (!h->cost[b].allocs)
            continue;
        if (h->kind == MT_HIST_SIZE) {
            mt_format_bytes(lo, sizeof lo, (double)h->lo[b]);
            mt_format_bytes(hi, sizeof hi, (double)h->hi[b]);
        } else {
            mt_format_time(lo, sizeof lo, (mt_timedelta)h->lo[b]);
            mt_format_time(hi, sizeof hi, (mt_timedelta)h->hi[b]);
        }
        char range[80];
        snprintf(range, sizeof range, "%s - %s", lo, hi);
        mt_format_bytes(v, sizeof v, h->cost[b].alloc_bytes);
        fprintf(out, "  %-21s %8llu %11s %5.1f%%", range, (unsigned long long)h->cost[b].samples, v,
                total > 0 ? 100 * h->cost[b].alloc_bytes / total : 0);
        for (int src = 0; src < 3; src++)
            if (sources_used & (1 << src)) {
                mt_format_bytes(v, sizeof v, h->by_source[b * 3 + src].alloc_bytes);
                fprintf(out, " %11s", v);
            }
        fputc('\n', out);
    }
}

static void json_rss(FILE *out, const mt_rss *rss, double peak_heap)
{
    if (!rss) {
        fputs(",\"peak_rss_bytes\":null", out);
        return;
    }
    const mt_rss_point *last = &rss->p[rss->n - 1];
    fprintf(out, ",\"peak_rss_bytes\":%lld,\"peak_rss_time_us\":%lld,\"rss_at_end_bytes\":%lld,"
            "\"rss_samples\":%zu,\"peak_rss_minus_peak_heap_bytes\":%.0f",
            (long long)rss->peak_rss, (long long)rss->peak_time, (long long)last->rss, rss->n,
            (double)rss->peak_rss - peak_heap);
}

/* The ledger at live_at (docs/rss.md), from the selection's live samples
 * by kind: only for an unfiltered selection of a trace whose .rss has
 * ledger readings. 1 with *L made, else 0. */
static int stats_ledger(const mt_model *m, const mt_stats *st, const mt_rss *rss,
                        mt_timedelta live_at, mt_ledger *L)
{
    if (!rss || rss->nl == 0 || st->total.allocs != st->allocs)
        return 0;
    const mt_rss_reading *r =
        mt_rss_reading_at(rss, live_at >= mt_model_end(m) ? MT_TIME_END : live_at);
    if (!r)
        return 0;
    mt_ledger_make(r, st->by_source[MT_SOURCE_EXTERNAL].live_samples,
                   st->by_source[MT_SOURCE_MAJOR].live_samples, mt_model_bytes_per_sample(m),
                   mt_model_info(m)->sample_rate, L);
    return 1;
}

static void text_ledger(FILE *out, const mt_ledger *L)
{
    char a[32], b[32], c[32];
    mt_format_time(a, sizeof a, L->reading->time);
    mt_format_bytes(b, sizeof b, L->rss);
    fprintf(out, "RSS ledger  at %s: RSS %s = the rows below (memtrace rss; docs/rss.md)\n", a, b);
    for (size_t i = 0; i < L->n; i++) {
        const mt_ledger_row *w = &L->row[i];
        mt_format_bytes(a, sizeof a, w->bytes);
        fprintf(out, "  %-36s %10s %6.1f%%", w->name, a, L->rss > 0 ? 100 * w->bytes / L->rss : 0);
        if (w->lo != w->hi) {
            mt_format_bytes(b, sizeof b, w->lo);
            mt_format_bytes(c, sizeof c, w->hi);
            fprintf(out, "  (95%%: %s - %s)", b, c);
        }
        fputc('\n', out);
    }
}

static void text_rss(FILE *out, const mt_model *m, const mt_rss *rss, double peak_heap)
{
    char a[32], b[32], c[32];
    if (!rss && mt_model_info(m)->word_size != 8)
        return;   /* OCaml traces never have it */
    if (!rss) {
        fprintf(out, "resident    not recorded (no FILE.rss beside the trace)\n");
        return;
    }
    mt_format_bytes(a, sizeof a, (double)rss->peak_rss);
    mt_format_time(b, sizeof b, rss->peak_time);
    mt_format_bytes(c, sizeof c, (double)rss->p[rss->n - 1].rss);
    fprintf(out, "peak RSS    %s (largest sample at %s); at end %s\n", a, b, c);
    mt_format_bytes(a, sizeof a, (double)rss->peak_rss - peak_heap);
    fprintf(out, "RSS - heap  %s between peak RSS and peak live (see docs/recorder.md)\n", a);
}

/* A block count's own error: "; blocks ±12%", marked as top marks noisy
 * entries ("±64%?": the samples cannot support the count), "; blocks
 * exact", or "" for no block. */
static void count_err(char *buf, size_t cap, const mt_cost *c, mt_metric metric)
{
    double e = mt_cost_rse(c, metric);
    if (!(mt_cost_get(c, metric) > 0))
        snprintf(buf, cap, "%s", "");
    else if (e == 0)
        snprintf(buf, cap, "; blocks exact");
    else
        snprintf(buf, cap, "; blocks ±%.*f%%%s", e < 0.1 ? 1 : 0, 100 * e, mt_rse_mark(e));
}

int mt_report_stats(FILE *out, const mt_selection *s, int json)
{
    return mt_report_stats_rss(out, s, NULL, json);
}

int mt_report_stats_rss(FILE *out, const mt_selection *s, const mt_rss *rss, int json)
{
    mt_stats st;
    mt_query_stats(s, &st);
    mt_histogram *hs = mt_query_histogram(s, MT_HIST_SIZE);
    mt_histogram *hl = mt_query_histogram(s, MT_HIST_LIFETIME);
    int rc = -1;
    if (hs && hl)
        rc = mt_report_stats_figures(out, mt_selection_model(s), &st, hs, hl,
                                     mt_selection_live_at(s), rss, json);
    mt_histogram_free(hs);
    mt_histogram_free(hl);
    return rc;
}

int mt_report_stats_figures(FILE *out, const mt_model *m, const mt_stats *stp,
                            const mt_histogram *hs, const mt_histogram *hl, mt_timedelta live_at,
                            const mt_rss *rss, int json)
{
    const mt_trace_info *info = mt_model_info(m);
    const mt_stats st = *stp;
    double end_live = mt_model_live_at(m, MT_TIME_END);
    if (json) {
        fputs("{\"executable\":", out);
        mt_json_string(out, info->executable_name);
        fprintf(out,
                ",\"version\":%d,\"start_time_us\":%lld,\"sample_rate\":%.17g,\"word_size\":%u,\"bytes_per_sample\":%.17g,"
                "\"attached_mid_run\":%s,\"duration_us\":%lld,\"events\":%llu,\"allocs\":%llu,\"promotes\":%llu,"
                "\"collects\":%llu,\"live_at_us\":%lld,\"total\":",
                info->version, (long long)info->start_time, info->sample_rate, info->word_size, mt_model_bytes_per_sample(m),
                info->ocaml_runtime_params && !strcmp(info->ocaml_runtime_params, MT_INFO_ATTACHED)
                    ? "true" : "false",
                (long long)st.duration, (unsigned long long)st.events,
                (unsigned long long)st.allocs, (unsigned long long)st.promotes,
                (unsigned long long)st.collects, (long long)live_at);
        mt_json_cost(out, &st.total);
        fputs(",\"by_source\":{", out);
        for (int src = 0; src < 3; src++) {
            fprintf(out, "%s\"%s\":", src ? "," : "", source_names[src]);
            mt_json_cost(out, &st.by_source[src]);
        }
        fputs("},\"by_kind\":{", out);
        int c_trace = info->word_size == 8, first = 1;
        for (int src = c_trace ? 1 : 0; src < 3; src++) {   /* C traces: malloc, mmap */
            fprintf(out, "%s\"%s\":", first ? "" : ",", mt_source_kind_name(m, (unsigned)src));
            mt_json_cost(out, &st.by_source[src]);
            first = 0;
        }
        fputc('}', out);
        json_rss(out, rss, st.peak_bytes);
        mt_ledger L;
        if (rss) {
            fputs(",\"rss_ledger\":", out);
            if (stats_ledger(m, &st, rss, live_at, &L))
                mt_report_ledger(out, &L, "live_at", 1);
            else
                fputs("null", out);
        }
        fprintf(out,
                ",\"promoted_bytes\":%.0f,\"collected_bytes\":%.0f,\"never_collected_bytes\":%.0f,"
                "\"peak_bytes\":%.0f,\"peak_time_us\":%lld,\"peak_filtered_bytes\":%.0f,"
                "\"peak_filtered_time_us\":%lld",
                st.promoted_bytes, st.collected_bytes, st.never_collected_bytes, st.peak_bytes,
                (long long)st.peak_time, st.peak_filtered_bytes, (long long)st.peak_filtered_time);
        mt_json_peak(out, "peak", &st.peak);
        mt_json_peak(out, "peak_filtered", &st.peak_filtered);
        if (st.has_verdicts)
            fprintf(out,
                    ",\"lost_bytes\":%.0f,\"lost_bytes_se\":%.0f,\"lost_sampled_blocks\":%llu,"
                    "\"reachable_bytes\":%.0f,\"reachable_bytes_se\":%.0f,"
                    "\"reachable_sampled_blocks\":%llu",
                    st.lost_bytes, st.lost_bytes_se, (unsigned long long)st.lost_blocks,
                    st.reachable_bytes, st.reachable_bytes_se,
                    (unsigned long long)st.reachable_blocks);
        if (st.has_verdicts && st.lost_bytes_upper > 0)   /* no lost block sampled */
            fprintf(out, ",\"lost_bytes_upper95\":%.0f", st.lost_bytes_upper);
        fprintf(out,
                ",\"live_at_end_bytes\":%.0f,"
                "\"live_at_end_selected_bytes\":%.0f,\"temporary_us\":%d,"
                "\"alloc_rate_bytes_per_s\":%.1f,\"alloc_rate_se_bytes_per_s\":%.1f,\"mean_lifetime_us\":%.1f,\"median_lifetime_us\":%.1f,"
                "\"size_histogram\":",
                end_live, st.never_collected_bytes, MT_TEMPORARY_US, st.alloc_rate,
                st.alloc_rate * mt_noise_at(st.total.samples, info->sample_rate), st.mean_lifetime_us, st.median_lifetime_us);
        json_hist(out, hs);
        fputs(",\"lifetime_histogram\":", out);
        json_hist(out, hl);
        fputs("}\n", out);
    } else {
        char a[32], b[32], c[48];
        fputs("trace       ", out);
        mt_text_put(out, info->executable_name);
        fprintf(out, " (format v%d, pid %llu, host ", info->version, (unsigned long long)info->pid);
        mt_text_put(out, info->host_name);
        fputs(")\n", out);
        mt_format_time(a, sizeof a, st.duration);
        fprintf(out, "duration    %s\n", a);
        if (info->ocaml_runtime_params && !strcmp(info->ocaml_runtime_params, MT_INFO_ATTACHED))
            fputs("attached    mid-run: memory live before the attach is not counted\n", out);
        mt_format_bytes(a, sizeof a, mt_model_bytes_per_sample(m));
        fprintf(out, "sampling    rate %.3g per %u-bit word: one sample stands for %s\n",
                info->sample_rate, info->word_size, a);
        fprintf(out, "events      %llu: %llu allocations, %llu promotions, %llu collections\n",
                (unsigned long long)st.events, (unsigned long long)st.allocs,
                (unsigned long long)st.promotes, (unsigned long long)st.collects);
        mt_format_bytes(a, sizeof a, st.total.alloc_bytes);
        count_err(c, sizeof c, &st.total, MT_METRIC_ALLOC_OBJECTS);
        fprintf(out, "allocated   %s in %.0f blocks (estimated; %llu samples, ±%.1f%%%s)\n", a,
                st.total.alloc_objects, (unsigned long long)st.total.samples,
                100 * mt_noise_at(st.total.samples, info->sample_rate), c);
        for (int src = 0; src < 3; src++) {
            if (!st.by_source[src].allocs)
                continue;
            mt_format_bytes(a, sizeof a, st.by_source[src].alloc_bytes);
            count_err(c, sizeof c, &st.by_source[src], MT_METRIC_ALLOC_OBJECTS);
            fprintf(out, "  %-9s %s in %.0f blocks (%llu samples, ±%.1f%%%s)\n",
                    mt_source_kind_name(m, (unsigned)src), a, st.by_source[src].alloc_objects,
                    (unsigned long long)st.by_source[src].samples,
                    100 * mt_noise_at(st.by_source[src].samples, info->sample_rate), c);
        }
        mt_format_bytes(a, sizeof a, st.alloc_rate);
        /* a rate is bytes over a known time: the bytes' error */
        fprintf(out, "rate        %s/s allocated (±%.1f%%)\n", a,
                100 * mt_noise_at(st.total.samples, info->sample_rate));
        if (st.promotes) {
            mt_format_bytes(a, sizeof a, st.promoted_bytes);
            fprintf(out, "promoted    %s\n", a);
        }
        mt_format_bytes(a, sizeof a, st.collected_bytes);
        mt_format_bytes(b, sizeof b, st.never_collected_bytes);
        fprintf(out, "collected   %s; never collected %s\n", a, b);
        char pk[128];
        mt_format_peak(pk, sizeof pk, &st.peak);
        mt_format_time(b, sizeof b, st.peak_time);
        fprintf(out, "peak live   %s at %s (all allocations)\n", pk, b);
        if (st.total.allocs != st.allocs) {
            mt_format_peak(pk, sizeof pk, &st.peak_filtered);
            mt_format_time(b, sizeof b, st.peak_filtered_time);
            fprintf(out, "peak live   %s at %s (selected allocations)\n", pk, b);
        }
        mt_format_bytes(a, sizeof a, end_live);
        fprintf(out, "live at end %s (all allocations)\n", a);
        if (st.total.allocs != st.allocs) {
            mt_format_bytes(a, sizeof a, st.never_collected_bytes);
            fprintf(out, "live at end %s (selected allocations)\n", a);
        }
        if (st.has_verdicts) {
            /* docs/leaks.md: the leak scan at exit */
            for (int k = 0; k < 2; k++) {
                double v = k ? st.reachable_bytes : st.lost_bytes;
                double se = k ? st.reachable_bytes_se : st.lost_bytes_se;
                mt_format_bytes(a, sizeof a, v);
                mt_format_bytes(b, sizeof b, se);
                if (!k && st.lost_bytes_upper > 0) {   /* a zero from no sample: its bound */
                    mt_format_bytes(b, sizeof b, st.lost_bytes_upper);
                    fprintf(out, "lost        0 B, at most %s at exit (95%%: no lost block "
                                 "sampled)\n", b);
                    continue;
                }
                fprintf(out, "%-11s %s ±%s at exit (%llu sampled blocks%s)\n",
                        k ? "reachable" : "lost", a, b,
                        (unsigned long long)(k ? st.reachable_blocks : st.lost_blocks),
                        k ? "" : " nothing reachable points to");
            }
        }
        text_rss(out, m, rss, st.peak_bytes);
        mt_ledger L;
        if (stats_ledger(m, &st, rss, live_at, &L))
            text_ledger(out, &L);
        mt_format_time(c, sizeof c, (mt_timedelta)st.median_lifetime_us);
        if (st.collected_bytes > 0) {
            mt_format_time(a, sizeof a, (mt_timedelta)st.mean_lifetime_us);
            fprintf(out, "lifetime    mean %s (collected blocks), median %s (all, never-collected "
                         "counted to the end)\n", a, c);
        } else if (st.total.allocs) {
            fprintf(out, "lifetime    no mean: no block was freed; median %s (never-collected "
                         "counted to the end)\n", c);
        } else
            fprintf(out, "lifetime    none: no allocation\n");
        if (st.total.allocs) {
            mt_format_bytes(a, sizeof a, st.total.temp_bytes);
            mt_format_time(b, sizeof b, MT_TEMPORARY_US);
            count_err(c, sizeof c, &st.total, MT_METRIC_TEMP_OBJECTS);
            fprintf(out, "temporary   %.0f blocks (%.1f%% of blocks), %s, freed within %s (%llu samples%s)\n",
                    st.total.temp_objects,
                    st.total.alloc_objects > 0 ? 100 * st.total.temp_objects / st.total.alloc_objects : 0,
                    a, b, (unsigned long long)st.total.temp_samples, c);
        }
        int used = 0;
        for (int src = 0; src < 3; src++)
            if (st.by_source[src].allocs)
                used |= 1 << src;
        fprintf(out, "\nblock sizes (estimated bytes allocated, by kind):\n");
        text_hist(out, m, hs, used);
        fprintf(out, "\nlifetimes (estimated bytes allocated, by kind):\n");
        text_hist(out, m, hl, used);
    }
    return ferror(out) ? -1 : 0;
}
