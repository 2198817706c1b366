/*
 * cmd_symbolize.c - 'memtrace symbolize': give the raw frames of recorded
 * traces ("module+0xoffset") their functions, files, lines and inlined
 * frames, rewriting each trace in place (memtrace/symbolize.h). Also the
 * step `memtrace run` takes after the program ends (symbolize_run_traces).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "loctab.h"
#include "options.h"
#include "memtrace/present.h"
#include "memtrace/symbolize.h"
#include "trace_names.h"

static const char usage_head[] =
    "usage: memtrace symbolize [--debuginfod URL] [--no-name-cache] [--quiet] TRACE...\n"
    "\n"
    "Replace the raw frames of each TRACE (module+0xoffset, as the recorder\n"
    "writes them) with function names, source files and lines and inlined\n"
    "frames, read from the modules' debug information on this machine, and\n"
    "rewrite the trace in place (a new file renamed over the old one, with\n"
    "its owner, group and permissions, never set-user-ID or set-group-ID:\n"
    "an error leaves the trace as it was). 'memtrace run' does this by itself\n"
    "when the program ends. Reports and the viewer name raw frames as they\n"
    "read a trace when its binaries are on this machine; this command writes\n"
    "the names into the trace, to read it elsewhere or after the binaries\n"
    "change. Run it where the traced program ran, before its binaries change:\n"
    "a module whose build-id differs from the recorded one is not used.\n"
    "Frames that stay raw are still counted, under module+0xoffset; a\n"
    "stripped module without its debug symbols gets one warning saying how\n"
    "to get them (Debian: its -dbgsym package).\n"
    "\n"
    ;

static const char usage_tail[] =
    "\n"
    "Name cache: what a module's debug information gave is kept by its\n"
    "build-id in $XDG_CACHE_HOME/memtrace/names (default ~/.cache/memtrace/names;\n"
    "files of this user only, mode 0600, at most 8 MiB each), and a later trace\n"
    "of the same binary is named from there without reading its debug\n"
    "information again (the summary line says how many frames). A module\n"
    "without debug information here is named from its symbol table, kept in\n"
    "BUILDID.sym and read only while it still has none (and no --debuginfod).\n"
    "A file that is not yours alone or a link is refused, a damaged one\n"
    "ignored and written again, each with a warning. A module\n"
    "whose separate debug file is compressed (libc6-dbg) gets an inflated copy\n"
    "there too (BUILDID.debug, at most 256 MiB each, 1 GiB in all), read\n"
    "instead of it later: the same names without inflating it again.\n"
    "\n"
    "Environment: MEMTRACE_DEBUG_ROOT=DIR looks for separate debug files\n"
    "(DIR/.build-id/xx/yyyy.debug, debuglinks) under DIR, not /usr/lib/debug.\n"
    "MEMTRACE_NAME_CACHE=0 turns the name cache off (as --no-name-cache);\n"
    "MEMTRACE_NAME_CACHE=DIR (an absolute path) keeps it in DIR.\n"
    "\n"
    "Exit status: 0 when every trace was readable (symbolized or had nothing to\n"
    "do), 1 otherwise.\n"
    "\n"
    "Example:\n"
    "  LD_PRELOAD=libmemtrace.so MEMTRACE=app.ctf ./app && memtrace symbolize app.ctf\n";

/* The warnings of one command over its traces: what one trace said about
 * a module ("TRACE: MODULE has no debug information here ...") is not
 * said again for the next trace (the processes of one run share their
 * programs and libraries). */
struct warnings {
    const char *cmd;
    mt_namer *namer;        /* the traces' one namer: each module read once */
    const char *path;       /* the trace being symbolized */
    mt_pool pool;
    mt_strtab said;         /* messages less their "TRACE: " (a run's
                             * 60,000 modules: one look-up each) */
};

static void on_warning(void *ctx, const char *msg)
{
    struct warnings *w = ctx;
    size_t pl = strlen(w->path);
    if (strncmp(msg, w->path, pl) == 0 && msg[pl] == ':' && msg[pl + 1] == ' ') {
        const char *rest = msg + pl + 2;
        size_t before = w->said.count;
        if (mt_strtab_intern(&w->said, rest, strlen(rest)) && w->said.count == before)
            return;   /* said for an earlier trace (out of memory: said again) */
    }
    /* (module paths come from the trace: escaped) */
    fprintf(stderr, "memtrace %s: warning: ", w->cmd);
    mt_text_put(stderr, msg);
    fputc('\n', stderr);
}

/* The namer the traces of one command share (NULL when out of memory:
 * each trace makes its own). */
