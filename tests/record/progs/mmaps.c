/*
 * mmaps.c - maps, unmaps and remaps anonymous memory in known amounts, one
 * function per case, for tests/record/mmap.sh (each function is an
 * allocation site of its own):
 *   partial_site   64 MiB mapped, the middle 32 MiB unmapped: 32 MiB live
 *   remap_site     16 MiB mapped, grown to 48 MiB by remap_grow (which
 *                  adds 32 MiB), then shrunk to 24 MiB: 16 + 8 MiB live
 *   fixed_site     8 MiB mapped, its upper 4 MiB replaced by a MAP_FIXED
 *                  map made by fixed_over: 4 + 4 MiB live
 *   gone_site      16 MiB mapped and unmapped: 0 live
 *   big_malloc     malloc(64 MiB), kept: 64 MiB, once (glibc maps it)
 *   file_site      8 MiB of a file mapped: not counted
 *   none_site      64 MiB PROT_NONE reservation: not counted
 * Then sleeps a little so that the end of the trace comes after all that.
 * "mmaps threads": 8 threads map and unmap 1 MiB (in two halves) 400 times
 * each, keeping their last mapping (thread_site: 8 MiB live, 3208 MiB
 * allocated), while the main thread forks children that unmap what they
 * inherited.
 */
#include <pthread.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MiB ((size_t)1 << 20)
#define NOINLINE __attribute__((noinline))

static void *anon(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    return p;
}

/* anon() is inlined into each site at -O1 only if small; force the site to
 * be the caller of mmap itself. */
#define ANON(len) mmap(NULL, (len), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)

static NOINLINE char *partial_site(void) { return ANON(64 * MiB); }
static NOINLINE char *remap_site(void) { return ANON(16 * MiB); }
static NOINLINE char *remap_grow(char *p) { return mremap(p, 16 * MiB, 48 * MiB, MREMAP_MAYMOVE); }
static NOINLINE char *fixed_site(void) { return ANON(8 * MiB); }
static NOINLINE char *fixed_over(char *p)
{
    return mmap(p, 4 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}
static NOINLINE char *gone_site(void) { return ANON(16 * MiB); }
static NOINLINE char *big_malloc(void) { return malloc(64 * MiB); }
static NOINLINE char *none_site(void)
{
    return mmap(NULL, 64 * MiB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
}
static NOINLINE char *file_site(int fd)
{
    return mmap(NULL, 8 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
}

static NOINLINE char *thread_site(void) { return ANON(MiB); }

static void *churn(void *arg)
{
    (void)arg;
    char *p = NULL;
    for (int i = 0; i < 401; i++) {
        if (p) {
            munmap(p, MiB / 2);
            munmap(p + MiB / 2, MiB / 2);
        }
        p = thread_site();
        if (p == MAP_FAILED)
            exit(10);
        p[0] = 1;
    }
    return NULL;
}

static int threads(void)
{
    pthread_t th[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&th[i], NULL, churn, NULL);
    for (int i = 0; i < 5; i++) {
        char *q = thread_site();
        pid_t pid = fork();
        if (pid == 0) {
            munmap(q, MiB);
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        munmap(q, MiB);
    }
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    printf("ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "threads"))
        return threads();
    (void)anon;
    char *p = partial_site();
    if (munmap(p + 16 * MiB, 32 * MiB) != 0)
        return 3;

    char *r = remap_site();
    r = remap_grow(r);
    if (r == MAP_FAILED)
        return 4;
    memset(r, 1, 48 * MiB);
    r = mremap(r, 48 * MiB, 24 * MiB, 0);
    if (r == MAP_FAILED)
        return 5;

    char *f = fixed_site();
    if (fixed_over(f + 4 * MiB) == MAP_FAILED)
        return 6;

    char *g = gone_site();
    munmap(g, 16 * MiB);

    char *b = big_malloc();
    if (!b)
        return 7;
    b[0] = 1;

    if (none_site() == MAP_FAILED)
        return 8;

    if (argc > 1) {
        int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || ftruncate(fd, (off_t)(8 * MiB)) != 0 || file_site(fd) == MAP_FAILED)
            return 9;
        close(fd);
    }
    usleep(100 * 1000);
    printf("ok\n");
    return 0;
}
