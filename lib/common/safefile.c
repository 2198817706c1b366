/*
 * safefile.c - creating output files and opening a trace's companion files
 * safely where other users may write (see safefile.h): exclusive creation
 * under an unpredictable name then rename, never writing through another
 * user's link; companion files read only when regular, not a link, of the
 * trace's owner or the caller, and writable by no one else. The creation
 * itself (mt_outfile_create, mt_outfile_finish) allocates nothing, for the
 * recorder inside the profiled program.
 */
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t random64(void)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        r ^= (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)ts.tv_sec << 20 ^
             (uint64_t)(uintptr_t)&r ^ (uint64_t)getpid() << 40;
    }
    return r;
}

static void clear(mt_outfile *o)
{
    free(o->path);
    free(o->tmp);
    o->path = o->tmp = NULL;
    o->fd = -1;
}

int mt_outfile_create(const char *path, char *tmp, size_t cap, mode_t mode, int flags,
                      const char **why)
{
    tmp[0] = 0;
    int regular_only = flags & MT_OUTFILE_REGULAR;
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
            if (regular_only) {
                *why = "is a symbolic link (not followed)";
                return -1;
            }
            if (st.st_uid != geteuid() && st.st_uid != 0) {
                *why = "is a symbolic link of another user (not followed)";
                return -1;
            }
            goto in_place;
        }
        if (!regular_only && (S_ISCHR(st.st_mode) || (S_ISFIFO(st.st_mode) && st.st_uid == geteuid())))
            goto in_place;
        if (S_ISDIR(st.st_mode)) {
            *why = "is a directory";
            return -1;
        }
        if (!S_ISREG(st.st_mode)) {
            *why = "is not a regular file";
            return -1;
        }
        if (st.st_uid != geteuid()) {
            *why = "belongs to another user";
            return -1;
        }
    } else if (errno != ENOENT) {
        *why = strerror(errno);
        return -1;
    }
    const char *slash = strrchr(path, '/');
    int dlen = slash ? (int)(slash - path) + 1 : 0;
    const char *base = slash ? slash + 1 : path;
    if (!*base) {
        *why = "is a directory";
        return -1;
    }
    int e = EEXIST;
    for (int i = 0; i < 100 && e == EEXIST; i++) {
        int n = snprintf(tmp, cap, "%.*s.%.160s.tmp.%ld.%016llx", dlen, path, base, (long)getpid(),
                         (unsigned long long)random64());
        if (n < 0 || (size_t)n >= cap) {
            tmp[0] = 0;
            *why = strerror(ENAMETOOLONG);
            return -1;
        }
        int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd >= 0)
            return fd;
        e = errno;
    }
    tmp[0] = 0;
    *why = strerror(e);
    return -1;
in_place:   /* a device, a FIFO of ours, a link we trust: written in place */
    {
        int fd = open(path, O_WRONLY | O_CLOEXEC | (S_ISLNK(st.st_mode) ? O_CREAT | O_TRUNC : O_NOFOLLOW),
                      mode);
        if (fd < 0)
            *why = strerror(errno);
        return fd;
    }
}

int mt_outfile_finish(int fd, const char *tmp, const char *path, const char **why)
{
    int rc = 0;
    *why = NULL;
    if (fd >= 0 && close(fd) != 0) {
        *why = strerror(errno);
        rc = -1;
    }
    if (tmp && *tmp) {
        if (rc == 0 && rename(tmp, path) != 0) {
            *why = strerror(errno);
            rc = -1;
        }
        if (rc != 0)
            unlink(tmp);
    }
    return rc;
}

int mt_outfile_open(mt_outfile *o, const char *path, mode_t mode, const char **why)
{
    o->fd = -1;
    o->tmp = NULL;
    size_t cap = strlen(path) + 200;
    if (!(o->path = strdup(path)) || !(o->tmp = malloc(cap))) {
        *why = strerror(ENOMEM);
        clear(o);
        return -1;
    }
    o->fd = mt_outfile_create(path, o->tmp, cap, mode, 0, why);
    if (o->fd < 0) {
        clear(o);
        return -1;
    }
    if (!o->tmp[0]) {   /* written in place */
        free(o->tmp);
        o->tmp = NULL;
    }
    return 0;
}

int mt_outfile_commit(mt_outfile *o, const char **why)
{
    int rc = mt_outfile_finish(o->fd, o->tmp, o->path, why);
    o->fd = -1;
    clear(o);
    return rc;
}

void mt_outfile_abort(mt_outfile *o)
{
    if (o->fd >= 0)
        close(o->fd);
    if (o->tmp)
        unlink(o->tmp);
    clear(o);
}

FILE *mt_outfile_fopen(mt_outfile *o, const char *path, const char **why)
{
    if (strcmp(path, "-") == 0) {
        o->fd = -1;
        o->path = o->tmp = NULL;
        return stdout;
    }
    if (mt_outfile_open(o, path, 0666, why) != 0)
        return NULL;
    FILE *f = fdopen(o->fd, "w");
    if (!f) {
        *why = strerror(errno);
        mt_outfile_abort(o);
    }
    return f;
}

int mt_outfile_fclose(mt_outfile *o, FILE *f, int failed, const char **why)
{
    *why = NULL;
    if (f == stdout && !o->path) {
        if (fflush(f) != 0 || ferror(f)) {
            *why = strerror(errno ? errno : EIO);
            return -1;
        }
        return failed ? -1 : 0;
    }
    int bad = ferror(f) || failed;
    if (fclose(f) != 0 || bad) {
        *why = bad ? "write error" : strerror(errno);
        o->fd = -1;
        mt_outfile_abort(o);
        return -1;
    }
    o->fd = -1;
    return mt_outfile_commit(o, why);
}

int mt_sidecar_open(const char *path, const char *trace, const char **why)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        *why = e == ELOOP ? "is a symbolic link (not followed)" : strerror(e);
        errno = e;
        return -1;
    }
    struct stat st, ts;
    uid_t owner = trace && stat(trace, &ts) == 0 ? ts.st_uid : geteuid();
    *why = NULL;
    if (fstat(fd, &st) != 0)
        *why = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        *why = "is not a regular file";
    else if (st.st_uid != owner && st.st_uid != geteuid())
        *why = "belongs to another user than the trace's owner";
    else if (st.st_mode & (S_IWGRP | S_IWOTH))
        *why = "may be written by other users";
    else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
        *why = strerror(errno);
    if (*why) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}
