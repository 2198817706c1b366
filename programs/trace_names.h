/*
 * trace_names.h - names for raw frames as traces are read (trace_names.c).
 */
#ifndef MEMTRACE_TRACE_NAMES_H
#define MEMTRACE_TRACE_NAMES_H

#include <stdio.h>

/* From now on, every reader of this process names raw frames from the
 * binaries on this machine whose fingerprint is the recorded one; clears
 * DEBUGINFOD_URLS (nothing is fetched). Called by main before a command
 * that reports or serves the viewer. */
void trace_names_start(void);

/* MEMTRACE_DEBUG_ROOT: the directory of separate debug files to use
 * instead of /usr/lib/debug, or NULL (unset, empty, or not an absolute
 * path without ':', which is said once on stderr). */
const char *trace_names_debug_root(void);

/* The name cache of `memtrace run` and `memtrace symbolize`: NULL when
 * off (trace_names_cache_off, MEMTRACE_NAME_CACHE=0), else
 * MEMTRACE_NAME_CACHE when it is an absolute path, else
 * $XDG_CACHE_HOME/memtrace/names, else $HOME/.cache/memtrace/names. */
const char *trace_names_cache_dir(void);
void trace_names_cache_off(void);   /* --no-name-cache */

/* Prints "memtrace CMD: note: ..." for each module whose frames stayed raw
 * (missing here, changed, or stripped without its debug symbols) not noted
 * before, and what to do; 1 if it printed anything. */
int trace_names_note(FILE *out, const char *cmd);

#endif
