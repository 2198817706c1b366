/*
 * cmd_pprof.c - 'memtrace pprof' (not implemented yet).
 */
#include <stdio.h>

#include "commands.h"

int cmd_pprof(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "memtrace pprof: not implemented yet\n");
    return 1;
}
