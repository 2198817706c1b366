/*
 * decode.c - decodes every event of a trace with the codec's reader and
 * nothing else (the decoding half of `memtrace recode`), for the codec
 * benchmark.
 *
 *   decode [-s] TRACE     -s: skip backtraces (reader option skip_backtraces)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/trace.h"

int main(int argc, char **argv)
{
    int skip = argc > 2 && strcmp(argv[1], "-s") == 0;
    if (argc != 2 + skip) {
        fprintf(stderr, "usage: decode [-s] TRACE\n");
        return 2;
    }
    mt_reader_options o = {.skip_backtraces = skip};
    char *err = NULL;
    mt_reader *r = mt_reader_open(argv[1 + skip], &o, &err);
    if (!r) {
        fprintf(stderr, "decode: %s\n", err);
        return 1;
    }
    mt_event ev;
    unsigned long long events = 0, frames = 0, check = 0;
    int rc;
    while ((rc = mt_reader_next(r, &ev)) == 1) {
        events++;
        frames += ev.backtrace_length;
        if (ev.backtrace_length)
            check ^= ev.backtrace[ev.backtrace_length - 1];
    }
    if (rc < 0) {
        fprintf(stderr, "decode: %s\n", mt_reader_error(r));
        return 1;
    }
    printf("%llu events, %llu frames (%llx)\n", events, frames, check);
    mt_reader_close(r);
    return 0;
}
