/*
 * report.c - helpers shared by the report commands (see report.h).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "memtrace/compare.h"
#include "memtrace/stream.h"
#include "progress.h"
#include "report.h"
#include "run_traces.h"
#include "trace_names.h"
#include "rawframe.h"

static void no_warning(void *ctx, const char *msg);

/* Does the trace at path name any frame (a function that is not a raw
 * module+0xoffset frame)? Read until the first one; regular files only
 * (-1: cannot tell). A shallow model sees only the innermost frames, all
 * raw in a symbolized trace of a stripped library's allocations. */
static int names_any_frame(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return -1;
    mt_reader_options ro = {.on_warning = no_warning};
    mt_reader *r = mt_reader_open(path, &ro, NULL);
    if (!r)
        return -1;
    mt_event ev;
    int found = 0, rc;
    while (!found && (rc = mt_reader_next(r, &ev)) > 0) {
        if (ev.kind != MT_EVENT_ALLOC)
            continue;
        for (size_t i = ev.common_prefix; i < ev.backtrace_length && !found; i++) {
            const mt_location *l;
            size_t n;
            if (mt_reader_lookup(r, ev.backtrace[i], &l, &n) < 0)
                continue;
            for (size_t k = 0; k < n && !found; k++) {
                uint64_t off;
                found = l[k].filename && l[k].filename[0] &&
                        !mt_raw_parse(l[k].filename, l[k].defname, l[k].line, &off);
            }
        }
    }
    mt_reader_close(r);
    return found;
}

/* A trace recorded under bare LD_PRELOAD names its frames module+0xoffset
 * until they are named: as it is read, from the binaries here
 * (trace_names.c), which says which modules it could not use; else when
 * no frame has a name at all, say to run `memtrace symbolize` (not when
 * the model's frames are all raw but the trace's are not: a stripped
 * library's frames stay raw after symbolize). */
static void hint_unsymbolized(FILE *out, const char *cmd, const char *path, const mt_model *m)
{
    if (trace_names_note(out, cmd))
        return;
    size_t raw = 0, named = 0;
    const mt_func *fn = mt_model_funcs(m);
    for (size_t i = 0; i < mt_model_n_funcs(m); i++) {
        uint64_t off;
        if (mt_raw_parse(fn[i].filename, fn[i].name, 0, &off))
            raw++;
        else if (fn[i].filename[0])
            named++;
    }
    if (raw > 0 && named == 0 && names_any_frame(path) == 0)
        fprintf(out, "memtrace %s: note: %s is not symbolized (frames read module+0xoffset); "
                "run 'memtrace symbolize %s' on the machine where it was recorded\n",
                cmd, path, path);
}

report_sites_cfg report_sites;
int report_stacks_only;

/* When allocation plumbing is skipped and the shallow model a report asks
 * for cuts a plumbing run (C++ traces, mostly), report_open loads this many
 * more backtrace codes, then, if that is still not enough, whole stacks. */
#define REPORT_PLUMBING_DEPTH 6

/* One opening of traces: where its messages go (stderr, or a buffer while
 * another opening runs beside it), the progress line to clear before one,
 * and the hook it folds with. */
typedef struct opener {
    const char *cmd;
    FILE *out;                   /* messages */
    progress *reading;           /* the progress line of the trace being read */
    const report_hook *hook;     /* NULL: none */
    mt_progress_fn on_progress;  /* NULL: a progress line of its own */
    void *progress_ctx;
} opener;

static mt_plumbing *plumbing_load(FILE *out, const char *cmd, int *failed)
{
    *failed = 0;
    if (report_sites.raw || !report_sites.used)
        return NULL;
    mt_plumbing *p = mt_plumbing_new(1);
    if (!p) {
        fprintf(out, "memtrace %s: out of memory\n", cmd);
        *failed = 1;
        return NULL;
    }
    const char *files[2] = {getenv("MEMTRACE_PLUMBING"), report_sites.plumbing};
    for (int i = 0; i < 2; i++) {
        char *err = NULL;
        if (files[i] && files[i][0] && mt_plumbing_load(p, files[i], &err) < 0) {
            fprintf(out, "memtrace %s: %s%s\n", cmd, i == 0 ? "MEMTRACE_PLUMBING: " : "--plumbing ",
                    err ? err : "cannot read");
            free(err);
            mt_plumbing_free(p);
            *failed = 1;
            return NULL;
        }
    }
    return p;
}

