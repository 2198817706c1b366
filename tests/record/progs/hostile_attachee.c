/*
 * hostile_attachee.c - a process that tries to turn 'memtrace attach' (run
 * as root) against its own user's betters, for tests/record/attach_hostile.sh.
 * It prints "ready" and waits in nanosleep until DIR/stop exists, then
 * writes what it learnt to DIR/report and exits 0.
 *
 *   hostile_attachee DIR opath VICTIM
 *       its libc's memfd_create patched to return an O_PATH descriptor of
 *       VICTIM (a file its user may not write); a memfd named
 *       libmemtrace.so mapped, so that attach takes the memfd route
 *   hostile_attachee DIR keep [PLANT]
 *       memfd_create patched to return a memfd it keeps a copy of; with
 *       PLANT, that file is mapped (named libmemtrace.so, it passes for an
 *       earlier recorder); DIR/report gets the memfd's first bytes
 *   hostile_attachee DIR swap fifo|link:TARGET
 *       each /tmp/memtrace-attach.* file that appears is replaced by a FIFO
 *       or a symbolic link to TARGET; DIR/report counts them
 *   hostile_attachee DIR name
 *       its name (comm) holds terminal escapes
 *   hostile_attachee DIR nodump
 *       not dumpable (prctl(PR_SET_DUMPABLE, 0))
 *   hostile_attachee DIR ctlrace VICTIM
 *       a memfd named memtrace-ctl holding the control channel's magic,
 *       and a thread that keeps putting an O_PATH descriptor of VICTIM
 *       and that memfd in turn at descriptor 50 (run it with MEMTRACE
 *       and MEMTRACE_PAUSED=1 set, as 'memtrace ctl' wants)
 *   hostile_attachee DIR idle
 *       only waits
 */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char dir[4096];

/* memfd_create of the C library made to return fd, whatever it is asked. */
static int patch_memfd_create(int fd)
{
    unsigned char *f = dlsym(RTLD_DEFAULT, "memfd_create");
    if (!f)
        return -1;
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t page = (uintptr_t)f & ~(uintptr_t)(pg - 1);
    if (mprotect((void *)page, (size_t)pg * 2, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
        return -1;
    unsigned char code[6] = { 0xb8, 0, 0, 0, 0, 0xc3 };   /* mov $fd, %eax; ret */
    memcpy(code + 1, &fd, 4);
    memcpy(f, code, sizeof code);
    return mprotect((void *)page, (size_t)pg * 2, PROT_READ | PROT_EXEC);
}

static void report(const char *what, const void *data, size_t n)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/report", dir);
    FILE *f = fopen(p, "a");
    if (!f)
        return;
    fprintf(f, "%s ", what);
    fwrite(data, 1, n, f);
    fputc('\n', f);
    fclose(f);
}

static int swaps;

static void *flip(void *arg)
{
    (void)arg;
    for (;;) {
        dup2(61, 50);
        dup2(60, 50);
    }
    return NULL;
}

static void swap_traces(const char *kind)
{
    DIR *d = opendir("/tmp");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "memtrace-attach.", 16) != 0 || strstr(e->d_name, ".new"))
            continue;
        char p[512], n[560];
        struct stat st;
        snprintf(p, sizeof p, "/tmp/%s", e->d_name);
        if (lstat(p, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        snprintf(n, sizeof n, "%s.new", p);
        unlink(n);
        int ok = !strcmp(kind, "fifo") ? mkfifo(n, 0644)
                 : !strncmp(kind, "link:", 5) ? symlink(kind + 5, n) : -1;
        if (ok == 0 && rename(n, p) == 0)
            swaps++;
    }
    closedir(d);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    snprintf(dir, sizeof dir, "%s", argv[1]);
    const char *mode = argv[2];
    int kept = -1;
    if (!strcmp(mode, "opath") && argc > 3) {
        int v = open(argv[3], O_PATH | O_CLOEXEC);
        int m = memfd_create("libmemtrace.so", 0);
        if (v < 0 || m < 0 || dup2(v, 100) < 0 || ftruncate(m, 4096) != 0 ||
            mmap(NULL, 4096, PROT_READ, MAP_SHARED, m, 0) == MAP_FAILED ||
            patch_memfd_create(100) != 0) {
            perror("opath setup");
            return 1;
        }
    } else if (!strcmp(mode, "keep")) {
        int m = memfd_create("libmemtrace.so", 0);
        if (m < 0 || dup2(m, 101) < 0 || dup2(m, 102) < 0 || patch_memfd_create(101) != 0) {
            perror("keep setup");
            return 1;
        }
        kept = 102;
        if (argc > 3) {
            int p = open(argv[3], O_RDONLY | O_CLOEXEC);
            if (p < 0 || mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, p, 0) == MAP_FAILED) {
                perror(argv[3]);
                return 1;
            }
        }
    } else if (!strcmp(mode, "ctlrace") && argc > 3) {
        int v = open(argv[3], O_PATH | O_CLOEXEC);
        int m = memfd_create("memtrace-ctl", MFD_CLOEXEC);
        pthread_t th;
        if (v < 0 || m < 0 || ftruncate(m, 4096) != 0 || pwrite(m, "METMCTL1", 8, 0) != 8 ||
            dup2(m, 60) < 0 || dup2(v, 61) < 0 || close(m) != 0 || close(v) != 0 ||
            pthread_create(&th, NULL, flip, NULL) != 0) {
            perror("ctlrace setup");
            return 1;
        }
    } else if (!strcmp(mode, "name")) {
        prctl(PR_SET_NAME, "\033]0;owned\007\033[2J", 0, 0, 0);
    } else if (!strcmp(mode, "nodump")) {
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
    printf("ready\n");
    fflush(stdout);
    char stop[4200];
    snprintf(stop, sizeof stop, "%s/stop", dir);
    while (access(stop, F_OK) != 0) {
        if (!strcmp(mode, "swap") && argc > 3)
            swap_traces(argv[3]);
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    if (kept >= 0) {
        char head[64] = "";
        ssize_t n = pread(kept, head, sizeof head, 0);
        for (ssize_t i = 0; i < n; i++)
            if (head[i] == '\0' || head[i] == '\n')
                head[i] = '.';
        report("memfd", head, n > 0 ? (size_t)n : 0);
    }
    if (!strcmp(mode, "swap")) {
        char s[32];
        int k = snprintf(s, sizeof s, "%d", swaps);
        report("swapped", s, (size_t)k);
    }
    return 0;
}
