/*
 * unwpipe.c - libunwind's memory-validation pipe, kept apart from the
 * program's descriptors.
 *
 * libunwind probes an address it is not sure of by writing one byte from
 * it into a pipe of its own, which it opens when it starts and again
 * whenever reading from it fails. A daemon that closes every descriptor
 * from 3 up and then opens a socket pair gets that pipe's old numbers;
 * libunwind would then read the program's bytes and write process memory
 * into its stream. So libunwind's calls to pipe2, read, write and close are
 * rebound (got.h) to the guards below: its pipe lives at 200 and above
 * (highfd.h), each end is remembered with its inode, and a read, write or
 * close of a remembered number that no longer holds that pipe fails with
 * EBADF without touching the descriptor (libunwind then opens a new pipe,
 * or takes the address as unreadable). Its other descriptors (the files
 * it reads) pass through.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "got.h"
#include "highfd.h"
#include "unwpipe.h"

#define ENDS 4

static struct end {
    int fd;           /* -1: free */
    dev_t dev;
    ino_t ino;
} ends[ENDS] = { { -1, 0, 0 }, { -1, 0, 0 }, { -1, 0, 0 }, { -1, 0, 0 } };
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned next_end;

/* 1: fd is a pipe end of ours and still that pipe; -1: it was ours but the
 * number now holds something else (or nothing); 0: never ours. *slot: its
 * entry. Under the lock. */
static int classify(int fd, int *slot)
{
    for (int i = 0; i < ENDS; i++) {
        if (ends[i].fd != fd || fd < 0)
            continue;
        *slot = i;
        struct stat st;
        if (fstat(fd, &st) != 0 || st.st_dev != ends[i].dev || st.st_ino != ends[i].ino)
            return -1;
        return 1;
    }
    return 0;
}

static void remember(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return;
    for (int i = 0; i < ENDS; i++)
        if (ends[i].fd == fd) {
            ends[i].dev = st.st_dev;
            ends[i].ino = st.st_ino;
            return;
        }
    struct end *e = &ends[next_end++ % ENDS];
    e->fd = fd;
    e->dev = st.st_dev;
    e->ino = st.st_ino;
}

static int guard_pipe2(int fds[2], int flags)
{
    int p[2];
    if (pipe2(p, flags | O_CLOEXEC) != 0)
        return -1;
    p[0] = mtr_high_fd(p[0]);
    p[1] = mtr_high_fd(p[1]);
    pthread_mutex_lock(&lock);
    remember(p[0]);
    remember(p[1]);
    pthread_mutex_unlock(&lock);
    fds[0] = p[0];
    fds[1] = p[1];
    return 0;
}

/* -1 (EBADF) when fd was ours and is not any more. */
static int stale(int fd)
{
    int slot = -1;
    pthread_mutex_lock(&lock);
    int c = classify(fd, &slot);
    pthread_mutex_unlock(&lock);
    if (c < 0) {
        errno = EBADF;
        return 1;
    }
    return 0;
}

static ssize_t guard_read(int fd, void *buf, size_t n)
{
    return stale(fd) ? -1 : read(fd, buf, n);
}

static ssize_t guard_write(int fd, const void *buf, size_t n)
{
    return stale(fd) ? -1 : write(fd, buf, n);
}

static int guard_close(int fd)
{
    int slot = -1;
    pthread_mutex_lock(&lock);
    int c = classify(fd, &slot);
    if (c != 0)
        ends[slot].fd = -1;
    pthread_mutex_unlock(&lock);
    if (c < 0) {
        errno = EBADF;   /* the program's descriptor now: not ours to close */
        return -1;
    }
    return close(fd);
}

int mtr_unwpipe_guard(void *libunwind)
{
    static const char *const names[] = { "pipe2", "read", "write", "close" };
    void *const targets[] = { (void *)guard_pipe2, (void *)guard_read, (void *)guard_write,
                              (void *)guard_close };
    return mtr_got_rebind(libunwind, names, targets, 4);
}
