/*
 * cmd_recode.c - 'memtrace recode': decodes a trace and writes every event
 * again with the writer, in the input's format version or another one.
 * Re-encoding a trace written by memtrace gives back the same bytes, which
 * makes this both a converter (v2 <-> v3) and a check of the codec.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "memtrace/trace.h"

static const char usage_text[] =
    "usage: memtrace recode [OPTIONS] IN OUT\n"
    "\n"
    "Decode the trace IN and write its events to OUT ('-' for standard output)\n"
    "with memtrace's encoding rules. By default OUT has IN's format version\n"
    "(version 1 traces are written as version 2). Skipped packets of IN are\n"
    "reported on stderr and left out.\n"
    "\n"
    "Options:\n"
    "  -V, --format-version N   write format version N: 2 (readable by every\n"
    "                           memtrace release) or 3\n"
    "  -h, --help               show this help\n"
    "\n"
    "Example:\n"
    "  memtrace recode --format-version 3 app.ctf app-v3.ctf\n";

static void on_warning(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "memtrace recode: warning: %s\n", msg);
}

static int resolve(void *ctx, mt_location_code code, const mt_location **locs, size_t *n)
{
    return mt_reader_lookup(ctx, code, locs, n);
}

int cmd_recode(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"format-version", required_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0}};
    int version = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "V:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'V':
            if (strcmp(optarg, "2") == 0 || strcmp(optarg, "3") == 0) {
                version = optarg[0] - '0';
                break;
            }
            fprintf(stderr, "memtrace recode: --format-version must be 2 or 3, not '%s'\n",
                    optarg);
            return 2;
        case 'h':
            fputs(usage_text, stdout);
            return 0;
        default:
            fputs(usage_text, stderr);
            return 2;
        }
    }
    if (argc - optind != 2) {
        fputs(usage_text, stderr);
        return 2;
    }
    const char *in = argv[optind], *out = argv[optind + 1];
    mt_reader_options ropts = {.on_warning = on_warning};
    char *err = NULL;
    mt_reader *r = strcmp(in, "-") == 0 ? mt_reader_open_fd(0, "<stdin>", &ropts, &err)
                                        : mt_reader_open(in, &ropts, &err);
    if (!r) {
        fprintf(stderr, "memtrace recode: %s\n", err ? err : "out of memory");
        free(err);
        return 1;
    }
    const mt_trace_info *info = mt_reader_info(r);
    if (version == 0)
        version = info->version < 2 ? 2 : info->version;
    int fd = strcmp(out, "-") == 0 ? 1 : open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "memtrace recode: %s: %s\n", out, strerror(errno));
        mt_reader_close(r);
        return 1;
    }
    mt_writer_options wopts = {.version = version,
                               .domain = version >= 3 ? info->initial_domain : 0,
                               .resolve = resolve,
                               .resolve_ctx = r};
    mt_writer *w = mt_writer_open(fd, info, &wopts, &err);
    int status = 0;
    if (!w) {
        fprintf(stderr, "memtrace recode: %s: %s\n", out, err ? err : "out of memory");
        free(err);
        status = 1;
        goto done;
    }
    mt_event ev;
    int rc;
    while ((rc = mt_reader_next(r, &ev)) == 1) {
        if (ev.domain != info->initial_domain) {
            fprintf(stderr,
                    "memtrace recode: %s: events of several domains: re-encoding "
                    "multi-domain traces is not supported\n",
                    in);
            status = 1;
            break;
        }
        if (mt_writer_put_event(w, info->start_time, &ev) < 0)
            break;
    }
    if (rc < 0) {
        fprintf(stderr, "memtrace recode: %s\n", mt_reader_error(r));
        status = 1;
    } else if (mt_writer_finish(w) < 0) {
        fprintf(stderr, "memtrace recode: %s: %s\n", out, mt_writer_error(w));
        status = 1;
    }
    mt_writer_close(w);
done:
    if (fd != 1 && close(fd) < 0 && status == 0) {
        fprintf(stderr, "memtrace recode: %s: %s\n", out, strerror(errno));
        status = 1;
    }
    mt_reader_close(r);
    return status;
}
