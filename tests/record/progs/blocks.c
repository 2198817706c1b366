/*
 * blocks.c - known allocations for the end-to-end sampling tests:
 *   blocks N SIZE DEPTH
 * calls descend() DEPTH times recursively, then work() mallocs and frees N
 * blocks of SIZE bytes, so every sampled stack is DEPTH + 2 or more frames
 * deep and its innermost frame is work.
 */
#include <stdio.h>
#include <stdlib.h>

static void *keep(void *p) { __asm__ volatile("" : : "r"(p) : "memory"); return p; }

__attribute__((noinline)) static void work(long n, size_t size)
{
    for (long i = 0; i < n; i++)
        free(keep(malloc(size)));
}

__attribute__((noinline)) static int descend(int depth, long n, size_t size)
{
    if (depth > 0) {
        int r = descend(depth - 1, n, size);
        __asm__ volatile("" : : "r"(r) : "memory");   /* no tail call */
        return r + 1;
    }
    work(n, size);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: blocks N SIZE DEPTH\n");
        return 2;
    }
    descend(atoi(argv[3]), atol(argv[1]), (size_t)atol(argv[2]));
    return 0;
}