mt_plumbing *report_plumbing(const char *cmd, int *failed)
{
    return plumbing_load(stderr, cmd, failed);
}

static void no_warning(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
}

static void print_warning(void *ctx, const char *msg)
{
    opener *o = ctx;
    if (o->reading)
        progress_end(o->reading);
    fprintf(o->out, "memtrace %s: warning: ", o->cmd);
    mt_text_put(o->out, msg);   /* (it may quote the trace) */
    fputc('\n', o->out);
}

/* A trace without a single sample makes every report empty: say why, and
 * point at the traces the other processes of the same run wrote beside it
 * (FILE.PID: a wrapper such as env or a shell leaves FILE nearly empty). */
static void explain_empty(FILE *out, const char *cmd, const char *path, const mt_model *m)
{
    const mt_trace_info *info = mt_model_info(m);
    char interval[32];
    mt_format_bytes(interval, sizeof interval, mt_scale_of(info).bytes_per_sample);
    /* Only a trace its process finished tells how little it allocated. */
    run_trace self;
    memset(&self, 0, sizeof self);
    run_trace_read(path, &self);
    fprintf(out, "memtrace %s: ", cmd);
    mt_text_put(out, path);
    if (self.readable && self.complete && self.ended)
        fprintf(out, " has no samples: its process allocated less than about "
                     "one sampling interval (%s) in all\n", interval);
    else
        fprintf(out, " has no samples: its process did not finish it (still "
                     "running, killed or crashed) and wrote none before that\n");
    char **paths;
    struct stat st;
    size_t n = lstat(path, &st) == 0 ? run_trace_files(path, NULL, st.st_uid, NULL, &paths) : 0;
    if (!n)
        paths = NULL;
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
        fprintf(out, "memtrace %s: other processes of its run wrote traces beside it, "
                     "largest first:\n", cmd);
        for (size_t i = 0; i < k && i < 5; i++) {
            char b[32], command[64];
            mt_format_bytes(b, sizeof b, t[i].bytes);
            fprintf(out, "memtrace %s:   ", cmd);
            mt_text_put(out, t[i].path);
            fprintf(out, ": %s allocated, %llu samples, ", b, (unsigned long long)t[i].samples);
            mt_text_escape(command, sizeof command, t[i].command);   /* (cut whole) */
            mt_text_put(out, command);
            fputc('\n', out);
        }
        if (k > 5)
            fprintf(out, "memtrace %s:   ... and %zu more\n", cmd, k - 5);
    }
    free(t);
    run_trace_files_free(paths, n);
}

/* The model could not be loaded: say why, free what open_many holds, exit
 * status 1. */
static int load_failed(opener *o, char *err, mt_filter **f, mt_plumbing *p)
{
    o->reading = NULL;
    fprintf(o->out, "memtrace %s: %s\n", o->cmd, err ? err : "cannot read the trace");
    free(err);
    mt_filter_free(*f);
    *f = NULL;
    mt_plumbing_free(p);
    return 1;
}

static mt_filter *filter_compile(FILE *out, const char *cmd, const char *text)
{
    char *err = NULL;
    size_t pos = 0;
    mt_filter *f = mt_filter_parse(text, &err, &pos);
    if (!f)
        fprintf(out, "memtrace %s: %s\n  %s\n  %*s^\n", cmd, err ? err : "bad filter", text,
                (int)pos, "");
    free(err);
    return f;
}

mt_filter *report_filter(const char *cmd, const char *text)
{
    return filter_compile(stderr, cmd, text);
}

void report_notes(const char *cmd, const char *const *paths, size_t n, const mt_model *m)
{
    uint64_t n_allocs = 0;
    mt_model_event_counts(m, &n_allocs, NULL, NULL);
    if (n_allocs == 0 && n == 1)
        explain_empty(stderr, cmd, paths[0], m);
    hint_unsymbolized(stderr, cmd, paths[0], m);
}

int report_not_profile(const char *cmd, const char *path)
{
    fprintf(stderr, "memtrace %s: ", cmd);
    mt_text_put(stderr, path);
    fprintf(stderr, " is a pprof profile: it holds no times nor allocations, only per-stack "
                    "totals: %s needs a trace (top, folded, pprof, diff, check, stats and info "
                    "read profiles)\n", cmd);
    return 1;
}

