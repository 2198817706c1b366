/*
 * info_profile.c - 'memtrace info' and 'memtrace stats' on a pprof
 * profile: what kind it is, what it measures, its program and time, and
 * its totals with their error (or that the error cannot be derived); the
 * rest of stats (times, the peak, rates, histograms) needs a trace.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "commands.h"
#include "report.h"
#include "trace_cli.h"
#include "memtrace/analyze.h"
#include "memtrace/present.h"

static void total_line(const char *label, double bytes, double objects, double bytes_rse,
                       double objects_var, int error_known)
{
    char b[32];
    mt_format_bytes(b, sizeof b, bytes);
    printf("%-18s %.0f bytes (%s) in %.0f blocks", label, bytes, b, objects);
    if (error_known && bytes > 0)
        printf(" (bytes ±%.1f%%, blocks ±%.1f%%)", 100 * bytes_rse,
               objects > 0 ? 100 * sqrt(objects_var > 0 ? objects_var : 0) / objects : 0.0);
    putchar('\n');
}

static int count_stack(void *ctx, mt_node_id node, const mt_cost *c)
{
    (void)node;
    (void)c;
    ++*(size_t *)ctx;
    return 0;
}

/* The profile's model and its selection under f (NULL: all); 1 after
 * saying why on stderr. */
static int load(const char *cmd, const char *path, const mt_filter *f, mt_model **m,
                mt_selection **s)
{
    /* a profile is only ever folded: its per-stack costs under f */
    mt_read_request rq = {.paths = &path, .n = 1, .fold = 1, .stream = 1, .filter = f,
                          .live_at = MT_TIME_END, .on_warning = trace_cli_warning,
                          .warning_ctx = (void *)cmd};
    char *err = NULL;
    *s = NULL;
    *m = mt_read(&rq, &err);
    if (*m)
        *s = mt_select_sites(*m, f, MT_TIME_END, NULL, &err);
    if (!*s) {
        fprintf(stderr, "memtrace %s: %s\n", cmd, err ? err : "out of memory");
        free(err);
        mt_model_free(*m);
        return 1;
    }
    return 0;
}

int info_profile(const char *path)
{
    mt_model *m;
    mt_selection *s;
    if (load("info", path, NULL, &m, &s))
        return 1;
    const mt_trace_info *info = mt_model_info(m);
    struct stat st;
    printf("%-18s %s\n", "file:", path);
    if (stat(path, &st) == 0)
        printf("%-18s %llu bytes\n", "size:", (unsigned long long)st.st_size);
    printf("%-18s %s\n", "format:", "pprof profile (profile.proto): per-stack totals, no times");
    printf("%-18s %s\n", "kind:", mt_model_profile_kind(m));
    int known = mt_model_profile(m) == MT_PROFILE_SAMPLED;
    if (!known)
        printf("%-18s %s\n", "error:", "cannot be derived (the profile states no sampling period)");
    unsigned has = mt_model_profile_measures(m);
    printf("%-18s %s\n", "measures:",
           has == (MT_PROFILE_HAS_ALLOC | MT_PROFILE_HAS_LIVE)
               ? "allocated (alloc, count) and in use (live, live_count)"
               : has & MT_PROFILE_HAS_LIVE ? "in use only (live, live_count)"
                                           : "allocated only (alloc, count)");
    printf("%-18s ", "executable:");
    mt_text_put(stdout, info->executable_name);
    putchar('\n');
    if (info->start_time > 0)
        printf("%-18s %lld us since the epoch\n", "written:", (long long)info->start_time);
    uint64_t n = 0;
    mt_model_event_counts(m, &n, NULL, NULL);
    printf("%-18s %llu\n", "samples:", (unsigned long long)n);
    size_t stacks = 0;
    mt_selection_each_stack(s, count_stack, &stacks);
    printf("%-18s %zu\n", "stacks:", stacks);
    mt_cost t = mt_selection_total(s);
    if (has & MT_PROFILE_HAS_ALLOC)
        total_line("allocated:", t.alloc_bytes, t.alloc_objects,
                   mt_cost_rse(&t, MT_METRIC_ALLOC_BYTES), t.alloc_objects_var, known);
    if (has & MT_PROFILE_HAS_LIVE)
        total_line("in use:", t.live_bytes, t.live_objects,
                   mt_cost_rse(&t, MT_METRIC_LIVE_BYTES), t.live_objects_var, known);
    mt_selection_free(s);
    mt_model_free(m);
    return fflush(stdout) == 0 ? 0 : 1;
}

