/*
 * thread_start.c - unit test of lib/common/thread_start.h: the thread
 * starts with every signal blocked, its creator's mask is back afterwards,
 * and a joinable thread can be joined.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

#include "thread_start.h"

static int blocked_in_thread = -1;

static void *probe(void *arg)
{
    (void)arg;
    sigset_t now;
    pthread_sigmask(SIG_SETMASK, NULL, &now);
    blocked_in_thread = sigismember(&now, SIGINT) && sigismember(&now, SIGTERM) &&
                        sigismember(&now, SIGUSR2) && sigismember(&now, SIGRTMIN);
    return NULL;
}

int main(void)
{
    int failures = 0;
    pthread_t th;
    sigset_t before, after;
    pthread_sigmask(SIG_SETMASK, NULL, &before);
    int rc = mt_thread_start(&th, probe, NULL);
    pthread_sigmask(SIG_SETMASK, NULL, &after);
    if (rc == 0)
        pthread_join(th, NULL);
    int ok = rc == 0 && blocked_in_thread == 1;
    printf("%s: the new thread has every signal blocked\n", ok ? "PASS" : "FAIL");
    failures += !ok;
    ok = sigismember(&after, SIGINT) == sigismember(&before, SIGINT) &&
         sigismember(&after, SIGUSR2) == sigismember(&before, SIGUSR2);
    printf("%s: the creator's mask is put back\n", ok ? "PASS" : "FAIL");
    failures += !ok;
    return failures ? 1 : 0;
}
