/*
 * trace_cli.c - command-line handling shared by the codec commands.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/present.h"
#include "options.h"
#include "trace_cli.h"

int trace_cli_args(const char *cmd, int argc, char **argv, const char *head, const char *tail,
                   const char **path, int *raw_frames)
{
    int raw = 0;
    const opt_spec opts[] = {
        OPT("raw-frames", 0, OPT_FLAG, &raw, NULL, "frames as the trace holds them: raw ones not named"),
    };
    const opt_command c = {cmd, head, tail, 15, opts, raw_frames ? 1 : 0};
    int first, rc = opt_parse(&c, argc, argv, &first);
    if (rc >= 0)
        return rc;
    if (argc - first != 1) {
        fprintf(stderr, "memtrace %s: expected one trace file\n", cmd);
        return opt_usage(cmd);
    }
    if (raw_frames)
        *raw_frames = raw;
    *path = argv[first];
    return -1;
}

void trace_cli_warning(void *ctx, const char *msg)
{
    fprintf(stderr, "memtrace %s: warning: ", (const char *)ctx);
    mt_text_put(stderr, msg);   /* (it may quote the trace) */
    fputc('\n', stderr);
}

mt_reader *trace_cli_open(const char *cmd, const char *path, mt_reader_options *opts)
{
    opts->on_warning = trace_cli_warning;
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