int stats_profile(const char *path, const char *filter, mt_timedelta at, int json)
{
    if (at != MT_TIME_END) {
        fprintf(stderr, "memtrace stats: %s is a pprof profile: it holds no times: --at needs "
                        "a trace\n", path);
        return 1;
    }
    mt_filter *f = filter ? report_filter("stats", filter) : NULL;
    if (filter && !f)
        return 2;
    mt_model *m;
    mt_selection *s;
    if (load("stats", path, f, &m, &s)) {
        mt_filter_free(f);
        return 1;
    }
    const mt_trace_info *info = mt_model_info(m);
    unsigned has = mt_model_profile_measures(m);
    int known = mt_model_profile(m) == MT_PROFILE_SAMPLED;
    mt_cost t = mt_selection_total(s);
    if (json) {
        fputs("{\"profile\":", stdout);
        mt_json_string(stdout, mt_model_profile_kind(m));
        fputs(",\"executable\":", stdout);
        mt_json_string(stdout, info->executable_name);
        fputs(",\"filter\":", stdout);
        mt_json_string(stdout, filter ? filter : "");
        printf(",\"error_known\":%s,\"alloc\":%s,\"live\":%s,\"total\":", known ? "true" : "false",
               has & MT_PROFILE_HAS_ALLOC ? "true" : "false", has & MT_PROFILE_HAS_LIVE ? "true" : "false");
        mt_json_cost(stdout, &t);
        fputs("}\n", stdout);
    } else {
        printf("%-11s ", "profile");
        mt_text_put(stdout, info->executable_name);
        printf(" (pprof: %s)\n", mt_model_profile_kind(m));
        if (filter && *filter) {
            printf("%-11s ", "filter");
            mt_text_put(stdout, filter);
            putchar('\n');
        }
        char b[32];
        const char *alloc_err = known ? "" : ", error unknown";
        if (has & MT_PROFILE_HAS_ALLOC) {
            mt_format_bytes(b, sizeof b, t.alloc_bytes);
            printf("%-11s %s in %.0f blocks (estimated%s", "allocated", b, t.alloc_objects, alloc_err);
            if (known && t.alloc_bytes > 0)
                printf("; ±%.1f%%; blocks ±%.1f%%", 100 * mt_cost_rse(&t, MT_METRIC_ALLOC_BYTES),
                       t.alloc_objects > 0 ? 100 * sqrt(t.alloc_objects_var) / t.alloc_objects : 0.0);
            puts(")");
        }
        if (has & MT_PROFILE_HAS_LIVE) {
            mt_format_bytes(b, sizeof b, t.live_bytes);
            printf("%-11s %s in %.0f blocks (in use when the profile was written%s", "live at end",
                   b, t.live_objects, alloc_err);
            if (known && t.live_bytes > 0)
                printf("; ±%.1f%%; blocks ±%.1f%%", 100 * mt_cost_rse(&t, MT_METRIC_LIVE_BYTES),
                       t.live_objects > 0 ? 100 * sqrt(t.live_objects_var) / t.live_objects : 0.0);
            puts(")");
        }
        puts("\na pprof profile holds per-stack totals: the duration, rates, the peak, lifetimes and "
             "size histograms need a trace");
    }
    mt_selection_free(s);
    mt_model_free(m);
    mt_filter_free(f);
    return fflush(stdout) == 0 ? 0 : 1;
}
