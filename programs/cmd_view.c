/*
 * cmd_view.c - 'memtrace view': load a trace and serve the web viewer on it
 * (viewer/). Loading shows its progress on stderr; the URL goes to stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "options.h"
#include "trace_names.h"
#include "trace_cli.h"
#include "runfiles.h"
#include "units.h"
#include "memtrace/analyze.h"
#include "../viewer/compare.h"
#include "../viewer/viewer.h"
#include "memtrace/compare.h"

static const char view_head[] =
    "usage: memtrace view [OPTIONS] FILE\n"
    "       memtrace view [OPTIONS] BASE NEW           (compare two traces; two\n"
    "                                                   pieces of one rotated\n"
    "                                                   recording: viewed as one)\n"
    "       memtrace view [OPTIONS] --windows A B FILE (compare two windows)\n"
    "\n"
    "Load a trace and serve an interactive viewer on it: memory over time,\n"
    "filters, flame graphs, tables, call graph, histograms, treemap, leak\n"
    "suspects. Open the printed URL in a browser; the page works offline.\n"
    "Stop with Ctrl-C.\n"
    "\n"
    "FILE may be a pprof profile, gzipped or not: the per-stack views work,\n"
    "the views over time say they need a trace (docs/profiles-input.md).\n"
    "\n";
static const char view_tail[] =
    "\n"
    "Example:\n"
    "  memtrace view trace.ctf\n"
    "  Serving http://127.0.0.1:8080/  (press Ctrl-C to stop)\n";

/* Are a and b pieces of one rotated recording (docs/recorder.md): named
 * STEM.partNNNN with one STEM, written by one process? */
static int pieces_of_one_recording(const char *a, const char *b)
{
    size_t la, lb;
    if (!mt_runname_piece(a, &la) || !mt_runname_piece(b, &lb) || la != lb ||
        strncmp(a, b, la) != 0)
        return 0;
    uint64_t pid[2];
    const char *f[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        mt_reader_options ro = {.skip_backtraces = 1};
        mt_reader *r = mt_reader_open(f[i], &ro, NULL);
        if (!r)
            return 0;
        pid[i] = mt_reader_info(r)->pid;
        mt_reader_close(r);
    }
    return pid[0] == pid[1];
}

struct progress {
    int enabled;
    int tty;
    int last_pct;
    const char *file;
    uint64_t events;        /* once loaded */
    int folded;             /* served from folded models (a big trace) */
};

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    struct progress *p = ctx;
    if (!p->enabled || total == 0)
        return;
    int pct = (int)(done * 100 / total);
    if (pct > 100)
        pct = 100;
    if (pct == p->last_pct || (!p->tty && pct / 10 == p->last_pct / 10))
        return;
    p->last_pct = pct;
    if (p->tty)
        fprintf(stderr, "\rLoading %s: %3d%%", p->file, pct);
    else
        fprintf(stderr, "Loading %s: %d%%\n", p->file, pct);
}

