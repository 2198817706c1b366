/*
 * bind.c - the analysis library for other languages (memtrace/bind.h):
 * selections bundled with the filter and plumbing list they were made
 * from, per-allocation columns, and the CLI's JSON reports written into
 * malloc'd text through open_memstream.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bindsel.h"
#include "memtrace/compare.h"
#include "memtrace/present.h"

char *mta_bind_msg(const char *what, const char *detail)
{
    size_t n = strlen(what) + (detail ? strlen(detail) + 2 : 0) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
    return s;
}

/* The whole model of the traces, warnings to warn (NULL: stderr). */
static mt_model *open_whole(const char *const *paths, size_t n, void *arg, mt_warning_fn warn,
                            void *warn_ctx, char **err)
{
    (void)arg;
    mt_read_request rq = {.paths = paths, .n = n, .on_warning = warn, .warning_ctx = warn_ctx};
    return mt_read(&rq, err);   /* every allocation: the whole model */
}

mt_model *mt_bind_open(const char *const *paths, size_t n, char **err)
{
    *err = NULL;
    if (!n) {
        *err = mta_bind_msg("no trace given", NULL);
        return NULL;
    }
    return open_whole(paths, n, NULL, NULL, NULL, err);
}

/* A warning as one line of the text mta_bind_warned gives (a newline
 * inside one would split it: a space instead). */
static void keep_warning(void *ctx, const char *msg)
{
    FILE *f = ctx;
    for (const char *c = msg; *c; c++)
        fputc(*c == '\n' ? ' ' : *c, f);
    fputc('\n', f);
}

mt_model *mta_bind_warned(mta_bind_opener opener, const char *const *paths, size_t n, void *arg,
                          char **warnings, char **err)
{
    *err = NULL;
    *warnings = NULL;
    if (!n) {
        *err = mta_bind_msg("no trace given", NULL);
        return NULL;
    }
    size_t len = 0;
    FILE *f = open_memstream(warnings, &len);
    if (!f) {
        *err = mta_bind_msg("out of memory", NULL);
        return NULL;
    }
    mt_model *m = opener(paths, n, arg, keep_warning, f, err);
    if (fclose(f) != 0 || !len) {
        free(*warnings);
        *warnings = NULL;
    }
    return m;
}

mt_model *mt_bind_open_warned(const char *const *paths, size_t n, char **warnings, char **err)
{
    return mta_bind_warned(open_whole, paths, n, NULL, warnings, err);
}

