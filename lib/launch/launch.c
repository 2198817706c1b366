/*
 * launch.c - the command started with the recorder preloaded, and waited
 * for (launch.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"
#include "recconf.h"
#include "runfiles.h"

/* In the child: what the recorder is told about on/off control
 * (lib/record/control.c). */
static void set_control_env(int paused, const char *signame, const char *duration)
{
    if (paused)
        setenv("MEMTRACE_PAUSED", "1", 1);
    if (signame)
        setenv("MEMTRACE_SIGNAL", signame, 1);
    if (duration)
        setenv("MEMTRACE_DURATION", duration, 1);
}

/* In the child: rotation of long recordings (lib/record/tracer.c). */
static void set_rotation_env(const char *size, const char *time, const char *keep)
{
    const char *name[3] = { "MEMTRACE_ROTATE_SIZE", "MEMTRACE_ROTATE_TIME", "MEMTRACE_KEEP" };
    const char *val[3] = { size, time, keep };
    for (int i = 0; i < 3; i++) {
        if (val[i])
            setenv(name[i], val[i], 1);
        else
            unsetenv(name[i]);
    }
}

/* In the child: the recorder's environment, with FILE made absolute so
 * that every process of the run writes beside it whatever directory it
 * runs in. */
static void set_recorder_env(const launch_spec *s, const char *file)
{
    char abs[2 * PATH_MAX + 64];
    if (file[0] != '/' && s->cwd && s->cwd[0])
        snprintf(abs, sizeof abs, "%s%s%s", s->cwd, strcmp(s->cwd, "/") ? "/" : "", file);
    else
        snprintf(abs, sizeof abs, "%s", file);
    char rs[64];
    snprintf(rs, sizeof rs, "%.17g", s->rate);
    const char *old = getenv("LD_PRELOAD");
    size_t plen = strlen(s->library) + (old ? strlen(old) + 2 : 1);
    char *preload = malloc(plen);
    if (!preload)
        _exit(127);
    snprintf(preload, plen, "%s%s%s", s->library, old && *old ? ":" : "", old ? old : "");
    setenv("LD_PRELOAD", preload, 1);
    /* the recorder's configuration as its variables (recconf.h) */
    setenv(mt_recconf_env(MT_RC_FILE), abs, 1);
    setenv(mt_recconf_env(MT_RC_RATE), rs, 1);
    unsetenv("MEMTRACE_ROOT");
    if (s->unwind)
        setenv(mt_recconf_env(MT_RC_UNWIND), mt_recconf_unwind_name(s->unwind), 1);
    if (s->depth) {
        char ds[32];
        snprintf(ds, sizeof ds, "%d", s->depth);
        setenv(mt_recconf_env(MT_RC_DEPTH), ds, 1);
    }
    set_control_env(s->paused, s->signame, s->duration);
    set_rotation_env(s->rotate_size, s->rotate_time, s->keep);
    if (s->leaks)
        setenv(mt_recconf_env(MT_RC_LEAKS), "1", 1);
    if (!s->follow)
        setenv("MEMTRACE_FOLLOW", "0", 1);
    else
        unsetenv("MEMTRACE_FOLLOW");
}

/* The child: tells the parent the file's name on fd, then executes. */
static void child(const launch_spec *s, int fd)
{
    char file[PATH_MAX + 64];
    if (s->output) {
        snprintf(file, sizeof file, "%s", s->output);
    } else {
        const char *b = strrchr(s->argv[0], '/');
        mt_runname_default(file, sizeof file, b ? b + 1 : s->argv[0], (long)getpid());
    }
    set_recorder_env(s, file);
    /* Tell the parent the file name (it may depend on our pid). */
    ssize_t w = write(fd, file, strlen(file));
    (void)w;
    close(fd);
    execvp(s->argv[0], s->argv);
    int e = errno;
    fprintf(stderr, "memtrace run: %s: %s\n", s->argv[0], strerror(e));
    _exit(e == ENOENT ? 127 : 126);
}

pid_t launch_start(const launch_spec *s, char *file, size_t cap)
{
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        perror("memtrace run: pipe");
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("memtrace run: fork");
        close(pipefd[0]);
        close(pipefd[1]);
        return -1;
    }
    if (pid == 0) {
        close(pipefd[0]);
        child(s, pipefd[1]);
    }
    close(pipefd[1]);
    size_t flen = 0;
    ssize_t n;
    while (flen < cap - 1 && (n = read(pipefd[0], file + flen, cap - 1 - flen)) > 0)
        flen += (size_t)n;
    file[flen] = '\0';
    close(pipefd[0]);
    return pid;
}

void launch_fg_begin(launch_fg *fg)
{
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ign, &fg->intr);
    sigaction(SIGQUIT, &ign, &fg->quit);
}

void launch_fg_end(const launch_fg *fg)
{
    sigaction(SIGINT, &fg->intr, NULL);
    sigaction(SIGQUIT, &fg->quit, NULL);
}

int launch_wait(pid_t pid, int *status)
{
    pid_t r;
    while ((r = waitpid(pid, status, 0)) < 0 && errno == EINTR)
        ;
    return r < 0 ? -1 : 0;
}
