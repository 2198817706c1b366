/*
 * exec.c - the exec family, wrapped so that a traced process writes out
 * what it has queued before its image is replaced (exec runs no atexit
 * handler, and the writer thread dies with the old image), and marks the
 * end of that recording: its end time is the exec. If exec fails, tracing
 * simply goes on. The new program traces itself into FILE.<pid>
 * when it inherits LD_PRELOAD and MEMTRACE (docs/recorder.md).
 * dlclose is wrapped for the same reason: the return addresses queued so
 * far are symbolized while the library is still mapped; and afterwards
 * the DWARF walk's cached unwind rules are forgotten (cfiwalk.c), and the
 * writer is told that a module may be gone, so that whatever is loaded at
 * its place gets codes of its own (modules.c, "Codes").
 *
 * glibc's execvp/execl & co. call execve internally, not through the PLT,
 * so each entry point is wrapped; the variadic execl* build an argv array
 * and call the real execv*.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "cfi.h"
#include "modules.h"
#include "thread.h"
#include "tracer.h"

#define API __attribute__((visibility("default")))

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);

static void *next_fn(const char *name)
{
    mtr_enter();
    void *f = dlsym(RTLD_NEXT, name);
    mtr_leave();
    return f;
}

API int execve(const char *path, char *const argv[], char *const envp[])
{
    execve_fn f = (execve_fn)next_fn("execve");
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    mtr_tracer_end_before_exec();
    return f(path, argv, envp);
}

API int execvpe(const char *file, char *const argv[], char *const envp[])
{
    execve_fn f = (execve_fn)next_fn("execvpe");
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    mtr_tracer_end_before_exec();
    return f(file, argv, envp);
}

API int execv(const char *path, char *const argv[])
{
    execv_fn f = (execv_fn)next_fn("execv");
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    mtr_tracer_end_before_exec();
    return f(path, argv);
}

API int execvp(const char *file, char *const argv[])
{
    execv_fn f = (execv_fn)next_fn("execvp");
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    mtr_tracer_end_before_exec();
    return f(file, argv);
}

API int fexecve(int fd, char *const argv[], char *const envp[])
{
    int (*f)(int, char *const[], char *const[]) =
        (int (*)(int, char *const[], char *const[]))next_fn("fexecve");
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    mtr_tracer_end_before_exec();
    return f(fd, argv, envp);
}

API int dlclose(void *handle)
{
    int (*f)(void *) = (int (*)(void *))next_fn("dlclose");
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    mtr_tracer_flush_before_exec();
    int rc = f(handle);
    mtr_cfi_flush();          /* no cached unwind rule outlives its code */
    mtr_modules_unloaded();   /* nor does a code: the next load there gets new ones */
    return rc;
}

/* Count the variadic arguments after arg0 up to the NULL. */
#define COUNT_ARGS(arg0, n)                        \
    do {                                           \
        va_list ap_;                               \
        va_start(ap_, arg0);                       \
        n = 1;                                     \
        while (va_arg(ap_, const char *) != NULL)  \
            n++;                                   \
        va_end(ap_);                               \
    } while (0)

/* Fill argv with arg0 and the n-1 arguments after it, then the NULL that
 * ends them; *ap is left just past that NULL (execle's envp follows). */
static void collect_args(char **argv, size_t n, const char *arg0, va_list *ap)
{
    argv[0] = (char *)arg0;
    for (size_t i = 1; i <= n; i++)
        argv[i] = va_arg(*ap, char *);
}

API int execl(const char *path, const char *arg0, ...)
{
    size_t n;
    COUNT_ARGS(arg0, n);
    char *argv[n + 1];
    va_list ap;
    va_start(ap, arg0);
    collect_args(argv, n, arg0, &ap);
    va_end(ap);
    return execv(path, argv);
}

API int execlp(const char *file, const char *arg0, ...)
{
    size_t n;
    COUNT_ARGS(arg0, n);
    char *argv[n + 1];
    va_list ap;
    va_start(ap, arg0);
    collect_args(argv, n, arg0, &ap);
    va_end(ap);
    return execvp(file, argv);
}

API int execle(const char *path, const char *arg0, ...)
{
    size_t n;
    COUNT_ARGS(arg0, n);
    char *argv[n + 1];
    va_list ap;
    va_start(ap, arg0);
    collect_args(argv, n, arg0, &ap);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, argv, envp);
}
