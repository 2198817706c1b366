/*
 * report.c - helpers shared by the report commands (see report.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "memtrace/compare.h"
#include "memtrace/stream.h"
#include "progress.h"
#include "report.h"
#include "run_traces.h"
#include "../lib/trace/rawframe.h"

/* A trace recorded under bare LD_PRELOAD names its frames module+0xoffset
 * until `memtrace symbolize` runs: say so when no frame has a name yet. */
static void hint_unsymbolized(const char *cmd, const char *path, const mt_model *m)
{
    size_t raw = 0, named = 0;
    const mt_func *fn = mt_model_funcs(m);
    for (size_t i = 0; i < mt_model_n_funcs(m); i++) {
        uint64_t off;
        if (mt_raw_parse(fn[i].filename, fn[i].name, 0, &off))
            raw++;
        else if (fn[i].filename[0])
            named++;
    }
    if (raw > 0 && named == 0)
        fprintf(stderr, "memtrace %s: note: %s is not symbolized (frames read module+0xoffset); "
                "run 'memtrace symbolize %s' on the machine where it was recorded\n",
                cmd, path, path);
}

int report_usage(const char *cmd)
{
    fprintf(stderr, "memtrace %s: see 'memtrace %s --help'\n", cmd, cmd);
    return 2;
}

int report_time(const char *cmd, const char *opt, const char *text, mt_timedelta *out)
{
    char *err = NULL;
    if (mt_parse_time(text, out, &err) < 0) {
        fprintf(stderr, "memtrace %s: %s %s: %s\n", cmd, opt, text, err ? err : "bad time");
        free(err);
        return 2;
    }
    return 0;
}

int report_metric(const char *cmd, const char *opt, const char *text, mt_metric *out)
{
    int m = mt_metric_parse(text);
    if (m < 0) {
        fprintf(stderr,
                "memtrace %s: %s %s: unknown measure (use alloc, count, live, live_count, temporary, "
                "temp_bytes, samples)\n",
                cmd, opt, text);
        return 2;
    }
    *out = (mt_metric)m;
    return 0;
}

report_sites_cfg report_sites;
int report_fold;
report_hook report_fold_hook;

/* When allocation plumbing is skipped and the shallow model a report asks
 * for cuts a plumbing run (C++ traces, mostly), report_open loads this many
 * more backtrace codes, then, if that is still not enough, whole stacks. */
#define REPORT_PLUMBING_DEPTH 6

int report_site_option(const char *cmd, int c, const char *arg)
{
    (void)cmd;
    switch (c) {
    case REPORT_OPT_RAW: report_sites.raw = 1; return 0;
    case REPORT_OPT_FULL_NAMES: report_sites.full_names = 1; return 0;
    case REPORT_OPT_PLUMBING: report_sites.plumbing = arg; return 0;
    }
    return -1;
}

mt_plumbing *report_plumbing(const char *cmd, int *failed)
{
    *failed = 0;
    if (report_sites.raw || !report_sites.used)
        return NULL;
    mt_plumbing *p = mt_plumbing_new(1);
    if (!p) {
        fprintf(stderr, "memtrace %s: out of memory\n", cmd);
        *failed = 1;
        return NULL;
    }
    const char *files[2] = {getenv("MEMTRACE_PLUMBING"), report_sites.plumbing};
    for (int i = 0; i < 2; i++) {
        char *err = NULL;
        if (files[i] && files[i][0] && mt_plumbing_load(p, files[i], &err) < 0) {
            fprintf(stderr, "memtrace %s: %s%s\n", cmd, i == 0 ? "MEMTRACE_PLUMBING: " : "--plumbing ",
                    err ? err : "cannot read");
            free(err);
            mt_plumbing_free(p);
            *failed = 1;
            return NULL;
        }
    }
    return p;
}

static void no_warning(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
}

static progress *reading; /* the progress line of the trace being read */

static void print_warning(void *ctx, const char *msg)
{
    if (reading)
        progress_end(reading);
    fprintf(stderr, "memtrace %s: warning: %s\n", (const char *)ctx, msg);
}

/* A trace without a single sample makes every report empty: say why, and
 * point at the traces the other processes of the same run wrote beside it
 * (FILE.PID: a wrapper such as env or a shell leaves FILE nearly empty). */
