/*
 * cmd_view.c - 'memtrace view': load a trace and serve the web viewer on it
 * (viewer/). Loading shows its progress on stderr; the URL goes to stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "trace_names.h"
#include "runfiles.h"
#include "units.h"
#include "memtrace/analyze.h"
#include "../viewer/compare.h"
#include "../viewer/viewer.h"
#include "memtrace/compare.h"

static const char usage[] =
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
    "\n"
    "  -p, --port N     port to listen on (default 8080; if it is taken, the next\n"
    "                   free one up to N+99; 0 picks any free port)\n"
    "  -H, --host ADDR  numeric address to bind (default 127.0.0.1, this machine\n"
    "                   only). 0.0.0.0 (IPv4) or :: (IPv6 and IPv4) let other\n"
    "                   machines connect: anyone who can reach this one can then\n"
    "                   read the trace; the URLs it answers at are printed\n"
    "  -A, --allow-host NAME[:PORT]\n"
    "                   also answer requests addressed to NAME (a DNS name or a\n"
    "                   proxy in front of the viewer); loopback names, the bound\n"
    "                   address and, off loopback, the machine's own names and\n"
    "                   addresses are always accepted. Repeatable\n"
    "      --memory SIZE  memory for answering requests, on top of the loaded\n"
    "                   trace (default 1G; 512M, 2GiB: docs/units.md): heavy requests\n"
    "                   beyond it wait, then get 503 (try again later)\n"
    "      --fold-above SIZE  traces larger than SIZE (default 128M; 0: every\n"
    "                   trace) are served folded, in memory for the distinct\n"
    "                   stacks instead of every allocation: the curve is\n"
    "                   downsampled and each new filter is folded from an\n"
    "                   index of the allocations, written beside the trace\n"
    "                   (TRACE.mtidx; else in ~/.cache/memtrace) while it is\n"
    "                   first read and reused later (docs/viewer.md, \"Big\n"
    "                   traces\")\n"
    "      --no-index   big traces: no index; each new filter reads the trace\n"
    "                   again\n"
    "  -q, --quiet      no progress while loading\n"
    "      --raw        allocation sites are the innermost frames, plumbing\n"
    "                   included (default: the first frame outside operator new,\n"
    "                   std::, xmalloc, ...; docs/names.md)\n"
    "      --plumbing FILE  more plumbing patterns, one per line (also\n"
    "                   $MEMTRACE_PLUMBING)\n"
    "  -B, --base FILE  compare mode: the base trace (repeat for several:\n"
    "                   aggregated); the FILEs are the new side\n"
    "  -w, --windows A B  compare two windows of one trace: ranges (0-2s 8s-10s)\n"
    "                   for allocations, times (2s 10s, peak end) for live memory\n"
    "  -m, --merge      several FILEs (app.ctf app.ctf.*) viewed as one\n"
    "      --by-process with --merge: an outermost frame per process\n"
    "  -h, --help       this help\n"
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

/* A size (lib/common/units.h) as a size_t: bytes, or 0 when malformed. */
static size_t parse_size(const char *s)
{
    uint64_t v;
    if (mt_units_size(s, &v) != MT_UNITS_OK || v > SIZE_MAX)
        return 0;
    return (size_t)v;
}

#define MAX_ALLOW_HOSTS 32

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
        mt_read_request rq = {.paths = p, .n = n, .by_process = by_process};
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

