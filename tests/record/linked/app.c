/*
 * app.c - a program linked with libmemtrace.so (not preloaded), for
 * tests/record/linked.sh: it calls memtrace_trace_if_requested(), and if
 * MEMTRACE is not set starts tracing itself with memtrace_start_tracing.
 * Prints "requested=R stop=S".
 */
#include <stdio.h>
#include <stdlib.h>

#include "memtrace/record.h"

__attribute__((noinline)) static void *linked_site(size_t n)
{
    void *p = malloc(n);
    __asm__ volatile("" : : "r"(p) : "memory");
    return p;
}

int main(int argc, char **argv)
{
    int r = memtrace_trace_if_requested();
    if (r == 0 && argc > 1 && memtrace_start_tracing(argv[1], 1.0 / 4096, "linked api") != 0)
        return 1;
    for (int i = 0; i < 100000; i++)
        free(linked_site(1000));
    (void)linked_site(1 << 20);   /* still live at the end */
    printf("requested=%d stop=%d\n", r, memtrace_stop_tracing());
    return 0;
}
