/*
 * reserve.c - memory committed inside a reservation, as V8 grows its heap:
 * 256 MiB reserved with PROT_NONE, 64 MiB of it committed with mprotect in
 * pieces of 256 KiB and written, the first 16 pieces made read-only and
 * writable again (a JIT's W^X flips: not a second commit), then the last
 * 16 MiB decommitted (PROT_NONE, MADV_DONTNEED): 48 MiB stay committed.
 * A failing mprotect fails as before (-1, ENOMEM). Prints "ok".
 *
 *   reserve [GOFILE]   with GOFILE: prints "ready", waits for GOFILE to
 *                      exist (an attach in between), does the above,
 *                      prints "held" and waits for GOFILE.stop to exist
 *                      before it exits, the 48 MiB still committed
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PIECE (256u << 10)

static void wait_for(const char *path)
{
    struct timespec ms = { 0, 1000000 };
    while (access(path, F_OK) != 0)
        nanosleep(&ms, NULL);
}

int main(int argc, char **argv)
{
    char stop[4096];
    if (argc > 1) {
        snprintf(stop, sizeof stop, "%s.stop", argv[1]);
        printf("ready\n");
        fflush(stdout);
        wait_for(argv[1]);
    }
    size_t reserve = (size_t)256 << 20, commit = (size_t)64 << 20, drop = (size_t)16 << 20;
    char *r = mmap(NULL, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        return 1;
    for (size_t off = 0; off < commit; off += PIECE) {
        if (mprotect(r + off, PIECE, PROT_READ | PROT_WRITE) != 0)
            return 1;
        memset(r + off, 1, PIECE);
    }
    for (size_t off = 0; off < 16 * PIECE; off += PIECE)
        if (mprotect(r + off, PIECE, PROT_READ | PROT_EXEC) != 0 ||
            mprotect(r + off, PIECE, PROT_READ | PROT_WRITE) != 0)
            return 1;
    if (mprotect(r + commit - drop, drop, PROT_NONE) != 0 ||
        madvise(r + commit - drop, drop, MADV_DONTNEED) != 0)
        return 1;
    errno = 0;
    if (mprotect((void *)4096, 4096, PROT_READ | PROT_WRITE) != -1 || errno != ENOMEM)
        return 2;
    if (argc > 1) {
        printf("held\n");
        fflush(stdout);
        wait_for(stop);
    }
    printf("ok\n");
    return 0;
}