/* Runs fn into a memory stream: its text, or NULL. */
typedef int (*writer_fn)(FILE *out, const void *ctx);
static char *to_text(writer_fn fn, const void *ctx)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out)
        return NULL;
    int rc = fn(out, ctx);
    if (fclose(out) != 0 || rc < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static int write_info(FILE *out, const void *ctx)
{
    const mt_model *m = ctx;
    const mt_trace_info *i = mt_model_info(m);
    uint64_t allocs = 0, promotes = 0, collects = 0;
    mt_model_event_counts(m, &allocs, &promotes, &collects);
    fprintf(out, "{\"version\":%d,\"sample_rate\":%.17g,\"word_size\":%u,\"executable\":", i->version,
            i->sample_rate, i->word_size);
    mt_json_string(out, i->executable_name ? i->executable_name : "");
    fputs(",\"host\":", out);
    mt_json_string(out, i->host_name ? i->host_name : "");
    fprintf(out, ",\"pid\":%llu,\"start_time_us\":%lld,\"context\":", (unsigned long long)i->pid,
            (long long)i->start_time);
    if (i->context)
        mt_json_string(out, i->context);
    else
        fputs("null", out);
    fprintf(out, ",\"end_us\":%lld,\"bytes_per_sample\":%.17g,\"allocations\":%llu,"
                 "\"promotions\":%llu,\"collections\":%llu}",
            (long long)mt_model_end(m), mt_model_bytes_per_sample(m), (unsigned long long)allocs,
            (unsigned long long)promotes, (unsigned long long)collects);
    return ferror(out) ? -1 : 0;
}

char *mt_bind_info_json(const mt_model *m)
{
    return to_text(write_info, m);
}

void mt_bind_sel_free(mt_bind_sel *b)
{
    if (!b)
        return;
    mt_selection_free(b->s);
    mt_filter_free(b->f);
    mt_plumbing_free(b->p);
    mt_diff_fold_free(b->fold);
    mt_model_free(b->own);
    free(b->filter_text);
    free(b);
}

mt_bind_sel *mta_bind_select_with(const mt_model *m, mt_filter *f, const char *filter,
                                  mt_timedelta at, int sites, char **err)
{
    *err = NULL;
    mt_bind_sel *b = calloc(1, sizeof *b);
    if (!b) {
        mt_filter_free(f);
        return NULL;
    }
    b->m = m;
    b->f = f;
    b->at = at;
    if (!(b->filter_text = strdup(filter ? filter : "")) ||
        (sites && !(b->p = mt_plumbing_new(1))) ||
        !(b->s = mt_select_sites(m, b->f, b->at, b->p, err))) {
        mt_bind_sel_free(b);
        return NULL;
    }
    return b;
}

int mta_bind_parse(const char *filter, const char *at, mt_filter **f, mt_timedelta *t, char **err)
{
    *err = NULL;
    *f = NULL;
    *t = MT_TIME_END;
    if (at && *at && mt_parse_time(at, t, err) != 0) {
        char *e = mta_bind_msg("bad time", *err ? *err : at);
        free(*err);
        *err = e;
        return -1;
    }
    size_t pos = 0;
    *f = mt_filter_parse(filter ? filter : "", err, &pos);   /* the message says where */
    return *f ? 0 : -1;
}

mt_bind_sel *mt_bind_select(const mt_model *m, const char *filter, const char *at, int sites,
                            char **err)
{
    mt_filter *f;
    mt_timedelta t;
    if (mta_bind_parse(filter, at, &f, &t, err) < 0)
        return NULL;
    return mta_bind_select_with(m, f, filter, t, sites, err);
}

const mt_selection *mt_bind_selection(const mt_bind_sel *b)
{
    return b->s;
}

size_t mt_bind_columns(const mt_bind_sel *b, uint32_t *idx, uint32_t *site, uint32_t *stack,
                       size_t cap)
{
    size_t n = mt_model_n_allocs(b->m), k = 0;
    const mt_node *nodes = mt_selection_nodes(b->s);
    for (size_t i = 0; i < n; i++) {
        if (!mt_selection_has(b->s, i))
            continue;
        if (k < cap) {
            mt_node_id node = mt_selection_stack_of(b->s, i);
            if (idx)
                idx[k] = (uint32_t)i;
            if (site)
                site[k] = node ? nodes[node].frame : MT_NO_FRAME;
            if (stack)
                stack[k] = node;
        }
        k++;
    }
    return k;
}

char *mt_bind_stack_text(const mt_bind_sel *b, uint32_t node)
{
    const mt_model *m = b->m;
    if (node >= mt_selection_n_nodes(b->s))
        return strdup("");
    size_t depth = mt_selection_stack(b->s, node, NULL, 0);
    mt_frame_id *fr = malloc((depth ? depth : 1) * sizeof *fr);
    if (!fr)
        return NULL;
    mt_selection_stack(b->s, node, fr, depth);
    size_t len = 1;
    for (size_t i = 0; i < depth; i++)
        len += strlen(mt_model_funcs(m)[mt_model_frames(m)[fr[i]].func].name) + 1;
    char *s = malloc(len), *p = s;
    if (s) {
        *p = 0;
        for (size_t i = 0; i < depth; i++) {
            const char *name = mt_model_funcs(m)[mt_model_frames(m)[fr[i]].func].name;
            size_t l = strlen(name);
            if (i)
                *p++ = ';';
            memcpy(p, name, l + 1);
            p += l;
        }
    }
    free(fr);
    return s;
}

char *mt_bind_model_stacks(const mt_model *m, const uint32_t *nodes, size_t n, size_t *len)
{
    char *buf = NULL;
    *len = 0;
    FILE *out = open_memstream(&buf, len);
    if (!out)
        return NULL;
    size_t cap = 64;
    mt_frame_id *fr = malloc(cap * sizeof *fr);
    const mt_frame *frames = mt_model_frames(m);
    const mt_func *funcs = mt_model_funcs(m);
    size_t n_nodes = mt_model_n_nodes(m);
    for (size_t i = 0; fr && i < n; i++) {
        size_t depth = nodes[i] < n_nodes ? mt_model_stack(m, nodes[i], fr, cap) : 0;
        if (depth > cap) {
            mt_frame_id *more = realloc(fr, depth * sizeof *fr);
            if (!more)
                break;
            fr = more;
            cap = depth;
            mt_model_stack(m, nodes[i], fr, cap);
        }
        for (size_t k = 0; k < depth; k++) {
            if (k)
                fputc(';', out);
            fputs(funcs[frames[fr[k]].func].name, out);
        }
        fputc(0, out);
    }
    int failed = !fr;
    free(fr);
    if (fclose(out) != 0 || failed) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* --by names as the CLI takes them (report_metric), else the metric's own name. */
int mta_bind_metric(const char *by)
{
    static const struct { const char *name; mt_metric m; } cli[] = {
        {"alloc", MT_METRIC_ALLOC_BYTES}, {"count", MT_METRIC_ALLOC_OBJECTS},
        {"live", MT_METRIC_LIVE_BYTES},   {"live_count", MT_METRIC_LIVE_OBJECTS},
        {"temporary", MT_METRIC_TEMP_OBJECTS}, {"temp_bytes", MT_METRIC_TEMP_BYTES},
        {"samples", MT_METRIC_SAMPLES}};
    for (size_t i = 0; i < sizeof cli / sizeof cli[0]; i++)
        if (!strcmp(by, cli[i].name))
            return (int)cli[i].m;
    return mt_metric_parse(by);
}

typedef struct top_ctx {
    const mt_bind_sel *b;
    mt_top_options o;
} top_ctx;

static int write_top(FILE *out, const void *ctx)
{
    const top_ctx *t = ctx;
    return mt_report_top(out, t->b->s, &t->o);
}

char *mt_bind_top_json(const mt_bind_sel *b, const char *by, size_t limit, size_t callers,
                       char **err)
{
    *err = NULL;
    int metric = mta_bind_metric(by ? by : "alloc");
    if (metric < 0) {
        *err = mta_bind_msg("unknown measure", by);
        return NULL;
    }
    top_ctx t = {b, {(mt_metric)metric, limit, callers, 1, b->filter_text, 0,
                     b->at == MT_TIME_PEAK}};
    return to_text(write_top, &t);
}

static int write_stats(FILE *out, const void *ctx)
{
    return mt_report_stats(out, ((const mt_bind_sel *)ctx)->s, 1);
}

char *mt_bind_stats_json(const mt_bind_sel *b)
{
    return to_text(write_stats, b);
}

typedef struct diff_ctx {
    const mt_diff *d;
} diff_ctx;

static int write_diff(FILE *out, const void *ctx)
{
    mt_diff_report_options o = {0};
    o.json = 1;
    o.base_name = "base";
    o.new_name = "new";
    o.unit = "";
    return mt_report_diff(out, ((const diff_ctx *)ctx)->d, &o);
}

char *mt_bind_diff_json(const mt_bind_sel *base, const mt_bind_sel *new_, const char *by,
                        const char *key, double alpha, char **err)
{
    *err = NULL;
    int metric = mta_bind_metric(by ? by : "alloc");
    if (metric != MT_METRIC_ALLOC_BYTES && metric != MT_METRIC_ALLOC_OBJECTS &&
        metric != MT_METRIC_LIVE_BYTES && metric != MT_METRIC_LIVE_OBJECTS) {
        *err = mta_bind_msg("diff compares alloc, count, live or live_count, not", by);
        return NULL;
    }
    mt_diff_key k;
    if (!key || !strcmp(key, "site"))
        k = MT_DIFF_SITE;
    else if (!strcmp(key, "function"))
        k = MT_DIFF_FUNCTION;
    else if (!strcmp(key, "path"))
        k = MT_DIFF_PATH;
    else {
        *err = mta_bind_msg("diff keys are site, function or path, not", key);
        return NULL;
    }
    if (mt_model_info(base->m)->word_size != mt_model_info(new_->m)->word_size) {
        *err = mta_bind_msg("the traces are of different kinds (OCaml and C)", NULL);
        return NULL;
    }
    mt_diff_side sb = mt_diff_side_all(base->s, base->at);
    mt_diff_side sn = mt_diff_side_all(new_->s, new_->at);
    sb.fold = base->fold;   /* a folded read's sums, or NULL */
    sn.fold = new_->fold;
    mt_diff_options o = {(mt_metric)metric, k, alpha};
    mt_diff *d = mt_diff_compute(&sb, &sn, &o);
    if (!d)
        return NULL;
    diff_ctx c = {d};
    char *text = to_text(write_diff, &c);
    mt_diff_free(d);
    return text;
}

size_t mt_bind_curve(const mt_bind_sel *b, size_t n, int64_t *time, double *total,
                     double *filtered)
{
    mt_curve *c = mt_query_curve(b->s, 0, MT_TIME_END, n);
    if (!c)
        return 0;
    for (size_t i = 0; i < c->n && i < n; i++) {
        time[i] = c->time[i];
        total[i] = c->total[i];
        filtered[i] = c->filtered[i];
    }
    size_t k = c->n < n ? c->n : n;
    mt_curve_free(c);
    return k;
}

void mt_bind_free(void *p)
{
    free(p);
}

size_t mt_bind_alloc_offsets(size_t *out, size_t n)
{
    const size_t off[] = {offsetof(mt_alloc, time),      offsetof(mt_alloc, collect),
                          offsetof(mt_alloc, size),      offsetof(mt_alloc, n_samples),
                          offsetof(mt_alloc, stack),     offsetof(mt_alloc, source),
                          offsetof(mt_alloc, carried),   offsetof(mt_alloc, domain)};
    for (size_t i = 0; i < n && i < sizeof off / sizeof off[0]; i++)
        out[i] = off[i];
    return sizeof(mt_alloc);
}

size_t mt_bind_alloc_layout(size_t out[7])
{
    return mt_bind_alloc_offsets(out, 7);
}
