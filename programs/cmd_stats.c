/*
 * cmd_stats.c - 'memtrace stats' (not implemented yet).
 */
#include <stdio.h>

#include "commands.h"

int cmd_stats(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "memtrace stats: not implemented yet\n");
    return 1;
}
