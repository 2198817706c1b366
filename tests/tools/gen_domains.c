/*
 * gen_domains.c - writes tests/analyze/domaintrace.h's three-domain v3
 * trace to the path given, for the shell tests (tests/python/api.sh).
 */
#include "../analyze/domaintrace.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_domains OUT.ctf\n");
        return 2;
    }
    return dt_write_trace(argv[1]) < 0 || failures;
}