/* Called from the viewer's loading thread once the trace is loaded. */
static void on_loaded(void *ctx, const mt_model *m, double seconds, const char *error)
{
    struct progress *p = ctx;
    (void)error;   /* printed by the viewer */
    if (p->enabled && p->tty && p->last_pct >= 0)
        fputc('\n', stderr);
    if (m)
        trace_names_note(stderr, "view");
    if (!m || !p->enabled)
        return;
    uint64_t allocs, promotes, collects;
    mt_model_event_counts(m, &allocs, &promotes, &collects);
    fprintf(stderr, "Loaded %s: %llu events in %.2f s%s\n", p->file,
            (unsigned long long)(allocs + promotes + collects), seconds,
            p->folded ? " (folded: a big trace)" : "");
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Several files, or compare mode: whole models, each of one or several
 * traces merged (mt_read). */
static int view_many(mt_viewer_options *vo, const char *const *bases, size_t n_bases,
                     const char *const *files, size_t n_files, const char *wa, const char *wb,
                     int by_process, int quiet)
{
    if (wa) {
        mt_diff_side sd;
        int ra, rb;
        char *err = NULL;
        if (n_bases || mt_diff_parse_window(wa, &sd, &ra, &err) < 0 ||
            mt_diff_parse_window(wb, &sd, &rb, &err) < 0 || ra != rb) {
            fprintf(stderr, "memtrace view: --windows: %s\n",
                    err ? err : n_bases ? "compares windows of one trace: no --base"
                                        : "two ranges (allocations) or two times (live memory)");
            free(err);
            return 2;
        }
    }
    char *err = NULL;
    char names[2][600];
    mt_model *m[2] = {NULL, NULL};
    double t0 = now_seconds();
    for (int side = 0; side < 2; side++) {
        const char *const *p = side ? files : bases;
        size_t n = side ? n_files : n_bases;
        if (!n)
            continue;
        snprintf(names[side], sizeof names[side], n > 1 ? "%s (+%zu more)" : "%s", p[0], n - 1);
        if (!quiet)
            fprintf(stderr, "Loading %s\n", names[side]);
        mt_read_request rq = {.paths = p, .n = n, .by_process = by_process,
                              .on_warning = trace_cli_warning, .warning_ctx = "view"};
        m[side] = mt_read(&rq, &err);
        if (!m[side]) {
            fprintf(stderr, "memtrace view: %s\n", err ? err : p[0]);
            free(err);
            mt_model_free(m[0]);
            return 1;
        }
    }
    trace_names_note(stderr, "view");
    vo->file = names[1];
    vo->trace_files = files; /* resident memory: every piece's */
    vo->n_trace_files = n_files;
    vo->load_seconds = now_seconds() - t0;
    int rc;
    if (n_bases || wa) {
        mt_viewer_compare_options co = {n_bases ? names[0] : names[1], wa, wb};
        rc = mt_viewer_serve_compare(m[0] ? m[0] : m[1], m[1], &co, vo, "memtrace view");
    } else {
        rc = mt_viewer_serve(m[1], vo, "memtrace view");
    }
    mt_model_free(m[0]);
    mt_model_free(m[1]);
    return rc;
}

#define MAX_ALLOW_HOSTS 32

/* The command line of view. */
typedef struct view_args {
    mt_viewer_options vo;
    const char *allow[MAX_ALLOW_HOSTS + 1];
    opt_list allow_list;
    uint64_t memory, fold_above;
    int quiet, raw, merge, by_process, no_index, windows;
    const char *win[2];          /* --windows A B */
    opt_list bases;
    const char *plumbing_file;
    const char *const *files;
    size_t n_files;
} view_args;

static int view_options(view_args *a, int argc, char **argv, int *first)
{
    const opt_spec opts[] = {
        OPT("port", 'p', OPT_INT, &a->vo.port, "N",
            "port to listen on (default 8080; if it is taken, the next\n"
            "free one up to N+99; 0 picks any free port)", .lo = 0, .hi = 65535),
        OPT("host", 'H', OPT_STRING, &a->vo.host, "ADDR",
            "numeric address to bind (default 127.0.0.1, this machine\n"
            "only). 0.0.0.0 (IPv4) or :: (IPv6 and IPv4) let other\n"
            "machines connect: anyone who can reach this one can then\n"
            "read the trace; the URLs it answers at are printed"),
        OPT("allow-host", 'A', OPT_LIST, &a->allow_list, "NAME[:PORT]",
            "\nalso answer requests addressed to NAME (a DNS name or a\n"
            "proxy in front of the viewer); loopback names, the bound\n"
            "address and, off loopback, the machine's own names and\n"
            "addresses are always accepted. Repeatable"),
        OPT("memory", 0, OPT_SIZE, &a->memory, "SIZE",
            "memory for answering requests, on top of the loaded\n"
            "trace (default 1G; 512M, 2GiB: docs/units.md): heavy requests\n"
            "beyond it wait, then get 503 (try again later)", .lo = 1 << 20),
        OPT("fold-above", 0, OPT_SIZE, &a->fold_above, "SIZE",
            "traces larger than SIZE (default 128M; 0: every\n"
            "trace) are served folded, in memory for the distinct\n"
            "stacks instead of every allocation: the curve is\n"
            "downsampled and each new filter is folded from an\n"
            "index of the allocations, written beside the trace\n"
            "(TRACE.mtidx; else in ~/.cache/memtrace) while it is\n"
            "first read and reused later (docs/viewer.md, \"Big\n"
            "traces\")"),
        OPT("no-index", 0, OPT_FLAG, &a->no_index, NULL,
            "big traces: no index; each new filter reads the trace\nagain"),
        OPT("quiet", 'q', OPT_FLAG, &a->quiet, NULL, "no progress while loading"),
        OPT("raw", 0, OPT_FLAG, &a->raw, NULL,
            "allocation sites are the innermost frames, plumbing\n"
            "included (default: the first frame outside operator new,\n"
            "std::, xmalloc, ...; docs/names.md)"),
        OPT("plumbing", 0, OPT_STRING, &a->plumbing_file, "FILE",
            "more plumbing patterns, one per line (also\n$MEMTRACE_PLUMBING)"),
        OPT("base", 'B', OPT_LIST, &a->bases, "FILE",
            "compare mode: the base trace (repeat for several:\n"
            "aggregated); the FILEs are the new side"),
        OPT("windows", 'w', OPT_PAIR, a->win, "A B",
            "compare two windows of one trace: ranges (0-2s 8s-10s)\n"
            "for allocations, times (2s 10s, peak end) for live memory", .given = &a->windows),
        OPT("merge", 'm', OPT_FLAG, &a->merge, NULL, "several FILEs (app.ctf app.ctf.*) viewed as one"),
        OPT("by-process", 0, OPT_FLAG, &a->by_process, NULL,
            "with --merge: an outermost frame per process"),
    };
    const opt_command cmd = {"view", view_head, view_tail, 19, opts, sizeof opts / sizeof opts[0]};
    return opt_parse(&cmd, argc, argv, first);
}

/* -1 to go on with *a set, else the exit status. */
static int view_parse(view_args *a, int argc, char **argv)
{
    int first, rc = view_options(a, argc, argv, &first);
    if (rc >= 0)
        return rc;
    a->vo.memory = (size_t)a->memory;
    const char *const *files = (const char *const *)argv + first;
    size_t nfiles = (size_t)(argc - first);
    if (nfiles == 2 && !a->bases.n && !a->merge && !a->windows) {
        /* say which of the two it is: pieces of one recording are the
         * recording again (as for every report), other traces compared */
        if (pieces_of_one_recording(files[0], files[1])) {
            a->merge = 1;
            fprintf(stderr, "memtrace view: %s and %s are pieces of one recording: viewed as "
                            "one (to compare them: --base %s %s)\n", files[0], files[1],
                    files[0], files[1]);
        } else {
            fprintf(stderr, "memtrace view: comparing %s (base) with %s (new); --merge views "
                            "them as one\n", files[0], files[1]);
            a->bases.v[a->bases.n++] = files[0];
            files++, nfiles--;
        }
    }
    if (nfiles < 1 || (nfiles > 1 && !a->merge && !a->bases.n)) {
        fprintf(stderr, "memtrace view: expected one trace file (two to compare; several: --merge or --base)\n");
        return opt_usage("view");
    }
    a->files = files;
    a->n_files = nfiles;
    a->vo.file = files[0];
    return -1;
}

/* The plumbing patterns ($MEMTRACE_PLUMBING, --plumbing; NULL with --raw):
 * 0, or 2 after the message. */
static int view_plumbing(view_args *a)
{
    mt_plumbing *pl = a->raw ? NULL : mt_plumbing_new(1);
    const char *pfiles[2] = {getenv("MEMTRACE_PLUMBING"), a->plumbing_file};
    for (int i = 0; pl && i < 2; i++) {
        char *perr = NULL;
        if (pfiles[i] && pfiles[i][0] && mt_plumbing_load(pl, pfiles[i], &perr) < 0) {
            fprintf(stderr, "memtrace view: %s%s\n", i ? "--plumbing " : "MEMTRACE_PLUMBING: ",
                    perr ? perr : "cannot read");
            free(perr);
            mt_plumbing_free(pl);
            return 2;
        }
    }
    a->vo.plumbing = pl;
    return 0;
}

/* One file, loaded by the viewer's own thread. */
static int view_one(view_args *a)
{
    /* a file that cannot be opened: said before the server starts (not
     * waiting for a pipe's writer) */
    int probe = open(a->vo.file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (probe < 0) {
        fprintf(stderr, "memtrace view: %s: %s\n", a->vo.file, strerror(errno));
        return 1;
    }
    close(probe);
    struct progress prog = {!a->quiet, isatty(2), -1, a->vo.file, 0, 0};
    mt_viewer_load load = {0};
    /* folded or whole: the read planner's choice, from --fold-above */
    mt_read_view_plan plan = mt_read_plan_view(a->vo.file, a->fold_above, a->no_index);
    load.folded = plan.folded;
    load.no_index = plan.no_index;
    prog.folded = load.folded;
    load.on_progress = on_progress;
    load.progress_ctx = &prog;
    load.on_loaded = on_loaded;
    return mt_viewer_serve_file(&a->vo, &load, "memtrace view");
}

int cmd_view(int argc, char **argv)
{
    const char *bases[argc > 0 ? argc : 1];
    view_args a = {.memory = MT_VIEWER_DEFAULT_MEMORY, .fold_above = MT_READ_FOLD_ABOVE,
                   .bases = {bases, 0, (size_t)(argc > 0 ? argc : 1)}};
    a.vo.host = "127.0.0.1";
    a.vo.port = 8080;
    a.vo.port_tries = 100;
    a.allow_list = (opt_list){a.allow, 0, MAX_ALLOW_HOSTS};
    a.vo.allow_hosts = a.allow;
    int rc = view_parse(&a, argc, argv);
    if (rc >= 0)
        return rc;
    if (view_plumbing(&a))
        return 2;
    if (a.bases.n || a.windows || a.merge || a.by_process)
        rc = view_many(&a.vo, a.bases.v, a.bases.n, a.files, a.n_files, a.win[0], a.win[1],
                       a.by_process, a.quiet);
    else
        rc = view_one(&a);
    mt_plumbing_free((mt_plumbing *)a.vo.plumbing);
    return rc;
}
