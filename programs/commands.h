/*
 * commands.h - the CLI's subcommands. Each lives in programs/cmd_<name>.c,
 * takes argv as main does (argv[0] is the command's name) and returns the
 * process exit status: 0 ok, 1 error in the input or at run time, 2 usage.
 */
#ifndef MEMTRACE_COMMANDS_H
#define MEMTRACE_COMMANDS_H

int cmd_dump(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_recode(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_ctl(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_rss(int argc, char **argv);
int cmd_lifetimes(int argc, char **argv);
int cmd_leaks(int argc, char **argv);
int cmd_folded(int argc, char **argv);
int cmd_pprof(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);

/* 'memtrace info' on a pprof profile (info_profile.c): exit status. */
int info_profile(const char *path);

#include <time.h>
/* The symbolization step of `memtrace run` (cmd_symbolize.c): symbolizes FILE
 * and every FILE.<pid> written since start; 0 when all went well. */
int symbolize_run_traces(char **paths, size_t n);


#endif
