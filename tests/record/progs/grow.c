/*
 * grow.c - programs whose memory depends on what the allocator says of its
 * blocks (tests/record/faithful.sh):
 *   grow usable NODES ROUNDS  nodes that fill up to malloc_usable_size and
 *                             only then ask for more, a little at a time
 *                             (redis's sds strings and listpacks use the
 *                             usable size as their capacity)
 *   grow double MIB           one buffer doubled by realloc from 1 MiB to
 *                             MIB MiB, every byte written
 * Both print "TRUTH live=<bytes requested by the blocks live at exit>
 * peak=<most bytes requested live at once>" and the process's peak RSS,
 * "HWM kib=<VmHWM>", and leave their blocks allocated at exit.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long hwm_kib(void)
{
    char line[256];
    long v = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld", &v) == 1)
            break;
    fclose(f);
    return v;
}

struct node {
    char *buf;
    size_t len, cap, requested;
};

__attribute__((noinline)) static char *node_grow(char *buf, size_t want)
{
    return realloc(buf, want);
}

__attribute__((noinline)) static char *node_new(size_t size)
{
    return malloc(size);
}

static int usable(int nodes, int rounds)
{
    struct node *v = calloc((size_t)nodes, sizeof *v);
    size_t live = (size_t)nodes * sizeof *v, peak = 0;
    for (int i = 0; i < nodes; i++) {
        v[i].requested = 40;
        v[i].buf = node_new(40);
        v[i].cap = malloc_usable_size(v[i].buf);
        live += 40;
    }
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < nodes; i++) {
            struct node *n = &v[i];
            if (n->len + 24 > n->cap) {
                size_t want = n->len + 24;
                n->buf = node_grow(n->buf, want);
                live += want - n->requested;
                n->requested = want;
                n->cap = malloc_usable_size(n->buf);
            }
            memset(n->buf + n->len, 'x', 24);
            n->len += 24;
        }
        if (live > peak)
            peak = live;
    }
    printf("TRUTH live=%zu peak=%zu\n", live, peak);
    return 0;
}

static int doubling(size_t mib)
{
    size_t size = 1 << 20;
    char *p = malloc(size);
    memset(p, 1, size);
    while (size < mib << 20) {
        p = node_grow(p, size * 2);
        memset(p + size, 1, size);
        size *= 2;
    }
    printf("TRUTH live=%zu peak=%zu\n", size, size);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = 2;
    if (argc == 4 && !strcmp(argv[1], "usable"))
        rc = usable(atoi(argv[2]), atoi(argv[3]));
    else if (argc == 3 && !strcmp(argv[1], "double"))
        rc = doubling((size_t)atol(argv[2]));
    else
        fprintf(stderr, "usage: grow usable NODES ROUNDS | grow double MIB\n");
    printf("HWM kib=%ld\n", hwm_kib());
    return rc;
}
