/*
 * cmd_top.c - 'memtrace top' (not implemented yet).
 */
#include <stdio.h>

#include "commands.h"

int cmd_top(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "memtrace top: not implemented yet\n");
    return 1;
}
