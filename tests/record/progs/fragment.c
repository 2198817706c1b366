/*
 * fragment.c - a heap fragmented on purpose, for the resident-memory
 * ledger's test: N blocks of 100 bytes (default a million), every other
 * one freed, so that glibc's malloc keeps N/2 free chunks of 112 bytes
 * resident between live ones; then, given RAW_MIB, that many MiB mapped
 * with the raw system call (which no interposer sees) and touched: memory
 * the ledger cannot explain. Prints "ok" and its VmRSS in bytes at the
 * end ("ok RSS").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static long long vmrss(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %lld", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
    size_t raw = argc > 2 ? strtoul(argv[2], NULL, 10) << 20 : 0;
    char **v = malloc(n * sizeof *v);
    if (!v)
        return 1;
    for (size_t i = 0; i < n; i++) {
        v[i] = malloc(100);
        if (!v[i])
            return 1;
        memset(v[i], 1, 100);
    }
    for (size_t i = 0; i < n; i += 2) {
        free(v[i]);
        v[i] = NULL;
    }
    if (raw) {
        char *p = (char *)syscall(SYS_mmap, NULL, raw, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return 1;
        memset(p, 2, raw);
    }
    printf("ok %lld\n", vmrss());
    return 0;
}
