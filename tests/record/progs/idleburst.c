/*
 * idleburst.c - idle for a while (the recorder's writer thread slows its
 * pace), then a burst: 200,000 blocks of 64 bytes allocated, then freed.
 * For tests/record/writer_pace.sh. Prints "ok".
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 200000

int main(void)
{
    static void *keep[N];
    struct timespec idle = { 1, 500 * 1000 * 1000 };
    nanosleep(&idle, NULL);
    for (int i = 0; i < N; i++)
        if (!(keep[i] = malloc(64)))
            return 1;
    for (int i = 0; i < N; i++)
        free(keep[i]);
    puts("ok");
    return 0;
}
