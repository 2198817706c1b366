/*
 * trace_names.c - names for the raw frames of traces that were never
 * symbolized (bare LD_PRELOAD, a killed `memtrace run`), given as the
 * report commands and the viewer read them: one namer (lib/symbolize,
 * names.c) for the process, set as every reader's (mt_reader_set_namer),
 * and the notes that say which modules could not be used; and where
 * `memtrace run` and `memtrace symbolize` keep their name cache.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/present.h"
#include "memtrace/symbolize.h"
#include "trace_names.h"

static mt_namer *namer;
static char *env_server;   /* the first of DEBUGINFOD_URLS, for the notes only */

const char *trace_names_debug_root(void)
{
    static int warned;
    const char *root = getenv("MEMTRACE_DEBUG_ROOT");
    if (!root || !*root)
        return NULL;
    if (root[0] != '/' || strchr(root, ':')) {
        if (!warned++) {
            fputs("memtrace: warning: MEMTRACE_DEBUG_ROOT=", stderr);
            mt_text_put(stderr, root);
            fputs(" ignored: not an absolute path without ':'\n", stderr);
        }
        return NULL;
    }
    return root;
}

static int cache_off;

void trace_names_cache_off(void)
{
    cache_off = 1;
}

const char *trace_names_cache_dir(void)
{
    static char dir[4096];
    static int warned;
    const char *env = getenv("MEMTRACE_NAME_CACHE");
    if (cache_off || (env && !strcmp(env, "0")))
        return NULL;
    if (env && *env) {
        if (env[0] == '/' && strlen(env) < sizeof dir - 64)
            return env;
        if (!warned++) {
            fputs("memtrace: warning: MEMTRACE_NAME_CACHE=", stderr);
            mt_text_put(stderr, env);
            fputs(" ignored: neither 0 nor an absolute path\n", stderr);
        }
    }
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (xdg && xdg[0] == '/')   /* (a relative one is to be ignored: XDG's rule) */
        n = snprintf(dir, sizeof dir, "%s/memtrace/names", xdg);
    else if (home && home[0] == '/')
        n = snprintf(dir, sizeof dir, "%s/.cache/memtrace/names", home);
    else
        return NULL;
    return n > 0 && (size_t)n < sizeof dir ? dir : NULL;
}

void trace_names_start(void)
{
    /* No server is ever asked while reading: libdw's own debuginfod
     * client would take one from the environment. */
    const char *urls = getenv("DEBUGINFOD_URLS");
    if (urls && !env_server) {
        urls += strspn(urls, " \t");
        env_server = strndup(urls, strcspn(urls, " \t"));
    }
    unsetenv("DEBUGINFOD_URLS");
    if (namer)
        return;
    mt_namer_options o = {0};   /* checked modules only, local files only */
    o.debug_root = trace_names_debug_root();
    namer = mt_namer_new(&o);
    if (namer)
        mt_reader_set_namer(mt_namer_name, namer);
}

int trace_names_note(FILE *out, const char *cmd)
{
    if (!namer)
        return 0;
    mt_namer_problem p;
    const char *trace = NULL;
    int any = 0;
    while (mt_namer_next_problem(namer, &p)) {
        any = 1;
        fprintf(out, "memtrace %s: note: frames in ", cmd);
        mt_text_put(out, p.module);
        if (p.why == MT_NAMER_NO_DEBUG) {
            fputs(" without a symbol stay module+0xoffset: it has no debug information "
                  "here; install its debug symbols (Debian: the -dbgsym package that "
                  "'find-dbgsym-packages ", out);
            mt_text_put(out, p.module);
            fprintf(out, "' names) or run 'memtrace symbolize --debuginfod %s ",
                    env_server && *env_server ? env_server : "URL");
            mt_text_put(out, p.trace);
            fputs("'\n", out);
            continue;
        }
        if (p.why == MT_NAMER_CHANGED) {
            fputs(" stay module+0xoffset: the file there is not the one ", out);
            mt_text_put(out, p.trace);
            fputs(" was recorded with (build-id or size differs: rebuilt, or another "
                  "machine's)\n", out);
        } else {
            fputs(" stay module+0xoffset: no such file on this machine\n", out);
        }
        if (!trace)
            trace = p.trace;
    }
    if (!trace)
        return any;
    fprintf(out, "memtrace %s: note: run 'memtrace symbolize ", cmd);
    mt_text_put(out, trace);
    fputs("' on the machine where it was recorded, before its binaries change\n", out);
    return 1;
}
