/*
 * nofp.c - a program for the DWARF unwinding tests, built by
 * tests/record/unwind.sh with -O2 -fomit-frame-pointer (no frame-pointer
 * chain anywhere in its own code).
 *
 *   nofp deep N      N allocations made four calls deep:
 *                    main -> nofp_level1 -> nofp_level2 -> nofp_level3 -> nofp_level4 -> malloc
 *   nofp strdup N    N strdup calls from nofp_copy_name (glibc's strdup has
 *                    no frame pointer either)
 *
 * noipa keeps each function a real, separately named frame (no inlining,
 * cloning or sibling calls).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile long sink;

__attribute__((noipa)) static char *nofp_level4(size_t n)
{
    char *p = malloc(n);
    if (p)
        p[0] = (char)n;
    sink += n;
    return p;
}

__attribute__((noipa)) static char *nofp_level3(size_t n)
{
    char *p = nofp_level4(n + 1);
    sink += 3;
    return p;
}

__attribute__((noipa)) static char *nofp_level2(size_t n)
{
    char *p = nofp_level3(n + 1);
    sink += 2;
    return p;
}

__attribute__((noipa)) static char *nofp_level1(size_t n)
{
    char *p = nofp_level2(n + 1);
    sink += 1;
    return p;
}

__attribute__((noipa)) static char *nofp_copy_name(const char *s)
{
    char *p = strdup(s);
    if (p)
        sink += p[0];
    return p;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: nofp deep|strdup N\n");
        return 2;
    }
    long n = atol(argv[2]);
    int deep = strcmp(argv[1], "deep") == 0;
    static const char name[] = "a name long enough to be worth sampling, "
                               "copied again and again by nofp_copy_name";
    for (long i = 0; i < n; i++) {
        char *p = deep ? nofp_level1(200) : nofp_copy_name(name);
        free(p);
    }
    return (int)(sink & 0);
}