int cmd_view(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"port", required_argument, NULL, 'p'},
        {"host", required_argument, NULL, 'H'},
        {"allow-host", required_argument, NULL, 'A'},
        {"memory", required_argument, NULL, 'M'},
        {"fold-above", required_argument, NULL, 'F'},
        {"no-index", no_argument, NULL, 'I'},
        {"quiet", no_argument, NULL, 'q'},
        {"raw", no_argument, NULL, 'R'},
        {"plumbing", required_argument, NULL, 'P'},
        {"base", required_argument, NULL, 'B'},
        {"windows", required_argument, NULL, 'w'},
        {"merge", no_argument, NULL, 'm'},
        {"by-process", no_argument, NULL, 'Y'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const char *allow[MAX_ALLOW_HOSTS + 1];
    size_t n_allow = 0;
    mt_viewer_options vo = {0};
    vo.host = "127.0.0.1";
    vo.port = 8080;
    vo.port_tries = 100;
    vo.allow_hosts = allow;
    vo.memory = MT_VIEWER_DEFAULT_MEMORY;
    int quiet = 0, raw = 0, c, merge = 0, by_process = 0, no_index = 0;
    uint64_t fold_above = (uint64_t)128 << 20;
    const char *bases[argc > 0 ? argc : 1], *wa = NULL, *wb = NULL;
    size_t n_bases = 0;
    const char *plumbing_file = NULL;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "p:H:A:qhB:w:m", longopts, NULL)) != -1) {
        switch (c) {
        case 'p': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*optarg == 0 || *end || v < 0 || v > 65535) {
                fprintf(stderr, "memtrace view: --port: expected a number 0..65535, got '%s'\n",
                        optarg);
                return 2;
            }
            vo.port = (int)v;
            break;
        }
        case 'H':
            vo.host = optarg;
            break;
        case 'A':
            if (n_allow == MAX_ALLOW_HOSTS) {
                fprintf(stderr, "memtrace view: --allow-host: at most %d names\n",
                        MAX_ALLOW_HOSTS);
                return 2;
            }
            allow[n_allow++] = optarg;
            break;
        case 'M':
            vo.memory = parse_size(optarg);
            if (vo.memory < ((size_t)1 << 20)) {
                fprintf(stderr, "memtrace view: --memory: expected a size of at least 1M "
                                "(e.g. 512M, 2G), got '%s'\n", optarg);
                return 2;
            }
            break;
        case 'F':
            fold_above = strcmp(optarg, "0") ? parse_size(optarg) : 0;
            if (strcmp(optarg, "0") && !fold_above) {
                fprintf(stderr, "memtrace view: --fold-above: expected a size (e.g. 0, 512M, "
                                "2G), got '%s'\n", optarg);
                return 2;
            }
            break;
        case 'q':
            quiet = 1;
            break;
        case 'I':
            no_index = 1;
            break;
        case 'R':
            raw = 1;
            break;
        case 'P':
            plumbing_file = optarg;
            break;
        case 'B':
            bases[n_bases++] = optarg;
            break;
        case 'w':
            if (optind >= argc) {
                fprintf(stderr, "memtrace view: --windows takes two windows: --windows A B FILE\n");
                return 2;
            }
            wa = optarg;
            wb = argv[optind++];
            break;
        case 'm':
            merge = 1;
            break;
        case 'Y':
            by_process = 1;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            if (optopt)
                fprintf(stderr, "memtrace view: option -%c needs an argument or is unknown\n",
                        optopt);
            else
                fprintf(stderr, "memtrace view: unknown option '%s'\n", argv[optind - 1]);
            fputs(usage, stderr);
            return 2;
        }
    }
    int nfiles = argc - optind;
    if (nfiles == 2 && !n_bases && !merge && !wa) {
        /* say which of the two it is: pieces of one recording are the
         * recording again (as for every report), other traces compared */
        if (pieces_of_one_recording(argv[optind], argv[optind + 1])) {
            merge = 1;
            fprintf(stderr, "memtrace view: %s and %s are pieces of one recording: viewed as "
                            "one (to compare them: --base %s %s)\n", argv[optind],
                    argv[optind + 1], argv[optind], argv[optind + 1]);
        } else {
            fprintf(stderr, "memtrace view: comparing %s (base) with %s (new); --merge views "
                            "them as one\n", argv[optind], argv[optind + 1]);
            bases[n_bases++] = argv[optind++], nfiles--;
        }
    }
    if (nfiles < 1 || (nfiles > 1 && !merge && !n_bases)) {
        fprintf(stderr, "memtrace view: expected one trace file (two to compare; several: --merge or --base)\n");
        fputs(usage, stderr);
        return 2;
    }
    vo.file = argv[optind];
    mt_plumbing *pl = raw ? NULL : mt_plumbing_new(1);
    const char *pfiles[2] = {getenv("MEMTRACE_PLUMBING"), plumbing_file};
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
    vo.plumbing = pl;
    if (n_bases || wa || merge || by_process) {
        int rc = view_many(&vo, bases, n_bases, (const char *const *)argv + optind,
                           (size_t)nfiles, wa, wb, by_process, quiet);
        mt_plumbing_free(pl);
        return rc;
    }

    /* a file that cannot be opened: said before the server starts (not
     * waiting for a pipe's writer) */
    int probe = open(vo.file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (probe < 0) {
        fprintf(stderr, "memtrace view: %s: %s\n", vo.file, strerror(errno));
        mt_plumbing_free(pl);
        return 1;
    }
    close(probe);
    struct progress prog = {!quiet, isatty(2), -1, vo.file, 0, 0};
    struct stat st;
    mt_viewer_load load = {0};
    /* folded: read again for each filter, so a regular file (not a pipe) */
    load.folded = stat(vo.file, &st) == 0 && S_ISREG(st.st_mode) &&
                  (uint64_t)st.st_size > fold_above;
    load.no_index = no_index;
    if (mt_path_is_profile(vo.file)) {
        /* a pprof profile: per-stack views only, read as a folded model */
        load.folded = 1;
        load.no_index = 1;
    }
    prog.folded = load.folded;
    load.on_progress = on_progress;
    load.progress_ctx = &prog;
    load.on_loaded = on_loaded;
    int rc = mt_viewer_serve_file(&vo, &load, "memtrace view");
    mt_plumbing_free(pl);
    return rc;
}
