/*
 * thread_start.h - starting a helper thread that takes no signals: every
 * signal is blocked while it is created (a new thread inherits its
 * creator's mask), then the creator's mask is put back. The recorder's
 * writer and control threads must never run the program's handlers; the
 * analysis's reader threads leave SIGINT and the like to the main thread.
 * Header only: the recorder starts its threads with it.
 */
#ifndef MT_COMMON_THREAD_START_H
#define MT_COMMON_THREAD_START_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>

/* fn(arg) on a new thread with every signal blocked; detached when th is
 * NULL (else joinable, its id in *th). Returns pthread_create's result. */
static inline int mt_thread_start(pthread_t *th, void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    pthread_t tid;
    sigset_t all, old;
    if (pthread_attr_init(&attr) != 0)
        return -1;
    if (!th)
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(th ? th : &tid, &attr, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    return rc;
}

#endif