static void explain_empty(const char *cmd, const char *path, const mt_model *m)
{
    const mt_trace_info *info = mt_model_info(m);
    char interval[32];
    double bytes = info->sample_rate > 0 ? info->word_size / 8.0 / info->sample_rate : 0;
    mt_format_bytes(interval, sizeof interval, bytes);
    fprintf(stderr, "memtrace %s: %s has no samples: its process allocated less than about "
                    "one sampling interval (%s) in all\n", cmd, path, interval);
    char **paths;
    size_t n = run_trace_files(path, NULL, &paths);
    run_trace *t = n ? calloc(n, sizeof *t) : NULL;
    size_t k = 0;
    for (size_t i = 0; t && i < n; i++)
        if (strcmp(paths[i], path) != 0) {
            run_trace_read(paths[i], &t[k]);
            if (t[k].samples > 0)
                k++;
        }
    if (k > 0) {
        qsort(t, k, sizeof *t, run_trace_cmp_bytes);
        fprintf(stderr, "memtrace %s: other processes of its run wrote traces beside it, "
                        "largest first:\n", cmd);
        for (size_t i = 0; i < k && i < 5; i++) {
            char b[32];
            mt_format_bytes(b, sizeof b, t[i].bytes);
            fprintf(stderr, "memtrace %s:   %s: %s allocated, %llu samples, %.60s\n", cmd,
                    t[i].path, b, (unsigned long long)t[i].samples, t[i].command);
        }
        if (k > 5)
            fprintf(stderr, "memtrace %s:   ... and %zu more\n", cmd, k - 5);
    }
    free(t);
    run_trace_files_free(paths, n);
}

/* The model could not be loaded: say why, free what report_open_many
 * holds, exit status 1. */
static int load_failed(const char *cmd, char *err, mt_filter **f, mt_plumbing *p)
{
    reading = NULL;
    fprintf(stderr, "memtrace %s: %s\n", cmd, err ? err : "cannot read the trace");
    free(err);
    mt_filter_free(*f);
    *f = NULL;
    mt_plumbing_free(p);
    return 1;
}

mt_filter *report_filter(const char *cmd, const char *text)
{
    char *err = NULL;
    size_t pos = 0;
    mt_filter *f = mt_filter_parse(text, &err, &pos);
    if (!f)
        fprintf(stderr, "memtrace %s: %s\n  %s\n  %*s^\n", cmd, err ? err : "bad filter", text,
                (int)pos, "");
    free(err);
    return f;
}

void report_notes(const char *cmd, const char *path, const mt_model *m)
{
    uint64_t n_allocs = 0;
    mt_model_event_counts(m, &n_allocs, NULL, NULL);
    if (n_allocs == 0)
        explain_empty(cmd, path, m);
    hint_unsymbolized(cmd, path, m);
}

int report_open(const char *cmd, const char *path, const char *filter, mt_timedelta live_at,
                size_t shallow, mt_model **m, mt_filter **f, mt_selection **s)
{
    return report_open_many(cmd, &path, 1, 0, filter, live_at, shallow, m, f, s);
}

