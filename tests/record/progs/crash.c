/*
 * crash.c - a program that dies of a fatal signal right after allocating,
 * for the recorder's fatal-signal flush (tests/record/fatal.sh).
 *   crash MODE [MIB]   allocate MIB MiB (default 50) and keep it, then:
 *     segv     write through a null pointer
 *     abort    abort()
 *     fpe      divide an integer by zero
 *     handled  install its own SIGSEGV handler (prints "handled", exits 3)
 *              after the recorder started, then fault
 *     threads  fault on a second thread while the first allocates
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *keep(void *p) { __asm__ volatile("" : : "r"(p) : "memory"); return p; }

static void fault(void)
{
    *(volatile int *)keep(NULL) = 1;
}

static void on_segv(int sig)
{
    (void)sig;
    static const char msg[] = "handled\n";
    ssize_t w = write(1, msg, sizeof msg - 1);
    (void)w;
    _exit(3);
}

static void *faulter(void *arg)
{
    (void)arg;
    fault();
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "segv";
    int mib = argc > 2 ? atoi(argv[2]) : 50;
    for (int i = 0; i < mib; i++)
        keep(memset(malloc(1 << 20), 1, 1 << 20));
    if (strcmp(mode, "segv") == 0)
        fault();
    else if (strcmp(mode, "abort") == 0)
        abort();
    else if (strcmp(mode, "fpe") == 0) {
        volatile int zero = 0, num = 1000;
        printf("%d\n", num / zero);
    } else if (strcmp(mode, "handled") == 0) {
        signal(SIGSEGV, on_segv);
        fault();
    } else if (strcmp(mode, "threads") == 0) {
        pthread_t th;
        pthread_create(&th, NULL, faulter, NULL);
        for (;;)
            free(keep(malloc(1000)));
    }
    return 0;
}
