/*
 * info_profile.c - 'memtrace info' on a pprof profile: what kind it is,
 * what it measures, its program and time, and its totals with their error
 * (or that the error cannot be derived), in info's "name: value" lines.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "commands.h"
#include "memtrace/analyze.h"
#include "memtrace/present.h"

static void total_line(const char *label, double bytes, double objects, uint64_t samples,
                       double objects_var, int error_known)
{
    char b[32];
    mt_format_bytes(b, sizeof b, bytes);
    printf("%-18s %.0f bytes (%s) in %.0f blocks", label, bytes, b, objects);
    if (error_known && bytes > 0)
        printf(" (bytes ±%.1f%%, blocks ±%.1f%%)", 100 * mt_noise(samples),
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

int info_profile(const char *path)
{
    mt_model_options o = {.fold = 1, .fold_live_at = MT_TIME_END};
    char *err = NULL;
    mt_model *m = mt_model_load(path, &o, &err);
    if (!m) {
        fprintf(stderr, "memtrace info: %s\n", err ? err : "out of memory");
        free(err);
        return 1;
    }
    mt_selection *s = mt_select_sites(m, NULL, MT_TIME_END, NULL, &err);
    if (!s) {
        fprintf(stderr, "memtrace info: %s\n", err ? err : "out of memory");
        free(err);
        mt_model_free(m);
        return 1;
    }
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
        total_line("allocated:", t.alloc_bytes, t.alloc_objects, t.samples, t.alloc_objects_var,
                   known);
    if (has & MT_PROFILE_HAS_LIVE)
        total_line("in use:", t.live_bytes, t.live_objects, t.live_samples, t.live_objects_var,
                   known);
    mt_selection_free(s);
    mt_model_free(m);
    return fflush(stdout) == 0 ? 0 : 1;
}
