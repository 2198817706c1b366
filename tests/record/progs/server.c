/*
 * server.c - a long-running service for the on/off control tests: it
 * serves "requests" (allocates, keeps a window of live blocks, frees the
 * oldest) until told to stop, in phases whose allocation sites have
 * different names (phase_a, phase_b, phase_c), so a trace shows which
 * phases it covers. It handles SIGUSR1 itself, as services do (and
 * SIGUSR2 with "usr2", as nginx and gunicorn do).
 *
 * usage: server PHASEFILE [fork|usr2|closefds]
 * PHASEFILE holds the phase to run: a, b, c, or q to exit; the server
 * writes the phase it is running to PHASEFILE.ack when it switches, and
 * the requests it served so far to PHASEFILE.served every 64 requests (a
 * whole number, replaced by rename: a reader never sees half of it), so
 * that a test waits for requests rather than for time. With
 * "fork", a forked child serves (as in pre-forking servers), its pid in
 * PHASEFILE.child, and the parent waits for it.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

enum { WINDOW = 256 };
static void *window[WINDOW];
static unsigned next;
static volatile sig_atomic_t usr1, usr2;

static void on_usr1(int sig)
{
    (void)sig;
    usr1++;
}

/* "usr2": a handler of its own for SIGUSR2 too, as nginx (binary upgrade)
 * and gunicorn (re-exec) have, installed after the recorder's */
static void on_usr2(int sig)
{
    (void)sig;
    usr2++;
}

static void keep(void *p)
{
    free(window[next % WINDOW]);
    window[next % WINDOW] = p;
    next++;
}

__attribute__((noinline)) static void phase_a(size_t n)
{
    char *p = malloc(n);
    memset(p, 'a', n);
    keep(p);
}

__attribute__((noinline)) static void phase_b(size_t n)
{
    char *p = malloc(n);
    memset(p, 'b', n);
    keep(p);
}

__attribute__((noinline)) static void phase_c(size_t n)
{
    char *p = calloc(1, n);
    keep(p);
}

static char read_phase(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 'a';
    int c = fgetc(f);
    fclose(f);
    return c == EOF ? 'a' : (char)c;
}

int main(int argc, char **argv)
{
    if (argc != 2 && !(argc == 3 && (!strcmp(argv[2], "fork") || !strcmp(argv[2], "usr2") ||
                                      !strcmp(argv[2], "closefds")))) {
        fprintf(stderr, "usage: server PHASEFILE [fork|usr2|closefds]\n");
        return 2;
    }
    if (argc == 3 && !strcmp(argv[2], "fork")) {
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid > 0) {
            char path[4096];
            snprintf(path, sizeof path, "%s.child", argv[1]);
            FILE *f = fopen(path, "w");
            if (f) {
                fprintf(f, "%d\n", (int)pid);
                fclose(f);
            }
            int st;
            while (waitpid(pid, &st, 0) < 0)
                ;
            return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
        }
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    if (argc == 3 && !strcmp(argv[2], "closefds")) {
        /* as daemons do at start: every descriptor but the standard ones */
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
    }
    if (argc == 3 && !strcmp(argv[2], "usr2")) {
        sa.sa_handler = on_usr2;
        sigaction(SIGUSR2, &sa, NULL);
    }
    char ack[4096], served[4096], served_tmp[4096];
    snprintf(ack, sizeof ack, "%s.ack", argv[1]);
    snprintf(served, sizeof served, "%s.served", argv[1]);
    snprintf(served_tmp, sizeof served_tmp, "%s.served.tmp", argv[1]);
    char phase = 0;
    unsigned r = 12345;
    for (unsigned long i = 0;; i++) {
        if (i % 64 == 0) {
            char p = read_phase(argv[1]);
            if (p == 'q')
                break;
            if (p != phase) {
                phase = p;
                FILE *f = fopen(ack, "w");
                if (f) {
                    fprintf(f, "%c\n", phase);
                    fclose(f);
                }
            }
            FILE *f = fopen(served_tmp, "w");
            if (f) {
                fprintf(f, "%lu\n", i);
                if (fclose(f) == 0)
                    rename(served_tmp, served);
            }
            struct timespec ts = { 0, 1000 * 1000 };   /* ~64 requests per ms */
            nanosleep(&ts, NULL);
        }
        r = r * 1103515245u + 12345u;
        size_t n = 64 + (r >> 8) % 4096;
        if (phase == 'b')
            phase_b(n);
        else if (phase == 'c')
            phase_c(n);
        else
            phase_a(n);
    }
    for (unsigned k = 0; k < WINDOW; k++)
        free(window[k]);
    printf("served %u requests, %d SIGUSR1, %d SIGUSR2\n", next, (int)usr1, (int)usr2);
    return 0;
}
