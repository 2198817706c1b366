/*
 * alloc_bench.c - an allocation-bound benchmark for the recorder: THREADS
 * threads each keep 4096 slots; every iteration frees a random slot and
 * mallocs a random size in 16..512 bytes into it (one malloc + one free),
 * touching the first byte. DEPTH extra frames above the loop make the
 * stacks deeper (0: ~5 frames at malloc, 20: ~25).
 *
 *   alloc_bench PAIRS THREADS DEPTH
 * Prints "pairs=N threads=T depth=D bytes=B seconds=S cpu=C": B = bytes
 * requested, S = wall time of the threads' work, C = CPU time of the
 * benchmark's threads (the recorder's writer thread not included).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SLOTS 4096

struct job {
    long pairs;
    int depth;
    unsigned seed;
    unsigned long long bytes;
    double cpu;   /* CPU seconds of the thread */
};

__attribute__((noinline)) static void loop(struct job *j)
{
    char *slots[SLOTS] = { 0 };
    uint64_t x = j->seed * 0x9e3779b97f4a7c15ULL + 1;
    unsigned long long bytes = 0;
    for (long i = 0; i < j->pairs; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        unsigned k = (unsigned)(x % SLOTS);
        size_t size = 16 + (size_t)((x >> 20) % 497);
        free(slots[k]);
        slots[k] = malloc(size);
        slots[k][0] = (char)i;
        bytes += size;
    }
    for (int k = 0; k < SLOTS; k++)
        free(slots[k]);
    j->bytes = bytes;
}

__attribute__((noinline)) static void nest(struct job *j, int depth)
{
    if (depth > 0)
        nest(j, depth - 1);
    else
        loop(j);
    __asm__ volatile("" ::: "memory");   /* no tail call: keep the frame */
}

static void *run(void *arg)
{
    struct job *j = arg;
    struct timespec ts;
    nest(j, j->depth);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    j->cpu = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    return NULL;
}

int main(int argc, char **argv)
{
    long pairs = argc > 1 ? atol(argv[1]) : 20000000;
    int threads = argc > 2 ? atoi(argv[2]) : 2;
    int depth = argc > 3 ? atoi(argv[3]) : 0;
    if (pairs < 1 || threads < 1 || threads > 64 || depth < 0) {
        fprintf(stderr, "usage: alloc_bench PAIRS THREADS DEPTH\n");
        return 2;
    }
    pthread_t th[64];
    struct job jobs[64];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int t = 0; t < threads; t++) {
        jobs[t].pairs = pairs / threads;
        jobs[t].depth = depth;
        jobs[t].seed = (unsigned)t + 1;
        pthread_create(&th[t], NULL, run, &jobs[t]);
    }
    unsigned long long bytes = 0;
    double cpu = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(th[t], NULL);
        bytes += jobs[t].bytes;
        cpu += jobs[t].cpu;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("pairs=%ld threads=%d depth=%d bytes=%llu seconds=%.3f cpu=%.3f\n", pairs, threads,
           depth, bytes, (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9,
           cpu);
    return 0;
}
