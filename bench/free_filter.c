/*
 * free_filter.c - how many free() calls the recorder sends to its table of
 * sampled blocks, and how many of those were not sampled blocks at all (the
 * filter's false positives: neighbours of a sampled block in its page).
 *
 *   LD_PRELOAD=build/libmemtrace.so MEMTRACE=/tmp/f.ctf \
 *       build/bench/free_filter [PAIRS [THREADS [MIN MAX]]]
 *
 * The workload is mallocbench's: THREADS threads (2), each PAIRS (10 M)
 * free+malloc pairs of sizes MIN..MAX (16..512) bytes over a ring of 4,096
 * live blocks. The counts come from the preloaded recorder
 * (mt_memprof_free_stats, found with dlsym so that the program also runs
 * without it; each worker calls mt_memprof_free_marked last, so that its
 * count is whole). Prints one line:
 *   frees=F marked=M lookups=L sampled=S false_positives=L-S per_million_frees=...
 * marked: frees behind a set filter bit (the neighbours of sampled blocks in
 * their 1 KiB granules, which the line bits turn away, and the lookups);
 * per_million_frees: the lookups' false positives.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SLOTS 4096

static long pairs = 10000000;
static unsigned lo = 16, hi = 512;
static uint64_t (*marked_fn)(void);

static void *work(void *arg)
{
    uint64_t x = 0x9E3779B97F4A7C15ull * (uintptr_t)arg;
    void **slot = calloc(SLOTS, sizeof *slot);
    if (!slot)
        return NULL;
    for (long i = 0; i < pairs; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        unsigned k = x % SLOTS;
        free(slot[k]);
        size_t sz = lo + (x >> 32) % (hi - lo + 1);
        slot[k] = malloc(sz);
        if (slot[k])
            ((char *)slot[k])[0] = (char)i;
    }
    for (int k = 0; k < SLOTS; k++)
        free(slot[k]);
    free(slot);
    if (marked_fn)
        marked_fn();   /* folds this thread's count in */
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = 2;
    if (argc > 1)
        pairs = atol(argv[1]);
    if (argc > 2)
        threads = atoi(argv[2]);
    if (argc > 4) {
        lo = (unsigned)atoi(argv[3]);
        hi = (unsigned)atoi(argv[4]);
    }
    if (pairs <= 0 || threads < 1 || threads > 64 || lo < 1 || hi < lo) {
        fprintf(stderr, "usage: free_filter [PAIRS [THREADS [MIN MAX]]]\n");
        return 2;
    }
    marked_fn = (uint64_t (*)(void))dlsym(RTLD_DEFAULT, "mt_memprof_free_marked");
    pthread_t th[64];
    for (int i = 0; i < threads; i++)
        if (pthread_create(&th[i], NULL, work, (void *)(uintptr_t)(i + 1)) != 0) {
            fprintf(stderr, "free_filter: cannot start a thread\n");
            return 1;
        }
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);

    void (*stats)(uint64_t *, uint64_t *) =
        (void (*)(uint64_t *, uint64_t *))dlsym(RTLD_DEFAULT, "mt_memprof_free_stats");
    if (!stats || !marked_fn) {
        fprintf(stderr, "free_filter: the recorder is not preloaded (LD_PRELOAD=libmemtrace.so)\n");
        return 1;
    }
    uint64_t lookups, found;
    stats(&lookups, &found);
    double frees = (double)pairs * threads + threads;   /* + each ring's own calloc'd array */
    uint64_t marked = marked_fn();
    printf("frees=%.0f marked=%llu lookups=%llu sampled=%llu false_positives=%llu "
           "per_million_frees=%.1f\n",
           frees, (unsigned long long)marked, (unsigned long long)lookups, (unsigned long long)found,
           (unsigned long long)(lookups - found), (double)(lookups - found) / frees * 1e6);
    return 0;
}
