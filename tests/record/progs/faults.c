/*
 * faults.c - hostile situations for the recorder tests.
 *   faults sleep       allocate, print "ready", sleep (the test kills it)
 *   faults _exit       allocate, _exit(7)
 *   faults abort       allocate, wait a little, abort()
 *   faults signals     a 1 ms interval timer interrupting the allocation
 *                      loop, then a process-directed signal taken by sigwait
 *   faults stderr FILE close stderr, reopen fd 2 as FILE, allocate, write
 *                      "data" to fd 2
 *   faults dlopen      dlopen libz, compress a buffer through it, dlclose
 *   faults hold MS [SIG|exec]  allocate 64 MiB and keep it, sleep MS
 *                      milliseconds (no allocation meanwhile), then exit 0,
 *                      or kill itself with signal SIG, or exec /bin/true
 *   faults hold-until FILE  allocate 64 MiB and keep it, print "held", then
 *                      wait (no allocation meanwhile) until FILE exists,
 *                      and exit 0: the test decides when, on events
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static void *keep(void *p) { __asm__ volatile("" : : "r"(p) : "memory"); return p; }
static void *held[2000];

__attribute__((noinline)) static void work(int n)
{
    for (int i = 0; i < n; i++) {
        int k = i % 2000;
        free(held[k]);
        held[k] = keep(malloc(100 + (size_t)(i % 5000)));
    }
}

static volatile sig_atomic_t ticks;
static void on_alarm(int sig)
{
    (void)sig;
    ticks++;
}

static void nap(int ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "hold-until") == 0 && argc > 2) {
        for (int i = 0; i < 64; i++)
            keep(memset(malloc(1 << 20), 1, 1 << 20));
        printf("held\n");
        fflush(stdout);
        while (access(argv[2], F_OK) != 0)
            nap(10);
        return 0;
    }
    if (strcmp(mode, "hold") == 0 && argc > 2) {
        for (int i = 0; i < 64; i++)
            keep(memset(malloc(1 << 20), 1, 1 << 20));
        nap(atoi(argv[2]));
        if (argc > 3 && strcmp(argv[3], "exec") == 0) {
            execl("/bin/true", "true", (char *)NULL);
            return 1;
        }
        if (argc > 3) {
            signal(atoi(argv[3]), SIG_DFL);
            raise(atoi(argv[3]));
        }
        return 0;
    }
    if (strcmp(mode, "sleep") == 0) {
        work(200000);
        printf("ready\n");
        fflush(stdout);
        for (;;)
            nap(1000);
    } else if (strcmp(mode, "_exit") == 0) {
        work(200000);
        _exit(7);
    } else if (strcmp(mode, "abort") == 0) {
        work(200000);
        nap(400);
        abort();
    } else if (strcmp(mode, "signals") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_alarm;
        sa.sa_flags = SA_RESTART;
        sigaction(SIGALRM, &sa, NULL);
        struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
        setitimer(ITIMER_REAL, &it, NULL);
        for (int r = 0; r < 4; r++)
            work(100000);
        struct itimerval off = { { 0, 0 }, { 0, 0 } };
        setitimer(ITIMER_REAL, &off, NULL);
        /* A process-directed signal must reach the thread that waits for
         * it, not a thread of the recorder. */
        sigset_t set;
        int got = 0;
        sigemptyset(&set);
        sigaddset(&set, SIGUSR1);
        sigprocmask(SIG_BLOCK, &set, NULL);
        kill(getpid(), SIGUSR1);
        sigwait(&set, &got);
        printf("signals %s, %s\n", ticks > 0 ? "delivered" : "missing",
               got == SIGUSR1 ? "sigwait ok" : "sigwait failed");
        return 0;
    } else if (strcmp(mode, "stderr") == 0 && argc > 2) {
        close(2);
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd != 2)
            return 3;
        work(200000);
        if (write(2, "data", 4) != 4)
            return 4;
        return 0;
    } else if (strcmp(mode, "dlopen") == 0) {
        void *h = dlopen("libz.so.1", RTLD_NOW);
        if (!h) {
            printf("no libz\n");
            return 0;
        }
        int (*compress)(unsigned char *, unsigned long *, const unsigned char *, unsigned long) =
            (int (*)(unsigned char *, unsigned long *, const unsigned char *, unsigned long))
                dlsym(h, "compress");
        unsigned char in[100000], out[200000];
        memset(in, 'a', sizeof in);
        unsigned long outlen = sizeof out;
        int rc = compress(out, &outlen, in, sizeof in);
        work(100000);
        dlclose(h);
        printf("compress=%d len=%lu\n", rc, outlen);
        return 0;
    }
    fprintf(stderr, "usage: faults sleep|_exit|abort|signals|stderr FILE|dlopen\n");
    return 2;
}
