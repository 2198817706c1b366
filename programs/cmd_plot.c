/*
 * cmd_plot.c - 'memtrace plot' (not implemented yet).
 */
#include <stdio.h>

#include "commands.h"

int cmd_plot(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "memtrace plot: not implemented yet\n");
    return 1;
}
