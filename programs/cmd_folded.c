/*
 * cmd_folded.c - 'memtrace folded' (not implemented yet).
 */
#include <stdio.h>

#include "commands.h"

int cmd_folded(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "memtrace folded: not implemented yet\n");
    return 1;
}