int report_profile_measure(const char *cmd, const char *path, const mt_model *m, mt_metric metric)
{
    if (!mt_model_profile(m))
        return 0;
    unsigned has = mt_model_profile_measures(m), need = 0;
    const char *what = "";
    switch (metric) {
    case MT_METRIC_LIVE_BYTES:
    case MT_METRIC_LIVE_OBJECTS: need = MT_PROFILE_HAS_LIVE, what = "in-use (inuse_*)"; break;
    case MT_METRIC_ALLOC_BYTES:
    case MT_METRIC_ALLOC_OBJECTS:
    case MT_METRIC_SAMPLES: need = MT_PROFILE_HAS_ALLOC, what = "allocated (alloc_*)"; break;
    default: what = "temporary-block"; break;
    }
    if (need && (has & need))
        return 0;
    fprintf(stderr, "memtrace %s: ", cmd);
    mt_text_put(stderr, path);
    fprintf(stderr, " is a pprof profile without %s values: --by %s needs them%s\n", what,
            mt_metric_name(metric),
            need ? (has & MT_PROFILE_HAS_LIVE ? " (it has: live, live_count)"
                                              : " (it has: alloc, count)")
                 : " (a profile has no lifetimes)");
    return 1;
}

int report_open(const char *cmd, const char *path, const char *filter, mt_timedelta live_at,
                size_t shallow, mt_model **m, mt_filter **f, mt_selection **s)
{
    return report_open_many(cmd, &path, 1, 0, filter, live_at, shallow, m, f, s);
}

/* What the report wants: the costs of its filter f at its time, the
 * hook's figures (into sink), the peak first when asked for; read.c plans
 * how. shallow: the stack depth to read first (0: whole stacks). */
static void plan_request(opener *o, mt_read_request *rq, mt_sink *sink,
                         const char *const *paths, size_t n, int by_process, mt_filter *f,
                         mt_timedelta live_at, size_t shallow)
{
    const report_hook *hook = o->hook && o->hook->fn ? o->hook : NULL;
    *rq = (mt_read_request){
        .paths = paths,
        .n = n,
        .by_process = by_process,
        .fold = report_stacks_only || hook,
        .filter = f,
        .live_at = live_at,
        .need_peak = live_at == MT_TIME_PEAK || mt_filter_uses_peak(f) || (hook && hook->need_peak),
        .on_warning = print_warning,
        .warning_ctx = o,
    };
    if (shallow && !by_process && !mt_filter_uses_stacks(f))
        rq->max_depth = shallow;
    if (hook) {
        sink->on_done = hook->fn;
        sink->on_reset = hook->reset;
        sink->ctx = hook->ctx;
        rq->sinks = sink;
        rq->n_sinks = 1;
    }
}

