/*
 * library.c - where the recorder's library is (launch.h).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buildinfo.h"   /* generated: MEMTRACE_LIBDIR, MEMTRACE_SOVERSION, MULTIARCH_TRIPLET */
#include "launch.h"

int launch_find_library(char *out, size_t len)
{
    const char *env = getenv("MEMTRACE_LIB");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return access(out, R_OK) == 0 ? 0 : -1;
    }
    char dirs[5][PATH_MAX];
    size_t n_dirs = 0;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = n > 0 ? (exe[n] = '\0', strrchr(exe, '/')) : NULL;
    if (slash) {
        *slash = '\0';
        static const char *const rel[] = { "", "/../lib", "/../lib64",
                                           "/../lib/" MULTIARCH_TRIPLET };
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
            if (snprintf(dirs[n_dirs], PATH_MAX, "%s%s", exe, rel[i]) < PATH_MAX)
                n_dirs++;
    }
    snprintf(dirs[n_dirs++], PATH_MAX, "%s", MEMTRACE_LIBDIR);
    static const char *const names[] = { "libmemtrace.so", "libmemtrace.so." MEMTRACE_SOVERSION };
    for (size_t d = 0; d < n_dirs; d++)
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (snprintf(out, len, "%s/%s", dirs[d], names[i]) < (int)len &&
                access(out, R_OK) == 0)
                return 0;
    return -1;
}
