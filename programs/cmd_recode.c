/*
 * cmd_recode.c - 'memtrace recode': decodes a trace and writes every event
 * again with the writer, in the input's format version or another one.
 * Re-encoding a trace written by memtrace gives back the same bytes, which
 * makes this both a converter (v2 <-> v3) and a check of the codec.
 *
 * One thread decodes and encodes: a two-thread pipeline (a ring of event
 * batches) was tried and dropped, being slower than this loop whenever the
 * machine had other work (docs/PERFORMANCE.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "safefile.h"
#include "commands.h"
#include "fdsink.h"
#include "memtrace/present.h"
#include "memtrace/trace.h"
#include "options.h"

static const char usage_text[] =
    "usage: memtrace recode [OPTIONS] IN OUT\n"
    "\n"
    "Decode the trace IN and write its events to OUT ('-' for standard output)\n"
    "with memtrace's encoding rules. By default OUT has IN's format version\n"
    "(version 1 traces are written as version 2). Skipped packets of IN are\n"
    "reported on stderr and left out.\n"
    "\n"
    "Options:\n";
static const char usage_tail[] =
    "\n"
    "Example:\n"
    "  memtrace recode --format-version 3 app.ctf app-v3.ctf\n";

static void on_warning(void *ctx, const char *msg)
{
    (void)ctx;
    fputs("memtrace recode: warning: ", stderr);
    mt_text_put(stderr, msg);   /* (it may quote the trace) */
    fputc('\n', stderr);
}

static int resolve(void *ctx, mt_location_code code, const mt_location **locs, size_t *n)
{
    return mt_reader_lookup(ctx, code, locs, n);
}

static int recode_serial(mt_reader *r, mt_writer *w, const char *in, const char *out)
{
    const mt_trace_info *info = mt_reader_info(r);
    mt_event ev;
    int rc;
    size_t prev_len = 0;
    while ((rc = mt_reader_next(r, &ev)) == 1) {
        if (ev.domain != info->initial_domain) {
            fprintf(stderr,
                    "memtrace recode: %s: events of several domains: re-encoding "
                    "multi-domain traces is not supported\n",
                    in);
            return 1;
        }
        /* blocks carried over from a previous piece stay marked as such */
        int ok;
        if (mt_writer_set_carried(w, ev.kind == MT_EVENT_ALLOC && ev.carried) != 0)
            ok = 0;
        else if (ev.kind == MT_EVENT_ALLOC && ev.id == mt_writer_next_id(w)) {
            /* The reader keeps the shared prefix in place, so the first
             * min(common_prefix, previous length) frames are the previous
             * allocation's: the writer need not compare them. */
            size_t keep = ev.common_prefix < prev_len ? ev.common_prefix : prev_len;
            prev_len = ev.backtrace_length;
            mt_timestamp now = (int64_t)((uint64_t)info->start_time + (uint64_t)ev.time);
            ok = mt_writer_put_alloc_shared(w, now, ev.length, ev.n_samples, ev.source,
                                            ev.backtrace, ev.backtrace_length, keep, NULL) == 0;
        } else if (ev.kind != MT_EVENT_ALLOC) {
            mt_timestamp now = (int64_t)((uint64_t)info->start_time + (uint64_t)ev.time);
            ok = (ev.kind == MT_EVENT_PROMOTE ? mt_writer_put_promote(w, now, ev.id)
                                              : mt_writer_put_collect(w, now, ev.id)) == 0;
        } else {
            ok = mt_writer_put_event(w, info->start_time, &ev) == 0; /* says what is wrong */
        }
        if (!ok) {
            fprintf(stderr, "memtrace recode: %s: %s\n", out, mt_writer_error(w));
            return 1;
        }
    }
    if (rc < 0) {
        fprintf(stderr, "memtrace recode: %s\n", mt_reader_error(r));
        return 1;
    }
    return 0;
}

/* Writes r's events to fd (through ob when not NULL) in format version:
 * 0, or 1 after the message. */
static int recode_to(mt_reader *r, int fd, mt_fdsink *ob, int version, const char *in,
                     const char *out)
{
    const mt_trace_info *info = mt_reader_info(r);
    char *err = NULL;
    mt_writer_options wopts = {.version = version,
                               .domain = version >= 3 ? info->initial_domain : 0,
                               .resolve = resolve,
                               .resolve_ctx = r,
                               .write = ob ? mt_fdsink_write : NULL,
                               .write_ctx = ob};
    mt_writer *w = mt_writer_open(fd, info, &wopts, &err);
    int status = 0;
    if (!w) {
        fprintf(stderr, "memtrace recode: %s: %s\n", out, err ? err : "out of memory");
        free(err);
        status = 1;
    } else {
        status = recode_serial(r, w, in, out);
        /* Keep the end of the recording the recorder wrote (docs/format.md). */
        if (status == 0 && mt_reader_ended(r) &&
            mt_writer_flush_until(w, info->start_time + mt_reader_end_time(r), 1) < 0) {
            fprintf(stderr, "memtrace recode: %s: %s\n", out, mt_writer_error(w));
            status = 1;
        }
        if (status == 0 && mt_writer_finish(w) < 0) {
            fprintf(stderr, "memtrace recode: %s: %s\n", out, mt_writer_error(w));
            status = 1;
        }
        if (status == 0 && ob && mt_fdsink_flush(ob) < 0) {
            fprintf(stderr, "memtrace recode: %s: write failed: %s\n", out, strerror(errno));
            status = 1;
        }
        mt_writer_close(w);
    }
    return status;
}

int cmd_recode(int argc, char **argv)
{
    static const char *const versions[] = {"2", "3", NULL};
    int version = -1;
    const opt_spec opts[] = {
        OPT("format-version", 'V', OPT_CHOICE, &version, "N",
            "write format version N: 2 (readable by every\nmemtrace release) or 3",
            .choices = versions),
    };
    const opt_command cmd = {"recode", usage_text, usage_tail, 27, opts, 1};
    int first, prc = opt_parse(&cmd, argc, argv, &first);
    if (prc >= 0)
        return prc;
    version = version < 0 ? 0 : version + 2;
    if (argc - first != 2) {
        fprintf(stderr, "memtrace recode: expected IN and OUT\n");
        return opt_usage("recode");
    }
    const char *in = argv[first], *out = argv[first + 1];
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
    mt_outfile of = {.fd = 1};
    const char *why = NULL;
    if (strcmp(out, "-") != 0 && mt_outfile_open(&of, out, 0644, &why) != 0) {
        fprintf(stderr, "memtrace recode: %s: %s\n", out, why);
        mt_reader_close(r);
        return 1;
    }
    int fd = of.fd;
    /* output buffered in 1 MiB blocks: fewer system calls than one per
     * packet (a recorder writes packets one by one; a converter need not) */
    mt_fdsink *ob = mt_fdsink_new(fd, 1 << 20);
    int status = recode_to(r, fd, ob, version, in, out);
    free(ob);
    if (of.path && status != 0)
        mt_outfile_abort(&of);
    else if (of.path && mt_outfile_commit(&of, &why) != 0) {
        fprintf(stderr, "memtrace recode: %s: %s\n", out, why);
        status = 1;
    }
    mt_reader_close(r);
    return status;
}
