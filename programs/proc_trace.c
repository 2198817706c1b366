/*
 * proc_trace.c - which trace a running process has open (see
 * proc_trace.h), read from /proc/PID/fd.
 */
#include "proc_trace.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The trace the process has open, named after base (FILE, FILE-NNNN or
 * FILE-NNNN.PID; FILE.PID or FILE.PID.K, what the first process writes
 * once it has exec'd another program, as a wrapper such as env or a pyenv
 * shim does; each possibly with .partNNNN for a piece of a rotated
 * recording): 1 and its path in out, or 0. */
int proc_open_trace(int pid, const char *base, char *out, size_t cap)
{
    const char *b = strrchr(base, '/');
    b = b ? b + 1 : base;
    size_t bl = strlen(b);
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/fd", pid);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d)) != NULL) {
        char p[384], link[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        ssize_t n = readlink(p, link, sizeof link - 1);
        if (n <= 0)
            continue;
        link[n] = '\0';
        const char *lb = strrchr(link, '/');
        lb = lb ? lb + 1 : link;
        if (strncmp(lb, b, bl) != 0)
            continue;
        const char *s = lb + bl;
        if (*s == '-') {
            s++;
            size_t k = strspn(s, "0123456789");
            if (k == 0)
                continue;
            s += k;
            if (*s == '.' && s[1] >= '0' && s[1] <= '9') {
                s++;
                s += strspn(s, "0123456789");
            }
        }
        char own[32];
        size_t ol = (size_t)snprintf(own, sizeof own, ".%d", pid);
        if (*s == '.' && !strncmp(s, own, ol) && (s[ol] == '\0' || s[ol] == '.')) {
            /* FILE.PID[.K]: this process, after an exec */
            s += ol;
            if (*s == '.' && s[1] >= '0' && s[1] <= '9')
                s += 1 + strspn(s + 1, "0123456789");
        }
        if (!strncmp(s, ".part", 5) && s[5]) {   /* a piece of a rotated recording */
            s += 5;
            s += strspn(s, "0123456789");
        }
        if (*s)
            continue;
        snprintf(out, cap, "%s", link);
        found = 1;
    }
    closedir(d);
    return found;
}
