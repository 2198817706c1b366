/*
 * growing.c - a small service with one leak among well-behaved sites, for
 * `memtrace leaks`: leak_session keeps 256 bytes per request forever;
 * cache_put keeps the last 512 entries (full after a tenth of the run, then
 * flat); load_config loads 2 MiB once at start; handle churns a buffer per
 * request. Arguments: the number of requests (default 40000), and
 * "bounded" to make leak_session keep only its last 64 sessions (no leak).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CACHE 512

struct session {
    struct session *next;
    char data[248];
};

static struct session *sessions;
static char *cache[CACHE];
char *config; /* not static: the compiler must keep it */

__attribute__((noinline)) static void load_config(void)
{
    config = malloc(2 << 20);
    memset(config, 1, 2 << 20);
}

static int bounded;

__attribute__((noinline)) static void leak_session(int i)
{
    if (bounded && i >= 64) {
        /* drop the oldest of the last 64: the list's tail */
        struct session **p = &sessions;
        while ((*p)->next)
            p = &(*p)->next;
        free(*p);
        *p = NULL;
    }
    struct session *s = malloc(sizeof *s);
    s->next = sessions;
    s->data[0] = (char)i;
    sessions = s;
}

__attribute__((noinline)) static void cache_put(int i)
{
    free(cache[i % CACHE]);
    cache[i % CACHE] = malloc(1024);
    cache[i % CACHE][0] = (char)i;
}

__attribute__((noinline)) static int handle(int i)
{
    char *buf = malloc(4096);
    memset(buf, i, 4096);
    int r = buf[i % 4096];
    free(buf);
    return r;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 40000, sum = 0;
    bounded = argc > 2 && !strcmp(argv[2], "bounded");
    load_config();
    for (int i = 0; i < n; i++) {
        sum += handle(i) + config[i % (2 << 20)];
        if (i < n / 10 || i % 10 == 0)
            cache_put(i);
        leak_session(i);
        if (i % 200 == 0) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
    return sum == -1;
}
