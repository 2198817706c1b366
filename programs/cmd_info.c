/*
 * cmd_info.c - 'memtrace info' (not implemented yet).
 */
#include <stdio.h>

#include "commands.h"

int cmd_info(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "memtrace info: not implemented yet\n");
    return 1;
}
