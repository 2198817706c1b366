/*
 * cmd_run.c - 'memtrace run' (not implemented yet).
 */
#include <stdio.h>

#include "commands.h"

int cmd_run(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "memtrace run: not implemented yet\n");
    return 1;
}
