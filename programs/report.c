/*
 * report.c - helpers shared by the report commands (see report.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/compare.h"
#include "report.h"

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
                "memtrace %s: %s %s: unknown measure (use alloc, count, live, live_count, "
                "samples)\n",
                cmd, opt, text);
        return 2;
    }
    *out = (mt_metric)m;
    return 0;
}

static void print_warning(void *ctx, const char *msg)
{
    fprintf(stderr, "memtrace %s: warning: %s\n", (const char *)ctx, msg);
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
    size_t pos = 0;
    *m = NULL;
    *s = NULL;
    *f = mt_filter_parse(filter, &err, &pos);
    if (!*f) {
        fprintf(stderr, "memtrace %s: %s\n  %s\n  %*s^\n", cmd, err ? err : "bad filter",
                filter, (int)pos, "");
        free(err);
        return 2;
    }
    mt_model_options mo = {.on_warning = print_warning, .warning_ctx = (void *)cmd};
    if (shallow && !by_process && !mt_filter_uses_stacks(*f))
        mo.max_depth = shallow;
    *m = mt_model_load_many(paths, n, by_process, &mo, &err);
    if (!*m) {
        fprintf(stderr, "memtrace %s: %s\n", cmd, err ? err : "cannot read the trace");
        free(err);
        mt_filter_free(*f);
        return 1;
    }
    *s = mt_select(*m, *f, live_at);
    if (!*s) {
        fprintf(stderr, "memtrace %s: out of memory\n", cmd);
        report_close(*m, *f, NULL);
        return 1;
    }
    return 0;
}

void report_close(mt_model *m, mt_filter *f, mt_selection *s)
{
    mt_selection_free(s);
    mt_filter_free(f);
    mt_model_free(m);
}
