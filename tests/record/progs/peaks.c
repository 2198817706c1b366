/*
 * peaks.c - resident memory that rises in steps between the recorder's
 * regular ledger readings: ROUNDS times, 32 MiB more than the round before
 * is mapped and written, held until RSSFILE (the recording's FILE.rss) has
 * a ledger line whose RSS covers it, and unmapped. Prints "ok", or why it
 * gave up (no such line within 120 s: exit 1).
 *
 *   peaks RSSFILE ROUNDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* The largest rss= of RSSFILE's ledger lines, 0 if none. */
static long long largest_reading(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[1024];
    long long best = 0;
    while (fgets(line, sizeof line, f)) {
        const char *s = line[0] == 'L' && line[1] == ' ' ? strstr(line, " rss=") : NULL;
        long long v;
        if (s && sscanf(s + 5, "%lld", &v) == 1 && v > best)
            best = v;
    }
    fclose(f);
    return best;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int rounds = atoi(argv[2]);
    for (int i = 1; i <= rounds; i++) {
        size_t size = (size_t)i * (32u << 20);
        char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return 1;
        memset(p, 1, size);
        struct timespec ms = { 0, 5000000 };
        int waited = 0;
        while (largest_reading(argv[1]) < (long long)size) {
            if (++waited > 24000) {   /* 120 s: far above a reading's pace */
                printf("no ledger reading of %zu bytes\n", size);
                return 1;
            }
            nanosleep(&ms, NULL);
        }
        munmap(p, size);
    }
    printf("ok\n");
    return 0;
}