static int open_many(opener *o, const char *const *paths, size_t n, int by_process,
                     const char *filter, mt_timedelta live_at, size_t shallow, mt_model **m,
                     mt_filter **f, mt_selection **s, int *fed)
{
    const char *cmd = o->cmd;
    char *err = NULL;
    *m = NULL;
    *s = NULL;
    *f = NULL;
    int failed;
    mt_plumbing *p = plumbing_load(o->out, cmd, &failed);
    if (failed)
        return 2;
    if (p && shallow && !mt_read_regular(paths, n))
        shallow = 0; /* a pipe cannot be read again with deeper stacks */
    *f = filter_compile(o->out, cmd, filter);
    if (!*f) {
        mt_plumbing_free(p);
        return 2;
    }
    mt_sink sink = {0};
    mt_read_request rq;
    plan_request(o, &rq, &sink, paths, n, by_process, *f, live_at, shallow);
    progress pr;
    progress_init(&pr, cmd);
    rq.on_progress = progress_update;
    rq.progress_ctx = &pr;
    if (o->on_progress) {
        pr.on = 0; /* the caller's line instead */
        rq.on_progress = o->on_progress;
        rq.progress_ctx = o->progress_ctx;
    }
    o->reading = &pr;
    *m = mt_read(&rq, &err);
    progress_end(&pr);
    if (!*m)
        return load_failed(o, err, f, p);
    if (fed)
        *fed = rq.sinks_fed;
    uint64_t n_allocs = 0; /* a folded model keeps no allocation records: count events */
    mt_model_event_counts(*m, &n_allocs, NULL, NULL);
    if (n_allocs == 0 && n == 1)
        explain_empty(o->out, cmd, paths[0], *m);
    hint_unsymbolized(o->out, cmd, paths[0], *m);
    *s = mt_select_sites(*m, *f, live_at, p, &err);
    while (*s && p && rq.max_depth && !mt_selection_sites_complete(*s, p, rq.max_depth)) {
        /* a plumbing run reaches the cut: load deeper stacks, then whole ones */
        mt_selection_free(*s);
        mt_model_free(*m);
        rq.max_depth = rq.max_depth == shallow ? shallow + REPORT_PLUMBING_DEPTH : 0;
        *s = NULL;
        *m = mt_read_again(&rq, &err);
        progress_end(&pr);
        if (!*m)
            return load_failed(o, err, f, p);
        *s = mt_select_sites(*m, *f, live_at, p, &err);
    }
    o->reading = NULL;
    mt_plumbing_free(p);
    if (!*s) {
        /* a regex over its limits is the filter's fault: a usage error */
        fprintf(o->out, "memtrace %s: %s\n", cmd, err ? err : "out of memory");
        int rc = err ? 2 : 1;
        free(err);
        report_close(*m, *f, NULL);
        *m = NULL;
        *f = NULL;
        return rc;
    }
    return 0;
}

int report_open_many(const char *cmd, const char *const *paths, size_t n, int by_process,
                     const char *filter, mt_timedelta live_at, size_t shallow, mt_model **m,
                     mt_filter **f, mt_selection **s)
{
    opener o = {.cmd = cmd, .out = stderr};
    return open_many(&o, paths, n, by_process, filter, live_at, shallow, m, f, s, NULL);
}

/* Sides read at once share one progress line: the mean of the parts read
 * of each (a side not started yet counts 0, so the line never goes back
 * when one starts). */
typedef struct shared_progress {
    pthread_mutex_t mu;
    progress pr;
    size_t n;
    double part[REPORT_MAX_SIDES];
} shared_progress;

typedef struct side_job {
    opener o;
    report_side *side;
    shared_progress *sp;
    size_t index;
    const char *filter;
    mt_timedelta live_at;
    size_t shallow;
    char *msgs;                  /* what it would have written to stderr */
    size_t msgs_len;
    int rc;
} side_job;

static void side_progress(void *ctx, uint64_t done, uint64_t total)
{
    side_job *j = ctx;
    shared_progress *sp = j->sp;
    if (total == 0)
        return;
    pthread_mutex_lock(&sp->mu);
    sp->part[j->index] = done < total ? (double)done / (double)total : 1.0;
    double sum = 0;
    for (size_t i = 0; i < sp->n; i++)
        sum += sp->part[i];
    progress_update(&sp->pr, (uint64_t)(sum * 1e6), (uint64_t)sp->n * 1000000);
    pthread_mutex_unlock(&sp->mu);
}

static void side_open(side_job *j)
{
    report_side *sd = j->side;
    j->rc = open_many(&j->o, sd->paths, sd->n, sd->by_process, j->filter, j->live_at, j->shallow,
                      &sd->m, &sd->f, &sd->s, &sd->fed);
}

static void *side_thread(void *arg)
{
    side_job *j = arg;
    side_open(j);
    fflush(j->o.out);
    return NULL;
}

/* The route one-thread (--route): no thread beyond the main one. */
static int one_thread(void)
{
    return (mt_read_forced() & MT_ROUTE_ONE_THREAD) != 0;
}

/* Whether the sides are read in threads: the number of sides whose
 * messages then go to a buffer of their own (jobs[i].o.out), 0 when
 * they are read one after the other. */
