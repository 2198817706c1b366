/*
 * launch.h - the launcher of 'memtrace run': where the recorder's library
 * is, whether a trace can be written where asked, and the command started
 * with the recorder preloaded (LD_PRELOAD=libmemtrace.so, MEMTRACE=FILE
 * made absolute, MEMTRACE_RATE and the other settings the recorder reads
 * from its environment: docs/recorder.md), then waited for as a shell
 * waits for a foreground job. The reports of a run are not here
 * (programs/cmd_run.c, run_*.c). Compiled into the CLI alone, which never
 * links the recorder: it only finds libmemtrace.so and sets the
 * environment. Not thread-safe (signal dispositions, fork).
 */
#ifndef MEMTRACE_LAUNCH_H
#define MEMTRACE_LAUNCH_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* The recorder's library: $MEMTRACE_LIB, else beside the memtrace binary
 * (a build tree), in ../lib, ../lib64 or ../lib/<multiarch> from it (an
 * install, moved or not), else in the LIBDIR it was built for; under the
 * bare name (a build, `make install`) or the soname (Debian's libmemtrace0,
 * which has no bare name without libmemtrace-dev). 0 with its path in out,
 * or -1. Shared with 'memtrace attach'. */
int launch_find_library(char *out, size_t len);

/* Why FILE cannot be the run's trace, or NULL if it can: checked before
 * the command starts, with the rules the recorder applies (no symbolic
 * link, a regular file of ours) and, when more files may follow beside it
 * (follow: FILE.PID, pieces), a directory we can create files in. The
 * reason may be written into buf. */
const char *launch_output_problem(const char *file, int follow, char *buf, size_t cap);
/* Why no file can be created in dir, or NULL. */
const char *launch_dir_problem(const char *dir, char *buf, size_t cap);

/* What the command is started with. Strings NULL (numbers 0): the
 * recorder's default (the environment variable is left as it is, but for
 * rotation's, which are cleared). */
typedef struct launch_spec {
    char *const *argv;          /* the command, NULL-ended; argv[0] looked up in PATH */
    const char *library;        /* libmemtrace.so, absolute */
    const char *output;         /* the trace; NULL: the default name (runfiles.h) */
    const char *cwd;            /* what a relative output is relative to ("": as given) */
    double rate;                /* samples per byte */
    int unwind;                 /* MEMTRACE_UNWIND: a mode of recconf.h, 0 the default */
    int depth;                  /* MEMTRACE_DEPTH */
    int paused;                 /* MEMTRACE_PAUSED=1: starts dormant */
    const char *signame;        /* MEMTRACE_SIGNAL */
    const char *duration;       /* MEMTRACE_DURATION */
    const char *rotate_size, *rotate_time, *keep;   /* MEMTRACE_ROTATE_*, MEMTRACE_KEEP */
    int leaks;                  /* MEMTRACE_LEAKS=1 */
    int follow;                 /* 0: MEMTRACE_FOLLOW=0 (children not recorded) */
} launch_spec;

/* Starts the command: its pid, with the trace's name (it may depend on
 * the pid) in file; or -1 after a message "memtrace run: ...". When the
 * command cannot be executed the child says so and exits 127 (not found)
 * or 126. */
pid_t launch_start(const launch_spec *s, char *file, size_t cap);

/* ^C is for the command: SIGINT and SIGQUIT ignored from launch_fg_begin
 * to launch_fg_end, which puts them back as they were. */
typedef struct launch_fg {
    struct sigaction intr, quit;
} launch_fg;
void launch_fg_begin(launch_fg *fg);
void launch_fg_end(const launch_fg *fg);

/* waitpid through EINTR: 0 with *status set, or -1. */
int launch_wait(pid_t pid, int *status);

#endif
