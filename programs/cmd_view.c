/*
 * cmd_view.c - 'memtrace view' (not implemented yet).
 */
#include <stdio.h>

#include "commands.h"

int cmd_view(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "memtrace view: not implemented yet\n");
    return 1;
}
