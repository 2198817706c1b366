/*
 * memtrace/symbolize.h - symbolization of a recorded trace, outside the
 * profiled process: raw frames "module+0xoffset" (docs/format.md, "Raw
 * frames") become function names, source files, lines and inlined frames
 * read from the modules' DWARF with libdw, and the trace is rewritten in
 * place. Used by `memtrace symbolize` and `memtrace run`
 * (docs/cli/symbolize.md). Linked into the CLI (libmemtrace-symbolize.a,
 * needs -ldw -lelf), never into a profiled program.
 *
 * One object: a symbolization of one trace file, done by one call.
 * Lifetimes: the error message is malloc'd, the caller frees it; warnings
 * are valid during their callback only.
 * Thread safety: call mt_symbolize_file from one thread at a time.
 * Stability: everything here is stable (no experimental part yet; one
 * would be left out by defining MEMTRACE_STABLE_ONLY, as in trace.h).
 */
#ifndef MEMTRACE_SYMBOLIZE_H
#define MEMTRACE_SYMBOLIZE_H

#include <stdint.h>

#include "memtrace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mt_symbolize_options {
    mt_warning_fn on_warning;   /* NULL: warnings go to stderr */
    void *warning_ctx;
    /* Added: a debuginfod server (http://host:port) asked by build-id for
     * the debug information of modules here that have none. NULL: local
     * files only (never DEBUGINFOD_URLS from the environment). */
    const char *debuginfod_url;
    /* Added: the directory of separate debug files (its .build-id/ tree,
     * debuglink and dwz names), an absolute path without ':', instead of
     * /usr/lib/debug. NULL: /usr/lib/debug. */
    const char *debug_root;
    /* Added: the name cache, a directory of the caller's own (made 0700
     * when missing), or NULL (none: the default). A module checked by its
     * build-id is first named from its file there (DIR/BUILDID in hex);
     * what its debug information gives for other frames is added to that
     * file afterwards, for modules with DWARF only. Files that are not the
     * caller's alone, links, and files over 8 MiB are refused, a corrupt
     * file is ignored (and rewritten), each with a warning; at most 4096
     * files. `memtrace run` and `memtrace symbolize` use
     * $XDG_CACHE_HOME/memtrace/names (docs/cli/symbolize.md). */
    const char *name_cache;
    /* Added: the namer to use (below), shared by the traces of one run so
     * that each module's debug information is read once for them all; its
     * own options apply (the three above are then unused; `unchecked`
     * = 1 names as mt_symbolize_file's own namer does). NULL: one of its
     * own for this call. */
    struct mt_namer *namer;
} mt_symbolize_options;

typedef struct mt_symbolize_stats {
    uint64_t codes;        /* distinct codes described by the trace */
    uint64_t raw;          /* of which raw frames */
    uint64_t resolved;     /* raw frames now named (DWARF or ELF symbol) */
    uint64_t unresolved;   /* raw frames left as they were: see the warnings */
    int rewritten;         /* 1 if the file was replaced */
    uint64_t cached;       /* added: of the resolved, named from the name cache */
} mt_symbolize_stats;

/* Symbolizes the trace at path: writes a new trace beside it and renames it
 * over the original (same permissions), so a failure leaves the original
 * untouched. A trace without raw frames is left as it is. Modules are read
 * where the trace says they were loaded from; a module whose build-id (or,
 * without one, size) differs from the recorded fingerprint is not used.
 * Debug information is looked up locally (the modules themselves, their
 * directories, /usr/lib/debug or opts->debug_root), and on
 * opts->debuginfod_url when set.
 * Only regular ELF files are
 * read (a FIFO or a device named by a trace or a debuglink is skipped),
 * each module file once however its path is spelled. A trace still open in the process that writes
 * it (same host, its pid has the file open) is refused. Returns 0, or -1 with *error set to a malloc'd
 * message "FILE: reason". stats may be NULL. */
int mt_symbolize_file(const char *path, const mt_symbolize_options *opts,
                      mt_symbolize_stats *stats, char **error);

/* ------------------------------------------------------------------------ */
/* Names as a trace is read                                                 */

/* A namer gives raw frames their names from the modules on this machine,
 * for readers (mt_reader_set_namer) and the rewriter alike. A module is
 * used only if its fingerprint (build-id, else size) is the recorded one;
 * its debug information is loaded once, and each frame looked up once,
 * for the life of the namer. Safe to use from several threads. */
typedef struct mt_namer mt_namer;

typedef struct mt_namer_options {
    /* nonzero: also use a module for frames recorded without a fingerprint
     * (0: unknown), unchecked (what `memtrace symbolize` does when asked).
     * 0: such frames stay raw. */
    int unchecked;
    const char *debuginfod_url;     /* as in mt_symbolize_options */
    mt_warning_fn on_warning;       /* debuginfod's errors; NULL: stderr */
    void *warning_ctx;
    const char *debug_root;         /* added; as in mt_symbolize_options */
    const char *name_cache;         /* added; as in mt_symbolize_options */
} mt_namer_options;

mt_namer *mt_namer_new(const mt_namer_options *opts);
void mt_namer_free(mt_namer *nm);

/* An mt_name_fn (ctx: the namer): in[0..n) with each raw frame replaced by
 * what its module says (a chain when inlined), the others kept, into out;
 * the count, or 0 when no raw frame got a name. Strings stay valid until
 * the namer is freed. */
size_t mt_namer_name(void *namer, const char *trace, const mt_location *in, size_t n,
                     mt_location *out, size_t max);

/* Why the frames of a module stay raw. */
typedef enum mt_namer_why {
    MT_NAMER_MISSING = 1,   /* no readable ELF file at its path */
    MT_NAMER_CHANGED = 2,   /* the file there is not the one that was loaded */
    /* added: the module is used, but it has no debug information here and
     * some of its frames have no ELF symbol either (a stripped binary
     * without its debug symbols); the C runtime's own modules (libc, the
     * dynamic loader, libgcc_s, libstdc++), whose unnamed frames are
     * start-up and thread-start code, are not listed */
    MT_NAMER_NO_DEBUG = 3
} mt_namer_why;

typedef struct mt_namer_problem {
    const char *module;     /* its path, as the trace gives it */
    const char *trace;      /* the first trace that named it */
    mt_namer_why why;
} mt_namer_problem;

/* The next module that could not be used, or that left frames unnamed
 * (MT_NAMER_NO_DEBUG), and was not returned before:
 * 1 with *p set (strings valid until the namer is freed), else 0. */
int mt_namer_next_problem(mt_namer *nm, mt_namer_problem *p);


#ifdef __cplusplus
}
#endif
#endif
