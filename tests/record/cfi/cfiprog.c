/*
 * cfiprog.c - a C program for tests/record/cfi.sh, built with -O2
 * -fomit-frame-pointer: allocations under the frame shapes the DWARF
 * walk's fast path must follow (or hand to libunwind).
 *
 *   cfiprog vla N           N allocations under a function with a VLA and one
 *                           with alloca (their CFA is RBP-based):
 *                           main > cfi_vla_outer > cfi_alloca_mid > cfi_vla_leaf
 *   cfiprog qsort N         qsort with a comparator that allocates (frames
 *                           inside glibc's qsort): main > cfi_sort > qsort... > cfi_cmp
 *   cfiprog signal N        N signals whose handler allocates (a signal frame:
 *                           the fast path hands the walk to libunwind)
 *   cfiprog threads N       4 threads, each N allocations three calls deep
 *   cfiprog dlopen A B N    dlopen A, N allocations in it, dlclose; then B
 *
 * noipa keeps each function a real, separately named frame.
 */
#include <alloca.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile long sink;

__attribute__((noipa)) static void cfi_vla_leaf(size_t n)
{
    char *p = malloc(n);
    if (p)
        p[0] = 1;
    sink += (long)(p != NULL);
    free(p);
}

__attribute__((noipa)) static void cfi_alloca_mid(size_t n)
{
    char *a = alloca(n % 512 + 16);
    memset(a, 1, n % 512 + 16);
    cfi_vla_leaf(n + 1);
    sink += a[n % 7];
}

__attribute__((noipa)) static void cfi_vla_outer(size_t n)
{
    char v[n % 300 + 8];
    memset(v, 2, sizeof v);
    cfi_alloca_mid(n + 1);
    sink += v[n % 5];
}

__attribute__((noipa)) static int cfi_cmp(const void *a, const void *b)
{
    char *p = malloc(64);   /* an allocating comparator */
    if (p)
        p[0] = 0;
    sink += (long)(p != NULL);
    free(p);
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

__attribute__((noipa)) static void cfi_sort(int *v, size_t n)
{
    qsort(v, n, sizeof *v, cfi_cmp);
    sink++;   /* not a tail call: this frame stays */
}

__attribute__((noipa)) static void cfi_in_handler(size_t n)
{
    char *p = malloc(n);
    if (p)
        p[0] = 1;
    sink += (long)(p != NULL);
    free(p);
}

__attribute__((noipa)) static void handler(int sig)
{
    cfi_in_handler(300);
    sink += sig;
}

__attribute__((noipa)) static void cfi_thread_leaf(size_t n)
{
    char *p = malloc(n);
    if (p)
        p[0] = 1;
    sink += (long)(p != NULL);
    free(p);
}

__attribute__((noipa)) static void cfi_thread_mid(size_t n)
{
    cfi_thread_leaf(n + 1);
    sink++;
}

static long thread_n;

static void *thread_main(void *arg)
{
    (void)arg;
    for (long i = 0; i < thread_n; i++)
        cfi_thread_mid(200 + (size_t)(i % 50));
    return NULL;
}

static int use_library(const char *path, long n)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "cfiprog: %s\n", dlerror());
        return 1;
    }
    void (*f)(long) = (void (*)(long))dlsym(h, "cfilib_work");
    if (!f) {
        fprintf(stderr, "cfiprog: %s: no cfilib_work\n", path);
        return 1;
    }
    f(n);
    return dlclose(h) != 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: cfiprog vla|qsort|signal|threads N | dlopen A B N\n");
        return 2;
    }
    const char *mode = argv[1];
    long n = atol(argv[argc - 1]);
    if (strcmp(mode, "vla") == 0) {
        for (long i = 0; i < n; i++)
            cfi_vla_outer(200 + (size_t)(i % 100));
    } else if (strcmp(mode, "qsort") == 0) {
        int v[64];
        for (long i = 0; i < n; i++) {
            for (int k = 0; k < 64; k++)
                v[k] = (int)((k * 7919 + i) % 101);
            cfi_sort(v, 64);
        }
    } else if (strcmp(mode, "signal") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = handler;
        sigaction(SIGUSR1, &sa, NULL);
        for (long i = 0; i < n; i++)
            raise(SIGUSR1);
    } else if (strcmp(mode, "threads") == 0) {
        pthread_t t[4];
        thread_n = n;
        for (int k = 0; k < 4; k++)
            if (pthread_create(&t[k], NULL, thread_main, NULL) != 0)
                return 1;
        for (int k = 0; k < 4; k++)
            pthread_join(t[k], NULL);
    } else if (strcmp(mode, "dlopen") == 0 && argc == 5) {
        /* One call site for the three loads: between a dlclose and the
         * next library's first stacks, no return address is new. */
        const char *order[3] = { argv[2], argv[3], argv[2] };
        for (int k = 0; k < 3; k++)
            if (use_library(order[k], n))
                return 1;
    } else {
        fprintf(stderr, "cfiprog: unknown mode %s\n", mode);
        return 2;
    }
    return (int)(sink & 0);
}
