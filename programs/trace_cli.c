/*
 * trace_cli.c - command-line handling shared by the codec commands.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/present.h"
#include "trace_cli.h"

int trace_cli_args(int argc, char **argv, const char *usage_text, const char **path,
                   int *raw_frames)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                             {"raw-frames", no_argument, NULL, 'R'},
                                             {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage_text, stdout);
            return 0;
        }
        if (c == 'R' && raw_frames) {
            *raw_frames = 1;
            continue;
        }
        fputs(usage_text, stderr);
        return 2;
    }
    if (argc - optind != 1) {
        fputs(usage_text, stderr);
        return 2;
    }
    *path = argv[optind];
    return -1;
}

static void print_warning(void *ctx, const char *msg)
{
    fprintf(stderr, "memtrace %s: warning: ", (const char *)ctx);
    mt_text_put(stderr, msg);   /* (it may quote the trace) */
    fputc('\n', stderr);
}

mt_reader *trace_cli_open(const char *cmd, const char *path, mt_reader_options *opts)
{
    opts->on_warning = print_warning;
    opts->warning_ctx = (void *)cmd;
    char *err = NULL;
    mt_reader *r = strcmp(path, "-") == 0 ? mt_reader_open_fd(0, "<stdin>", opts, &err)
                                          : mt_reader_open(path, opts, &err);
    if (!r) {
        fprintf(stderr, "memtrace %s: %s\n", cmd, err ? err : "out of memory");
        free(err);
    }
    return r;
}
