/*
 * threads.c - 16 threads allocating, reallocating and freeing, handing
 * blocks to each other; prints a checksum that does not depend on timing.
 * Exit status 0 if every block's contents survived.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 16, ROUNDS = 40000, SLOTS = 32 };
static unsigned char *slots[THREADS][SLOTS];
static size_t sizes[THREADS][SLOTS];
static pthread_mutex_t locks[THREADS];
static unsigned long sums[THREADS], bad[THREADS];

static void *worker(void *arg)
{
    int me = (int)(intptr_t)arg;
    unsigned r = (unsigned)me * 2654435761u + 7;
    for (int i = 0; i < ROUNDS; i++) {
        r = r * 1103515245u + 12345u;
        size_t size = 1 + (r >> 8) % 3000;
        unsigned char *p = (r >> 3) & 1 ? malloc(size) : calloc(size, 1);
        memset(p, (int)(size & 0xff), size);
        if ((r >> 5) % 5 == 0) {
            size_t ns = size + (r >> 12) % 5000;
            p = realloc(p, ns);
            memset(p, (int)(ns & 0xff), ns);
            size = ns;
        }
        int owner = (int)((r >> 14) % THREADS), slot = (int)((r >> 20) % SLOTS);
        pthread_mutex_lock(&locks[owner]);
        unsigned char *old = slots[owner][slot];
        size_t os = sizes[owner][slot];
        slots[owner][slot] = p;
        sizes[owner][slot] = size;
        pthread_mutex_unlock(&locks[owner]);
        if (old) {
            for (size_t k = 0; k < os; k += 97)
                if (old[k] != (unsigned char)(os & 0xff))
                    bad[me]++;
            free(old);
        }
        sums[me] += size;
    }
    return NULL;
}

int main(void)
{
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_mutex_init(&locks[i], NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    unsigned long total = 0, nbad = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        total += sums[i];
        nbad += bad[i];
    }
    printf("threads=%d bytes=%lu corrupt=%lu\n", THREADS, total, nbad);
    return nbad ? 1 : 0;
}
