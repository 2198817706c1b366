/*
 * cmd_dump.c - 'memtrace dump' (not implemented yet).
 */
#include <stdio.h>

#include "commands.h"

int cmd_dump(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "memtrace dump: not implemented yet\n");
    return 1;
}
