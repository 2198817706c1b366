/*
 * attach_files.c - the files of an attached process as 'memtrace attach'
 * touches them (see attach_files.h): inside its root only, O_PATH first,
 * regular files only, its descriptors taken with pidfd_getfd, copies
 * bounded, outputs created through lib/common/safefile.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach_files.h"
#include "safefile.h"

#ifndef F_GET_SEALS
#define F_GET_SEALS 1034
#endif

int attach_open_in_root(const attach_target *t, const char *path, int extra, char *why,
                        size_t cap)
{
    char rp[64];
    snprintf(rp, sizeof rp, "/proc/%d/root", (int)t->pid);
    int root = open(rp, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) {
        snprintf(why, cap, "%s: %s", rp, strerror(errno));
        return -1;
    }
    if (!attach_target_same(t)) {   /* the root of another process that took the PID */
        close(root);
        snprintf(why, cap, "the process has exited");
        errno = ESRCH;
        return -1;
    }
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (uint64_t)(O_PATH | O_NOFOLLOW | O_CLOEXEC | extra);
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    int fd = (int)syscall(SYS_openat2, root, path, &how, sizeof how);
    int e = errno;
    close(root);
    if (fd < 0) {
        snprintf(why, cap, "%s (in the process's root): %s", path,
                 e == ELOOP ? "a symbolic link on the way (not followed)" : strerror(e));
        errno = e;
    }
    return fd;
}

int attach_open_regular(int opath, uid_t owner, struct stat *st, char *why, size_t cap)
{
    if (fstat(opath, st) != 0) {
        snprintf(why, cap, "%s", strerror(errno));
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        snprintf(why, cap, "not a regular file (not read)");
        errno = EINVAL;
        return -1;
    }
    if (owner != (uid_t)-1 && st->st_uid != owner) {
        snprintf(why, cap, "belongs to uid %u, not to the process's uid %u (not read)",
                 (unsigned)st->st_uid, (unsigned)owner);
        errno = EPERM;
        return -1;
    }
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", opath);
    int fd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat again;
    if (fd < 0 || fstat(fd, &again) != 0 || again.st_dev != st->st_dev ||
        again.st_ino != st->st_ino) {
        snprintf(why, cap, "%s", fd < 0 ? strerror(errno) : "changed while opened");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *st = again;
    return fd;
}

int attach_open_mapped(const attach_target *t, const char *file, uint64_t base, uint64_t end)
{
    char path[128], why[256];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d/map_files/%llx-%llx", (int)t->pid,
             (unsigned long long)base, (unsigned long long)end);
    int p = open(path, O_PATH | O_CLOEXEC);
    if (p >= 0 && !attach_target_same(t)) {
        close(p);
        return -1;
    }
    if (p < 0)
        p = attach_open_in_root(t, file, 0, why, sizeof why);
    if (p < 0)
        return -1;
    int fd = attach_open_regular(p, (uid_t)-1, &st, why, sizeof why);
    close(p);
    return fd;
}

int attach_fill_memfd(const attach_target *t, int target_fd, const char *lib, char *why,
                      size_t cap)
{
    int fd = (int)syscall(SYS_pidfd_getfd, t->pidfd, target_fd, 0);
    if (fd < 0) {
        snprintf(why, cap, "cannot take the process's descriptor %d (pidfd_getfd): %s",
                 target_fd, strerror(errno));
        return -1;
    }
    struct stat st;
    char name[128] = "", self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(self, name, sizeof name - 1);
    name[n > 0 ? n : 0] = '\0';
    int acc = fcntl(fd, F_GETFL);
    /* A memfd: a regular file that takes seals (shmem), unnamed, empty,
     * open for writing; anything else is not what memfd_create made. */
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || fcntl(fd, F_GET_SEALS) < 0 ||
        st.st_size != 0 || acc < 0 || (acc & O_ACCMODE) == O_RDONLY ||
        strncmp(name, "/memfd:libmemtrace.so", 21) != 0) {
        snprintf(why, cap, "the process's descriptor %d is not the empty memfd it was to "
                           "create (nothing written)", target_fd);
        close(fd);
        return -1;
    }
    int in = open(lib, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat ls;
    if (in < 0 || fstat(in, &ls) != 0 || !S_ISREG(ls.st_mode)) {
        snprintf(why, cap, "%s: %s", lib, in < 0 ? strerror(errno) : "not a regular file");
        if (in >= 0)
            close(in);
        close(fd);
        return -1;
    }
    char buf[65536];
    off_t done = 0;
    int rc = 0;
    while (done < ls.st_size) {
        ssize_t r = read(in, buf, sizeof buf);
        if (r <= 0 || write(fd, buf, (size_t)r) != r) {
            rc = -1;
            break;
        }
        done += r;
    }
    if (rc != 0)
        snprintf(why, cap, "cannot copy %s into the process's memfd: %s", lib, strerror(errno));
    close(in);
    close(fd);
    return rc;
}

