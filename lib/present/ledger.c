/*
 * ledger.c - the resident-memory ledger's report (docs/rss.md), text and
 * JSON: the rows that add up to RSS, each with its interval, source and
 * error, then what is not in RSS (retained) and RSS without the recorder.
 */
#include <stdio.h>
#include <string.h>

#include "memtrace/present.h"

static void json_num(FILE *out, const char *key, double v)
{
    if (v < 0 && key[0] != 'u')
        fprintf(out, "\"%s\":null", key);
    else
        fprintf(out, "\"%s\":%.0f", key, v);
}

static int report_json(FILE *out, const mt_ledger *L, const char *when)
{
    const mt_rss_reading *r = L->reading;
    fprintf(out, "{\"time_us\":%lld,\"at\":", (long long)r->time);
    mt_json_string(out, when);
    fputs(",\"allocator\":", out);
    if (r->alloc[0])
        mt_json_string(out, r->alloc);
    else
        fputs("null", out);
    fputc(',', out);
    json_num(out, "rss_bytes", L->rss);
    fputc(',', out);
    json_num(out, "pss_bytes", L->pss);
    fputc(',', out);
    json_num(out, "swap_bytes", L->swap);
    fputc(',', out);
    json_num(out, "retained_bytes", L->retained);
    fprintf(out, ",\"threads\":%lld,\"reading_cost_us\":%lld", (long long)r->threads,
            (long long)r->cost_us);
    fprintf(out, ",\"unexplained_bytes\":%.0f,\"unexplained_share\":%.6f", L->unexplained,
            L->rss > 0 ? L->unexplained / L->rss : 0);
    if (L->readings) {
        fprintf(out, ",\"readings\":%zu,", L->readings);
        json_num(out, "true_peak_rss_bytes", L->true_peak_rss);
    }
    fprintf(out, ",\"live_heap_samples\":%.0f,\"live_map_samples\":%.0f,\"rows\":[",
            L->live_heap_samples, L->live_map_samples);
    for (size_t i = 0; i < L->n; i++) {
        const mt_ledger_row *w = &L->row[i];
        fprintf(out, "%s{\"row\":", i ? "," : "");
        mt_json_string(out, w->key);
        fprintf(out, ",\"bytes\":%.0f,\"lo\":%.0f,\"hi\":%.0f,\"source\":", w->bytes, w->lo, w->hi);
        mt_json_string(out, w->source);
        fputs(",\"error\":", out);
        mt_json_string(out, w->error);
        fputc('}', out);
    }
    fputs("]}", out);
    return 0;
}

int mt_report_ledger(FILE *out, const mt_ledger *L, const char *when, int json)
{
    if (json)
        return report_json(out, L, when);
    const mt_rss_reading *r = L->reading;
    char a[32], b[32], c[32], t[32];
    mt_format_bytes(a, sizeof a, L->rss);
    mt_format_time(t, sizeof t, r->time);
    fprintf(out, "RSS %s at %s (%s)", a, t, when);
    if (L->pss >= 0) {
        mt_format_bytes(a, sizeof a, L->pss);
        fprintf(out, ", PSS %s", a);
    }
    fprintf(out, "; allocator %s; %lld threads\n", r->alloc[0] ? r->alloc : "unknown",
            (long long)r->threads);
    if (L->readings) {
        fprintf(out, "  the largest RSS of %zu reading%s, not the true peak", L->readings,
                L->readings == 1 ? "" : "s");
        if (L->true_peak_rss >= 0) {
            mt_format_bytes(a, sizeof a, L->true_peak_rss);
            fprintf(out, " (high-water mark %s), which may fall between two readings", a);
        }
        fputc('\n', out);
    }
    fprintf(out, "  %-38s %10s %7s  %-25s %s\n", "row", "bytes", "of RSS", "95% interval", "source");
    for (size_t i = 0; i < L->n; i++) {
        const mt_ledger_row *w = &L->row[i];
        mt_format_bytes(a, sizeof a, w->bytes);
        char iv[80] = "exact";
        if (strncmp(w->error, "upper bound", 11) == 0)
            snprintf(iv, sizeof iv, "upper bound");
        if (w->lo != w->hi) {
            mt_format_bytes(b, sizeof b, w->lo);
            mt_format_bytes(c, sizeof c, w->hi);
            snprintf(iv, sizeof iv, "%s - %s", b, c);
        }
        fprintf(out, "  %-38s %10s %6.1f%%  %-25s %s\n", w->name, a,
                L->rss > 0 ? 100.0 * w->bytes / L->rss : 0.0, iv, w->source);
    }
    mt_format_bytes(a, sizeof a, L->rss);
    fprintf(out, "  %-38s %10s  100.0%%\n", "sum (= RSS)", a);
    const mt_ledger_row *own = NULL;
    for (size_t i = 0; i < L->n; i++)
        if (L->row[i].key[0] == 'r' && L->row[i].key[1] == 'e')
            own = &L->row[i];
    if (own) {
        mt_format_bytes(a, sizeof a, L->rss - own->bytes);
        fprintf(out, "RSS without memtrace's own: %s\n", a);
    }
    if (L->retained >= 0) {
        mt_format_bytes(a, sizeof a, L->retained);
        fprintf(out, "not resident: the allocator retains %s of address space\n", a);
    }
    fputs("errors:\n", out);
    for (size_t i = 0; i < L->n; i++)
        if (strcmp(L->row[i].error, "exact resident") != 0)
            fprintf(out, "  %s: %s\n", L->row[i].name, L->row[i].error);
    return ferror(out) ? -1 : 0;
}
