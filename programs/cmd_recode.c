/*
 * cmd_recode.c - 'memtrace recode' (not implemented yet).
 */
#include <stdio.h>

#include "commands.h"

int cmd_recode(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "memtrace recode: not implemented yet\n");
    return 1;
}
