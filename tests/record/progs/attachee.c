/*
 * attachee.c - a running program for tests/record/attach.sh to attach to:
 * three threads allocate until STOPFILE exists, one of them constantly in
 * malloc/free (no pause), one keeping blocks from attachee_grow live, one
 * allocating and sleeping; the main thread waits in nanosleep. Every block
 * is filled and checked before it is freed, and each thread folds its first
 * ROUNDS rounds into a checksum, so a changed program (a block clobbered, a
 * wrong size, an allocator mix-up) prints something else than a plain run:
 * "checksum N" lines and "bad N" (blocks found clobbered).
 *
 *   attachee STOPFILE [traceme]    prints "ready" once all threads run
 *   (traceme: ptrace(PTRACE_TRACEME) first: its parent becomes its tracer;
 *   forks: the main thread forks a child every 10 ms that allocates and
 *   exits, and prints "children failed N" at the end; churn: the main
 *   thread starts and joins a short thread that allocates every 2 ms, and
 *   counts SIGUSR1 in a handler: prints "threads N usr1 seen")
 *
 * When STOPFILE.plugin exists (it holds a library's path), the sleeper
 * thread dlopens that library and calls its attachee_plugin(n) every round
 * after: a module loaded while the recorder may be attached.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 2000

static const char *stopfile;
static volatile int stop;
static unsigned long bad;
static pthread_mutex_t bad_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

/* A block of n bytes filled from seed; checked and folded into h. */
static __attribute__((noinline)) unsigned char *attachee_fill(size_t n, unsigned seed)
{
    unsigned char *p = malloc(n);
    if (!p)
        abort();
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed + i * 7);
    return p;
}

static uint64_t check_free(unsigned char *p, size_t n, unsigned seed, uint64_t h)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seed + i * 7)) {
            pthread_mutex_lock(&bad_lock);
            bad++;
            pthread_mutex_unlock(&bad_lock);
            break;
        }
    h = mix(h, p[n / 2]);
    free(p);
    return h;
}

static void nap_us(long us)
{
    struct timespec ts = { 0, us * 1000 };
    nanosleep(&ts, NULL);
}

static uint64_t sums[3];

/* Constantly in malloc: no pause at all. */
static __attribute__((noinline)) void *attachee_busy(void *arg)
{
    (void)arg;
    uint64_t h = 0;
    for (unsigned r = 0; !stop; r++) {
        size_t n = 16 + (r * 37) % 3000;
        unsigned char *p = attachee_fill(n, r);
        unsigned char *q = calloc(1, 64 + r % 100);
        p = realloc(p, n);   /* same size: contents kept */
        uint64_t x = check_free(p, n, r, 0);
        free(q);
        if (r < ROUNDS)
            h = mix(h, x);
        if (r == ROUNDS)
            sums[0] = h;
    }
    return NULL;
}

/* Keeps a window of live blocks from attachee_grow. */
static __attribute__((noinline)) unsigned char *attachee_grow(size_t n, unsigned seed)
{
    return attachee_fill(n, seed);
}

static void *keeper(void *arg)
{
    (void)arg;
    enum { WINDOW = 256 };
    unsigned char *live[WINDOW] = { 0 };
    size_t size[WINDOW] = { 0 };
    unsigned seed[WINDOW] = { 0 };
    uint64_t h = 0;
    for (unsigned r = 0; !stop; r++) {
        unsigned k = r % WINDOW;
        if (live[k]) {
            uint64_t x = check_free(live[k], size[k], seed[k], 0);
            if (r < ROUNDS)
                h = mix(h, x);
        }
        size[k] = 1000 + (r * 131) % 20000;
        seed[k] = r;
        live[k] = attachee_grow(size[k], r);
        if (r == ROUNDS)
            sums[1] = h;
        if (r % 16 == 0)
            nap_us(200);
    }
    for (unsigned k = 0; k < WINDOW; k++)
        if (live[k])
            check_free(live[k], size[k], seed[k], 0);
    return NULL;
}

/* STOPFILE.plugin's library, loaded once it is named. */
static void (*plugin)(size_t);

