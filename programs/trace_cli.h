/*
 * trace_cli.h - what the codec commands (dump, info) share: the
 * "[--help] FILE" command line, and opening FILE (or - for stdin) with
 * warnings and errors printed in the CLI's style.
 */
#ifndef MEMTRACE_TRACE_CLI_H
#define MEMTRACE_TRACE_CLI_H

#include "memtrace/trace.h"

/* Parses "CMD [--help] FILE" (options.h; head and tail: the --help text
 * around the options), and --raw-frames when raw_frames is not NULL
 * (*raw_frames set to 1 when given). Returns -1 with *path set when the
 * command should go on, else the exit status (0 after --help, 2 on a usage
 * error). */
int trace_cli_args(const char *cmd, int argc, char **argv, const char *head, const char *tail,
                   const char **path, int *raw_frames);

/* A warning of the codec or the analysis library (mt_warning_fn) printed
 * as "memtrace CMD: warning: MESSAGE" on stderr, its text escaped (it may
 * quote the trace); ctx is CMD, a string that outlives the reading. */
void trace_cli_warning(void *ctx, const char *msg);

/* Opens path ("-" = standard input) with opts (its warning handler is set to
 * print "memtrace CMD: warning: ..."). On failure prints "memtrace CMD:
 * FILE: offset N: reason" and returns NULL. cmd must outlive the reader. */
mt_reader *trace_cli_open(const char *cmd, const char *path, mt_reader_options *opts);

#endif
