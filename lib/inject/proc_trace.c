/*
 * proc_trace.c - a running process's open files (see proc_trace.h), read
 * from /proc/PID/fd: the one walk over them, and which trace is among them.
 */
#include "proc_trace.h"
#include "runfiles.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Calls fn(dir, name, ctx) for each numbered entry of the directory
 * /proc/PID/SUB (descriptors, threads) until fn returns nonzero; that
 * value, 0, or -1 if the directory cannot be read. */
static int each_numbered(int pid, const char *sub, int (*fn)(const char *dir, const char *name,
                                                               void *ctx), void *ctx)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/%s", pid, sub);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    int r = 0;
    while (!r && (e = readdir(d)) != NULL)
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
            r = fn(dir, e->d_name, ctx);
    closedir(d);
    return r;
}

struct fd_visit {
    int (*fn)(const char *fd_path, const char *target, void *ctx);
    void *ctx;
};

static int visit_fd(const char *dir, const char *name, void *ctx)
{
    const struct fd_visit *v = ctx;
    char p[384], link[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    ssize_t n = readlink(p, link, sizeof link - 1);
    if (n <= 0)
        return 0;
    link[n] = '\0';
    return v->fn(p, link, v->ctx);
}

int proc_fd_each(int pid, int (*fn)(const char *fd_path, const char *target, void *ctx),
                 void *ctx)
{
    struct fd_visit v = { fn, ctx };
    return each_numbered(pid, "fd", visit_fd, &v);
}

struct task_visit {
    int (*fn)(int tid, void *ctx);
    void *ctx;
};

static int visit_task(const char *dir, const char *name, void *ctx)
{
    const struct task_visit *v = ctx;
    (void)dir;
    return v->fn(atoi(name), v->ctx);
}

int proc_task_each(int pid, int (*fn)(int tid, void *ctx), void *ctx)
{
    struct task_visit v = { fn, ctx };
    return each_numbered(pid, "task", visit_task, &v);
}

struct trace_query {
    int pid;
    const char *base;
    char *out;
    size_t cap;
};

static int is_trace(const char *fd_path, const char *link, void *ctx)
{
    (void)fd_path;
    const struct trace_query *q = ctx;
    /* FILE, FILE-NNNN[.PID], or this process's FILE.PID[.K], each possibly
     * a piece (runfiles.h) */
    mt_runname n;
    if (!mt_runname_parse(q->base, link, &n) || n.kind != MT_RUNFILE_TRACE ||
        (n.pid && !n.period && n.pid != q->pid))
        return 0;
    snprintf(q->out, q->cap, "%s", link);
    return 1;
}

/* The trace the process has open, named after base (FILE, FILE-NNNN or
 * FILE-NNNN.PID; FILE.PID or FILE.PID.K, what the first process writes
 * once it has exec'd another program, as a wrapper such as env or a pyenv
 * shim does; each possibly with .partNNNN for a piece of a rotated
 * recording): 1 and its path in out, or 0. */
int proc_open_trace(int pid, const char *base, char *out, size_t cap)
{
    struct trace_query q = { pid, base, out, cap };
    return proc_fd_each(pid, is_trace, &q) > 0;
}

/* The value of NAME in /proc/PID/environ (its environment at exec), or
 * NULL. */
char *proc_environ_value(const char *env, size_t len, const char *name)
{
    size_t nl = strlen(name);
    for (size_t i = 0; i < len;) {
        const char *e = env + i;
        size_t el = strnlen(e, len - i);
        if (el > nl && !strncmp(e, name, nl) && e[nl] == '=')
            return strndup(e + nl + 1, el - nl - 1);
        i += el + 1;
    }
    return NULL;
}

char *proc_read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    ssize_t r;
    while (buf && (r = read(fd, buf + n, cap - n)) > 0) {
        n += (size_t)r;
        if (n == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    int e = errno;
    close(fd);
    errno = e;
    *len = n;
    return buf;
}