int report_open_many(const char *cmd, const char *const *paths, size_t n, int by_process,
                     const char *filter, mt_timedelta live_at, size_t shallow, mt_model **m,
                     mt_filter **f, mt_selection **s)
{
    char *err = NULL;
    *m = NULL;
    *s = NULL;
    *f = NULL;
    int failed;
    mt_plumbing *p = report_plumbing(cmd, &failed);
    if (failed)
        return 2;
    struct stat st;
    for (size_t i = 0; i < n && p && shallow; i++)
        if (stat(paths[i], &st) != 0 || !S_ISREG(st.st_mode))
            shallow = 0; /* a pipe cannot be read again with deeper stacks */
    *f = report_filter(cmd, filter);
    if (!*f) {
        mt_plumbing_free(p);
        return 2;
    }
    mt_model_options mo = {.on_warning = print_warning, .warning_ctx = (void *)cmd};
    if (shallow && !by_process && !mt_filter_uses_stacks(*f))
        mo.max_depth = shallow;
    /* Folding at the peak reads the trace twice: once for the peak. A pipe
     * cannot be read twice: then the whole model. */
    const report_hook *hook = report_fold_hook.fn ? &report_fold_hook : NULL;
    int at_peak = live_at == MT_TIME_PEAK || mt_filter_uses_peak(*f) || (hook && hook->need_peak);
    const char *whole = getenv("MEMTRACE_WHOLE_MODEL");
    int regular = 1;
    for (size_t i = 0; i < n; i++)
        if (stat(paths[i], &st) != 0 || !S_ISREG(st.st_mode))
            regular = 0;
    if ((report_fold || hook) && !(whole && !strcmp(whole, "1")) && (!at_peak || regular)) {
        mo.fold = 1;
        mo.fold_filter = *f;
        mo.fold_live_at = live_at;
        if (hook) {
            mo.on_fold = hook->fn;
            mo.fold_ctx = hook->ctx;
        }
    }
    progress pr;
    progress_init(&pr, cmd);
    mo.on_progress = progress_update;
    mo.progress_ctx = &pr;
    reading = &pr;
    int scanned = -1;
    if (mo.fold && at_peak && n == 1 && !by_process) {
        /* the peak by the codec alone (no stacks): about the time of reading
         * the file; a model pass below when that fails, to say why */
        scanned = mt_scan_peak(paths[0], progress_update, &pr, &mo.fold_peak, NULL);
        if (scanned == 0)
            mo.fold_peak_known = 1;
        else if (scanned == 1)
            mo.fold = 0; /* times go back somewhere: the whole model finds the peak */
    }
    if (mo.fold && at_peak && scanned < 0) {
        mt_model_options po = mo;
        po.fold_filter = NULL;
        po.fold_live_at = MT_TIME_END;
        po.on_fold = NULL;
        po.on_warning = no_warning; /* the second pass says it */
        mt_model *pm = mt_model_load_many(paths, n, by_process, &po, &err);
        if (pm && mt_model_peak_known(pm)) {
            mo.fold_peak_known = 1;
            mo.fold_peak = mt_model_peak_time(pm);
        } else {
            mo.fold = 0; /* times go back somewhere: the whole model finds the peak */
        }
        mt_model_free(pm);
        free(err);
        err = NULL;
    }
    if (!mo.fold) {
        mo.on_fold = NULL;
        mo.fold_ctx = NULL;
    }
    if (mo.on_fold && hook->reset)
        hook->reset(hook->ctx);
    *m = mt_model_load_many(paths, n, by_process, &mo, &err);
    progress_end(&pr);
    if (!*m)
        return load_failed(cmd, err, f, p);
    uint64_t n_allocs = 0; /* a folded model keeps no allocation records: count events */
    mt_model_event_counts(*m, &n_allocs, NULL, NULL);
    if (n_allocs == 0 && n == 1)
        explain_empty(cmd, paths[0], *m);
    hint_unsymbolized(cmd, paths[0], *m);
    *s = mt_select_sites(*m, *f, live_at, p, &err);
    while (*s && p && mo.max_depth && !mt_selection_sites_complete(*s, p, mo.max_depth)) {
        /* a plumbing run reaches the cut: load deeper stacks, then whole ones */
        mt_selection_free(*s);
        mt_model_free(*m);
        mo.max_depth = mo.max_depth == shallow ? shallow + REPORT_PLUMBING_DEPTH : 0;
        *s = NULL;
        if (mo.on_fold && hook->reset)
            hook->reset(hook->ctx);
        *m = mt_model_load_many(paths, n, by_process, &mo, &err);
        progress_end(&pr);
        if (!*m)
            return load_failed(cmd, err, f, p);
        *s = mt_select_sites(*m, *f, live_at, p, &err);
    }
    reading = NULL;
    mt_plumbing_free(p);
    if (!*s) {
        /* a regex over its limits is the filter's fault: a usage error */
        fprintf(stderr, "memtrace %s: %s\n", cmd, err ? err : "out of memory");
        int rc = err ? 2 : 1;
        free(err);
        report_close(*m, *f, NULL);
        *m = NULL;
        *f = NULL;
        return rc;
    }
    return 0;
}

void report_close(mt_model *m, mt_filter *f, mt_selection *s)
{
    mt_selection_free(s);
    mt_filter_free(f);
    mt_model_free(m);
}
