/*
 * cmd_lifetimes.c - 'memtrace lifetimes' (not implemented yet).
 */
#include <stdio.h>

#include "commands.h"

int cmd_lifetimes(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "memtrace lifetimes: not implemented yet\n");
    return 1;
}
