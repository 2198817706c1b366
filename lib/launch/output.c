/*
 * output.c - whether a run's trace can be written where asked (launch.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launch.h"

const char *launch_dir_problem(const char *dir, char *buf, size_t cap)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        snprintf(buf, cap, "directory %s: %s", dir, strerror(errno));
        return buf;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(buf, cap, "%s is not a directory", dir);
        return buf;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(buf, cap, "cannot create files in %s: %s", dir, strerror(errno));
        return buf;
    }
    return NULL;
}

const char *launch_output_problem(const char *file, int follow, char *buf, size_t cap)
{
    struct stat st;
    int exists = lstat(file, &st) == 0;
    if (exists) {
        if (S_ISLNK(st.st_mode))
            return "is a symbolic link (the recorder does not follow one)";
        if (S_ISDIR(st.st_mode))
            return "is a directory";
        if (!S_ISREG(st.st_mode) && (follow || !S_ISCHR(st.st_mode)))
            return "is not a regular file";
        if (S_ISREG(st.st_mode) && st.st_uid != geteuid())
            return "belongs to another user";
        if (access(file, W_OK) != 0) {
            snprintf(buf, cap, "cannot be written: %s", strerror(errno));
            return buf;
        }
    } else if (errno != ENOENT) {
        snprintf(buf, cap, "%s", strerror(errno));
        return buf;
    }
    if (exists && (!follow || !S_ISREG(st.st_mode)))
        return NULL;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", file);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    return launch_dir_problem(dir, buf, cap);
}
