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
int cmd_top(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_lifetimes(int argc, char **argv);
int cmd_folded(int argc, char **argv);
int cmd_pprof(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_view(int argc, char **argv);

#endif
