/*
 * forker.c - a process tree for the recorder tests.
 *   forker fork   : allocates, forks 3 children that allocate (child_work)
 *                   and exit, allocates again
 *   forker exec   : a forked child execs "forker child"
 *   forker forkexec: a forked child allocates (child_work), then execs
 *                   "forker child"
 *   forker spawn  : posix_spawn and vfork+exec of "forker child"
 *   forker quiet  : forks children that _exit at once without allocating
 *   forker busy   : 8 threads allocate while the main thread forks 20
 *                   children that allocate (locks held across fork)
 *   forker selfexec: allocates, then execs "forker child" itself
 *   forker child  : just allocates (child_work)
 * Prints "ok" and exits 0 if every child exited 0.
 */
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static void *keep(void *p) { __asm__ volatile("" : : "r"(p) : "memory"); return p; }

__attribute__((noinline)) static void parent_work(void)
{
    for (int i = 0; i < 2000; i++)
        free(keep(malloc(5000)));
}

__attribute__((noinline)) static void child_work(void)
{
    for (int i = 0; i < 4000; i++)
        free(keep(malloc(5000)));
}

static volatile int stop_busy;

static void *busy_thread(void *arg)
{
    (void)arg;
    while (!stop_busy)
        for (int i = 0; i < 1000; i++)
            free(keep(malloc(100 + (size_t)i * 10)));
    return NULL;
}

static int wait_all(int n)
{
    int ok = 1, st;
    for (int i = 0; i < n; i++)
        if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            ok = 0;
    return ok;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "fork";
    char *child_argv[] = { argv[0], "child", NULL };
    int ok = 1;

    if (strcmp(mode, "child") == 0) {
        child_work();
        return 0;
    }
    parent_work();
    if (strcmp(mode, "selfexec") == 0) {
        execv(argv[0], child_argv);
        return 127;
    }
    if (strcmp(mode, "fork") == 0) {
        for (int i = 0; i < 3; i++)
            if (fork() == 0) {
                child_work();
                exit(0);
            }
        ok = wait_all(3);
    } else if (strcmp(mode, "exec") == 0) {
        if (fork() == 0) {
            execv(argv[0], child_argv);
            _exit(127);
        }
        ok = wait_all(1);
    } else if (strcmp(mode, "forkexec") == 0) {
        if (fork() == 0) {
            child_work();
            execv(argv[0], child_argv);
            _exit(127);
        }
        ok = wait_all(1);
    } else if (strcmp(mode, "spawn") == 0) {
        pid_t pid;
        ok = posix_spawn(&pid, argv[0], NULL, NULL, child_argv, environ) == 0;
        pid_t v = vfork();
        if (v == 0) {
            execv(argv[0], child_argv);
            _exit(127);
        }
        ok = wait_all(2) && ok;
    } else if (strcmp(mode, "busy") == 0) {
        pthread_t th[8];
        for (int i = 0; i < 8; i++)
            pthread_create(&th[i], NULL, busy_thread, NULL);
        for (int i = 0; i < 20; i++) {
            if (fork() == 0) {
                child_work();
                exit(0);
            }
            ok = wait_all(1) && ok;
        }
        stop_busy = 1;
        for (int i = 0; i < 8; i++)
            pthread_join(th[i], NULL);
    } else if (strcmp(mode, "quiet") == 0) {
        for (int i = 0; i < 5; i++)
            if (fork() == 0)
                _exit(0);
        ok = wait_all(5);
    }
    parent_work();
    printf("%s\n", ok ? "ok" : "child failed");
    return ok ? 0 : 1;
}
