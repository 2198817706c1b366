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
} mt_symbolize_options;

typedef struct mt_symbolize_stats {
    uint64_t codes;        /* distinct codes described by the trace */
    uint64_t raw;          /* of which raw frames */
    uint64_t resolved;     /* raw frames now named (DWARF or ELF symbol) */
    uint64_t unresolved;   /* raw frames left as they were: see the warnings */
    int rewritten;         /* 1 if the file was replaced */
} mt_symbolize_stats;

/* Symbolizes the trace at path: writes a new trace beside it and renames it
 * over the original (same permissions), so a failure leaves the original
 * untouched. A trace without raw frames is left as it is. Modules are read
 * where the trace says they were loaded from; a module whose build-id (or,
 * without one, size) differs from the recorded fingerprint is not used.
 * Debug information is looked up locally (the modules themselves, their
 * directories, /usr/lib/debug); debuginfod servers are asked too when
 * DEBUGINFOD_URLS is set in the environment. Only regular ELF files are
 * read (a FIFO or a device named by a trace or a debuglink is skipped),
 * each module file once however its path is spelled. A trace still open in the process that writes
 * it (same host, its pid has the file open) is refused. Returns 0, or -1 with *error set to a malloc'd
 * message "FILE: reason". stats may be NULL. */
int mt_symbolize_file(const char *path, const mt_symbolize_options *opts,
                      mt_symbolize_stats *stats, char **error);


#ifdef __cplusplus
}
#endif
#endif