static size_t hold_messages(side_job *jobs, const report_side *sides, size_t n)
{
    /* Two sides that read pipes may read the same one (/dev/stdin twice):
     * in turn then, as before, the first taking all of it. */
    size_t piped = 0;
    for (size_t i = 0; i < n; i++)
        if (!mt_read_regular(sides[i].paths, sides[i].n))
            piped++;
    size_t held = 0; /* sides whose messages go to a buffer */
    if (n >= 2 && piped < 2 && !one_thread()) {
        for (; held < n; held++) {
            side_job *j = &jobs[held];
            memset(j, 0, sizeof *j);
            j->o.out = open_memstream(&j->msgs, &j->msgs_len);
            if (!j->o.out)
                break;
        }
        if (held < n) { /* out of memory: one after the other */
            while (held > 0) {
                fclose(jobs[--held].o.out);
                free(jobs[held].msgs);
            }
        }
    }
    return held;
}

/* One thread per side beyond the first (their models share nothing).
 * Messages are held in each side's buffer and written in side order
 * after the reads, up to the first side that failed, so that stderr says
 * what reading them one after the other says. The first failure's
 * status, or 0. */
static int open_in_threads(side_job *jobs, report_side *sides, size_t n, const char *cmd,
                           const char *filter, mt_timedelta live_at, size_t shallow)
{
    pthread_t tid[REPORT_MAX_SIDES];
    int started[REPORT_MAX_SIDES] = {0};
    shared_progress sp;
    int rc = 0;
    pthread_mutex_init(&sp.mu, NULL);
    progress_init(&sp.pr, cmd);
    sp.n = n;
    memset(sp.part, 0, sizeof sp.part);
    for (size_t i = 0; i < n; i++) {
        side_job *j = &jobs[i];
        j->side = &sides[i];
        j->sp = &sp;
        j->index = i;
        j->filter = filter;
        j->live_at = live_at;
        j->shallow = shallow;
        j->o.cmd = cmd;
        j->o.hook = &sides[i].hook;
        j->o.on_progress = side_progress;
        j->o.progress_ctx = j;
    }
    for (size_t i = 1; i < n; i++)
        started[i] = pthread_create(&tid[i], NULL, side_thread, &jobs[i]) == 0;
    side_open(&jobs[0]);
    for (size_t i = 1; i < n; i++)
        if (started[i])
            pthread_join(tid[i], NULL);
    for (size_t i = 1; i < n; i++)
        if (!started[i]) /* no thread for it: read it here, after the others */
            side_open(&jobs[i]);
    progress_end(&sp.pr);
    pthread_mutex_destroy(&sp.mu);
    for (size_t i = 0; i < n; i++) {
        side_job *j = &jobs[i];
        fclose(j->o.out);
        if (!rc && j->msgs_len)
            fwrite(j->msgs, 1, j->msgs_len, stderr);
        free(j->msgs);
        if (!rc)
            rc = j->rc;
    }
    return rc;
}

int report_open_sides(const char *cmd, report_side *sides, size_t n, const char *filter,
                      mt_timedelta live_at, size_t shallow)
{
    side_job jobs[REPORT_MAX_SIDES];
    memset(jobs, 0, sizeof jobs);
    int rc = 0;
    if (n > REPORT_MAX_SIDES)
        n = REPORT_MAX_SIDES;
    for (size_t i = 0; i < n; i++) {
        sides[i].m = NULL;
        sides[i].f = NULL;
        sides[i].s = NULL;
        sides[i].fed = 0;
    }
    if (hold_messages(jobs, sides, n) == 0) {
        /* one after the other, as report_open_many; stop at the first failure */
        for (size_t i = 0; i < n && !rc; i++) {
            opener o = {.cmd = cmd, .out = stderr, .hook = &sides[i].hook};
            rc = open_many(&o, sides[i].paths, sides[i].n, sides[i].by_process, filter, live_at,
                           shallow, &sides[i].m, &sides[i].f, &sides[i].s, &sides[i].fed);
        }
    } else {
        rc = open_in_threads(jobs, sides, n, cmd, filter, live_at, shallow);
    }
    if (rc)
        for (size_t i = 0; i < n; i++) {
            if (sides[i].m || sides[i].f || sides[i].s)
                report_close(sides[i].m, sides[i].f, sides[i].s);
            sides[i].m = NULL;
            sides[i].f = NULL;
            sides[i].s = NULL;
        }
    return rc;
}

void report_close(mt_model *m, mt_filter *f, mt_selection *s)
{
    mt_selection_free(s);
    mt_filter_free(f);
    mt_model_free(m);
}