int attach_copy_out(const attach_target *t, const char *inner, const char *dest, char *why,
                    size_t cap)
{
    char w[256];
    int p = attach_open_in_root(t, inner, 0, w, sizeof w);
    if (p < 0) {
        if (errno == ENOENT)
            return 0;
        snprintf(why, cap, "%s", w);
        return -1;
    }
    struct stat st;
    int in = attach_open_regular(p, t->uid, &st, w, sizeof w);
    close(p);
    if (in < 0) {
        snprintf(why, cap, "%s (in the process's root): %s", inner, w);
        return -1;
    }
    /* At most what the file holds on disk: a trace is never sparse, and a
     * sparse file of any apparent size would otherwise fill ours. */
    off_t bound = (off_t)st.st_blocks * 512;
    if (st.st_size > bound + 65536) {
        snprintf(why, cap, "%s (in the process's root): a sparse file of %lld bytes, not a "
                           "trace (not copied)", inner, (long long)st.st_size);
        close(in);
        return -1;
    }
    if (bound > st.st_size)
        bound = st.st_size;
    mt_outfile o;
    const char *ow;
    if (mt_outfile_open(&o, dest, 0600, &ow) != 0) {
        snprintf(why, cap, "%s: %s", dest, ow);
        close(in);
        return -1;
    }
    char buf[65536];
    off_t done = 0;
    int rc = 0;
    while (done < bound) {
        size_t want = (size_t)(bound - done < (off_t)sizeof buf ? bound - done : (off_t)sizeof buf);
        ssize_t r = read(in, buf, want);
        if (r == 0)
            break;
        if (r < 0 || write(o.fd, buf, (size_t)r) != r) {
            snprintf(why, cap, "%s: %s", r < 0 ? inner : dest, strerror(errno));
            rc = -1;
            break;
        }
        done += r;
    }
    close(in);
    if (rc != 0) {
        mt_outfile_abort(&o);
        return -1;
    }
    if (mt_outfile_commit(&o, &ow) != 0) {
        snprintf(why, cap, "%s: %s", dest, ow);
        return -1;
    }
    /* Removed inside: its directory opened in the root as the file was, the
     * name removed only if it is still the file copied. */
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", inner);
    char *slash = strrchr(dir, '/');
    if (slash && slash[1]) {
        const char *base = inner + (slash - dir) + 1;
        slash[slash == dir] = '\0';
        int d = attach_open_in_root(t, dir, O_DIRECTORY, w, sizeof w);
        struct stat now;
        if (d >= 0) {
            char self[64];
            snprintf(self, sizeof self, "/proc/self/fd/%d", d);
            int dd = open(self, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (dd >= 0 && fstatat(dd, base, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
                now.st_dev == st.st_dev && now.st_ino == st.st_ino)
                unlinkat(dd, base, 0);
            if (dd >= 0)
                close(dd);
            close(d);
        }
    }
    return 1;
}

int attach_user_can_create(const attach_target *t, const char *dir)
{
    pid_t c = fork();
    if (c < 0)
        return -1;
    if (c == 0) {
        /* The user's file-system identity (groups first, while allowed). */
        if (setgroups((size_t)t->ngroups, t->groups) != 0 && geteuid() == 0)
            _exit(3);
        setfsgid(t->gid);
        setfsuid(t->uid);
        if ((uid_t)setfsuid((uid_t)-1) != t->uid)
            _exit(3);
        _exit(faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) == 0 ? 0 : 1);
    }
    int st;
    while (waitpid(c, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (!WIFEXITED(st) || WEXITSTATUS(st) > 1)
        return -1;
    return WEXITSTATUS(st) == 0;
}