static void load_plugin(void)
{
    char name[4096], path[4096] = "";
    snprintf(name, sizeof name, "%s.plugin", stopfile);
    FILE *f = fopen(name, "r");
    if (!f)
        return;
    if (fgets(path, sizeof path, f))
        path[strcspn(path, "\n")] = '\0';
    fclose(f);
    void *h = path[0] ? dlopen(path, RTLD_NOW) : NULL;
    plugin = h ? (void (*)(size_t))dlsym(h, "attachee_plugin") : NULL;
    printf(plugin ? "plugin loaded\n" : "plugin not loaded\n");
    fflush(stdout);
}

static void *sleeper(void *arg)
{
    (void)arg;
    uint64_t h = 0;
    int tried = 0;
    for (unsigned r = 0; !stop; r++) {
        if (!tried && r % 16 == 0) {
            char name[4096];
            snprintf(name, sizeof name, "%s.plugin", stopfile);
            if (access(name, F_OK) == 0) {
                tried = 1;
                load_plugin();
            }
        }
        if (plugin)
            plugin(4096 + r % 1000);
        size_t n = 100000 + (r % 7) * 50000;   /* large: glibc maps some of them */
        unsigned char *p = attachee_fill(n, r);
        uint64_t x = check_free(p, n, r, 0);
        if (r < ROUNDS / 10)
            h = mix(h, x);
        if (r == ROUNDS / 10)
            sums[2] = h;
        nap_us(1000);
    }
    return NULL;
}

static volatile sig_atomic_t usr1;

static void on_usr1(int sig)
{
    (void)sig;
    usr1++;
}

static void *short_thread(void *arg)
{
    unsigned r = (unsigned)(uintptr_t)arg;
    check_free(attachee_fill(500 + r % 5000, r), 500 + r % 5000, r, 0);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: attachee STOPFILE [traceme]\n");
        return 2;
    }
    stopfile = argv[1];
    if (argc > 2 && strcmp(argv[2], "traceme") == 0 && ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
        perror("ptrace");
    pthread_t th[3];
    pthread_create(&th[0], NULL, attachee_busy, NULL);
    pthread_create(&th[1], NULL, keeper, NULL);
    pthread_create(&th[2], NULL, sleeper, NULL);
    int forks = argc > 2 && strcmp(argv[2], "forks") == 0;
    int churn = argc > 2 && strcmp(argv[2], "churn") == 0;
    unsigned long nthreads = 0, errno_changed = 0;
    if (churn)
        signal(SIGUSR1, on_usr1);
    unsigned long failed = 0;
    printf("ready\n");
    fflush(stdout);
    while (access(stopfile, F_OK) != 0) {
        if (churn) {
            pthread_t t;
            if (pthread_create(&t, NULL, short_thread, (void *)(uintptr_t)nthreads) == 0) {
                pthread_join(t, NULL);
                nthreads++;
            }
            nap_us(2000);
            continue;
        }
        if (!forks) {
            /* The main thread is the one likely borrowed: whatever the
             * calls made on it did to errno must not show. */
            errno = 4242;
            nap_us(20000);
            if (errno != 4242)
                errno_changed++;
            continue;
        }
        pid_t c = fork();
        if (c == 0) {
            uint64_t h = 0;
            for (unsigned r = 0; r < 200; r++)
                h = check_free(attachee_fill(100 + r * 10, r), 100 + r * 10, r, h);
            _exit(bad ? 1 : 0);
        }
        int st = 0;
        if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            failed++;
        nap_us(10000);
    }
    if (forks)
        printf("children failed %lu\n", failed);
    if (churn)
        printf("threads %s usr1 %s\n", nthreads > 0 ? "ran" : "none", usr1 > 0 ? "seen" : "lost");
    /* Every thread must have done its counted rounds. */
    while (!sums[0] || !sums[1] || !sums[2])
        nap_us(20000);
    stop = 1;
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 3; i++)
        printf("checksum %d %016llx\n", i, (unsigned long long)sums[i]);
    printf("errno changed %lu\n", errno_changed);
    printf("bad %lu\n", bad);
    return 0;
}