static void warnings_start(struct warnings *w, const char *cmd, const char *url)
{
    w->cmd = cmd;
    w->said.pool = &w->pool;
    mt_namer_options no = {.unchecked = 1,   /* as mt_symbolize_file's own */
                           .debuginfod_url = url,
                           .debug_root = trace_names_debug_root(),
                           .name_cache = trace_names_cache_dir(),
                           .on_warning = on_warning,
                           .warning_ctx = w};
    w->namer = mt_namer_new(&no);
}

static void warnings_free(struct warnings *w)
{
    mt_namer_free(w->namer);
    mt_strtab_free(&w->said);
    mt_pool_free(&w->pool);
}

static int symbolize_one(struct warnings *w, const char *path, int quiet, const char *url)
{
    const char *cmd = w->cmd;
    w->path = path;
    mt_symbolize_options o = {.on_warning = on_warning, .warning_ctx = w,
                              .debuginfod_url = url,
                              .debug_root = trace_names_debug_root(),
                              .name_cache = trace_names_cache_dir(),
                              .namer = w->namer};
    mt_symbolize_stats st;
    char *err = NULL;
    if (mt_symbolize_file(path, &o, &st, &err) != 0) {
        fprintf(stderr, "memtrace %s: %s\n", cmd, err ? err : "out of memory");
        free(err);
        return 1;
    }
    if (!quiet) {
        if (!st.rewritten)
            fprintf(stderr, "memtrace %s: %s: nothing to symbolize\n", cmd, path);
        else
        {
            char from[64] = "";
            if (st.cached)
                snprintf(from, sizeof from, ", %llu from the name cache",
                         (unsigned long long)st.cached);
            fprintf(stderr, "memtrace %s: %s: %llu of %llu frames named%s%s\n", cmd, path,
                    (unsigned long long)st.resolved, (unsigned long long)st.raw, from,
                    st.unresolved ? " (the others stay module+offset)" : "");
        }
    }
    return 0;
}

/* Is url an http:// or https:// URL with a host? */
static int is_server_url(const char *url)
{
    const char *rest = !strncmp(url, "http://", 7) ? url + 7 : !strncmp(url, "https://", 8) ? url + 8 : NULL;
    return rest && *rest && *rest != '/' && !strpbrk(url, " \t\n");
}

int cmd_symbolize(int argc, char **argv)
{
    const char *url = NULL;
    int quiet = 0, no_cache = 0;
    const opt_spec opts[] = {
        OPT("debuginfod", 0, OPT_STRING, &url, "URL",
            "also ask the debuginfod server at URL\n"
            "(http://host:port) by build-id for the debug information\n"
            "of modules here that have none (stripped binaries).\n"
            "Only this option makes memtrace ask a server:\n"
            "DEBUGINFOD_URLS in the environment is ignored"),
        OPT("no-name-cache", 0, OPT_FLAG, &no_cache, NULL,
            "neither read nor write the name cache (below)"),
        OPT("quiet", 'q', OPT_FLAG, &quiet, NULL, "no summary line per trace"),
    };
    const opt_command cmd = {"symbolize", usage_head, usage_tail, 20, opts,
                             sizeof opts / sizeof opts[0]};
    int first, rc = opt_parse(&cmd, argc, argv, &first);
    if (rc >= 0)
        return rc;
    if (first >= argc) {
        fprintf(stderr, "memtrace symbolize: expected a trace file\n");
        return opt_usage("symbolize");
    }
    if (no_cache)
        trace_names_cache_off();
    if (url && !is_server_url(url)) {
        fprintf(stderr, "memtrace symbolize: --debuginfod %s: not a server URL "
                        "(http://host:port)\n", url);
        return 2;
    }
    /* A server only when named here: never one from the environment
     * (libdw's own debuginfod client would take DEBUGINFOD_URLS). */
    unsetenv("DEBUGINFOD_URLS");
    rc = 0;
    struct warnings w = {0};
    warnings_start(&w, "symbolize", url);
    for (int i = first; i < argc; i++)
        rc |= symbolize_one(&w, argv[i], quiet, url);
    warnings_free(&w);
    return rc;
}

/* Every trace of a run (programs/run_traces.c lists them), quietly. */
int symbolize_run_traces(char **paths, size_t n)
{
    unsetenv("DEBUGINFOD_URLS");
    int rc = 0;
    struct warnings w = {0};
    warnings_start(&w, "run", NULL);
    for (size_t i = 0; i < n; i++)
        rc |= symbolize_one(&w, paths[i], 1, NULL);
    warnings_free(&w);
    return rc;
}
