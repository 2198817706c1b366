/*
 * namespace.c - prints what a program can see of its own process, to
 * compare runs with and without the recorder (tests/record/isolation.sh):
 * loaded objects (dl_iterate_phdr), open descriptors and whether they are
 * close-on-exec, installed signal handlers, environment variable names,
 * and which library GMP's realloc function lives in after some mpz work
 * (gnutls, once loaded, replaces GMP's memory functions).
 * Allocates enough first for the recorder to sample and write locations.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int list_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const char *n = info->dlpi_name;
    const char *b = n && *n ? strrchr(n, '/') : NULL;
    printf("OBJ %s\n", b ? b + 1 : n && *n ? n : "(main)");
    return 0;
}

static void list_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int self = d ? dirfd(d) : -1;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == self)
            continue;
        int fd = atoi(e->d_name);
        char link[64], target[512];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t k = readlink(link, target, sizeof target - 1);
        target[k > 0 ? k : 0] = '\0';
        int fl = fcntl(fd, F_GETFD);
        const char *kind = strncmp(target, "socket:", 7) == 0 ? "socket"
                         : strncmp(target, "pipe:", 5) == 0 ? "pipe"
                         : strstr(target, ".ctf") ? "trace" : "file";
        printf("FD %d %s cloexec=%d %s\n", fd, kind, fl >= 0 && (fl & FD_CLOEXEC) ? 1 : 0,
               kind[0] == 'f' ? target : "");
    }
    if (d)
        closedir(d);
}

typedef struct { int alloc; int size; void *d; } mpz_t_[1];

static void gmp_case(void)
{
    void *h = dlopen("libgmp.so.10", RTLD_NOW);
    if (!h) {
        printf("GMP none\n");
        return;
    }
    void (*init)(void *) = (void (*)(void *))dlsym(h, "__gmpz_init");
    void (*set_ui)(void *, unsigned long) = (void (*)(void *, unsigned long))dlsym(h, "__gmpz_set_ui");
    void (*mul)(void *, const void *, const void *) =
        (void (*)(void *, const void *, const void *))dlsym(h, "__gmpz_mul");
    void (*get)(void *(**)(size_t), void *(**)(void *, size_t, size_t),
                void (**)(void *, size_t)) =
        (void (*)(void *(**)(size_t), void *(**)(void *, size_t, size_t),
                  void (**)(void *, size_t)))dlsym(h, "__gmp_get_memory_functions");
    mpz_t_ a, b;
    init(a);
    init(b);
    set_ui(a, 3);
    set_ui(b, 7);
    for (int i = 0; i < 20; i++)
        mul(a, a, i < 2 ? b : a);   /* squares: a grows to ~200 KB by realloc */
    struct timespec ts = {0, 700 * 1000 * 1000};
    nanosleep(&ts, NULL);   /* the writer describes GMP's frames meanwhile */
    for (int i = 0; i < 3; i++)
        mul(a, a, b);
    void *(*m)(size_t);
    void *(*r)(void *, size_t, size_t);
    void (*f)(void *, size_t);
    get(&m, &r, &f);
    Dl_info di;
    const char *where = dladdr((void *)r, &di) && di.dli_fname ? di.dli_fname : "?";
    const char *b2 = strrchr(where, '/');
    printf("GMP realloc in %s\n", b2 ? b2 + 1 : where);
}

int main(void)
{
    /* Many call sites' worth of allocations, then time for the writer. */
    for (int round = 0; round < 20; round++) {
        void *keep[256];
        for (int i = 0; i < 256; i++)
            keep[i] = malloc(1000 + (size_t)i * 100);
        for (int i = 0; i < 256; i++)
            free(keep[i]);
    }
    struct timespec ts = {0, 700 * 1000 * 1000};
    nanosleep(&ts, NULL);
    gmp_case();
    nanosleep(&ts, NULL);
    dl_iterate_phdr(list_object, NULL);
    list_fds();
    for (int s = 1; s < NSIG; s++) {
        struct sigaction sa;
        if (s == SIGKILL || s == SIGSTOP || sigaction(s, NULL, &sa) != 0)
            continue;
        if (sa.sa_handler != SIG_DFL)
            printf("SIG %d %s\n", s, sa.sa_handler == SIG_IGN ? "ignored" : "handler");
    }
    for (char **e = environ; *e; e++)
        printf("ENV %.*s\n", (int)strcspn(*e, "="), *e);
    return 0;
}
