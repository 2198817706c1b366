/*
 * cmd_dump.c - 'memtrace dump': prints every event of a trace in the
 * reference text format ("memtrace-dump 1"), the one memtrace's own reader
 * produces, so two decoders can be compared with diff. Output goes through
 * a hand-rolled buffer: the dump of a large trace runs to gigabytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "trace_cli.h"
#include "trace_names.h"
#include "memtrace/present.h"
#include "memtrace/trace.h"

static const char usage_text[] =
    "usage: memtrace dump [OPTIONS] FILE\n"
    "\n"
    "Print the trace-info fields and every allocation, promotion and collection\n"
    "of FILE (a memtrace .ctf trace, format v1-v3; '-' reads standard input) in\n"
    "memtrace's reference text format: one 'ev' line per event, one 'bt' line per\n"
    "backtrace location (caller first), and a closing 'end' line with counts.\n"
    "Skipped packets (foreign pid, truncated end) are reported on stderr.\n"
    "Raw frames (module+0xoffset, a trace never symbolized) are named from the\n"
    "binaries on this machine whose build-id or size is the recorded one.\n"
    "\n"
    "Options:\n";
static const char usage_tail[] =
    "\n"
    "Example:\n"
    "  memtrace dump app.ctf | less\n";

/* ---- output buffer ---- */
static char obuf[1 << 16];
static size_t olen;
static int out_failed;

static void oflush(void)
{
    if (olen && fwrite(obuf, 1, olen, stdout) != olen)
        out_failed = 1;
    olen = 0;
}

static void oput(const char *s, size_t n)
{
    if (olen + n > sizeof obuf) {
        oflush();
        if (n > sizeof obuf) {
            if (fwrite(s, 1, n, stdout) != n)
                out_failed = 1;
            return;
        }
    }
    memcpy(obuf + olen, s, n);
    olen += n;
}

static void ostr(const char *s)
{
    oput(s, strlen(s));
}

static void oput_cb(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    oput(s, n);
}

/* A name from the trace: escaped by the one escaper (mt_text_escape_to:
 * control characters, bytes that are not UTF-8, workflow commands; the
 * reference prints names raw, see docs/cli/dump.md). */
static void oname(const char *s)
{
    mt_text_escape_to(s, strlen(s), oput_cb, NULL);
}

static void ou64(unsigned long long v)
{
    char tmp[24];
    int i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    oput(tmp + i, sizeof tmp - (size_t)i);
}

static void oi64(long long v)
{
    if (v < 0) {
        oput("-", 1);
        ou64(0ull - (unsigned long long)v);
    } else {
        ou64((unsigned long long)v);
    }
}

static void ohex(unsigned long long v)
{
    static const char digits[] = "0123456789abcdef";
    char tmp[20];
    int i = sizeof tmp;
    do {
        tmp[--i] = digits[v & 15];
        v >>= 4;
    } while (v);
    oput(tmp + i, sizeof tmp - (size_t)i);
}

/* OCaml's "%S": printable ASCII as is, \" \\ \n \t \r \b, other bytes \ddd. */
static void oquoted(const char *s)
{
    oput("\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char tmp[5];
        switch (*p) {
        case '"': oput("\\\"", 2); break;
        case '\\': oput("\\\\", 2); break;
        case '\n': oput("\\n", 2); break;
        case '\t': oput("\\t", 2); break;
        case '\r': oput("\\r", 2); break;
        case '\b': oput("\\b", 2); break;
        default:
            if (*p >= 0x20 && *p < 0x7f) {
                oput((const char *)p, 1);
            } else {
                snprintf(tmp, sizeof tmp, "\\%03u", *p);
                oput(tmp, 4);
            }
        }
    }
    oput("\"", 1);
}

static void dump_backtrace(const mt_reader *r, const mt_event *ev)
{
    for (size_t i = 0; i < ev->backtrace_length; i++) {
        mt_location_code code = ev->backtrace[i];
        const mt_location *locs;
        size_t n = 0;
        if (mt_reader_lookup(r, code, &locs, &n) < 0)
            n = 0;
        if (n == 0) {
            ostr("  bt ");
            ou64(i);
            ostr(" 0x");
            ohex(code);
            ostr(" ?\n");
        }
        for (size_t j = 0; j < n; j++) {
            ostr("  bt ");
            ou64(i);
            ostr(" 0x");
            ohex(code);
            oput(" ", 1);
            oname(locs[j].filename);
            oput(":", 1);
            ou64(locs[j].line);
            oput(":", 1);
            ou64(locs[j].start_char);
            oput("-", 1);
            ou64(locs[j].end_char);
            oput(" ", 1);
            oname(locs[j].defname);
            oput("\n", 1);
        }
    }
}

/* The "info" lines. */
static void dump_info(const mt_trace_info *info)
{
    ostr("memtrace-dump 1\ninfo version=");
    ou64((unsigned)info->version);
    char rate[40];
    snprintf(rate, sizeof rate, "%.17g", info->sample_rate);
    ostr("\ninfo sample_rate=");
    ostr(rate);
    ostr("\ninfo word_size=");
    ou64(info->word_size);
    ostr("\ninfo executable_name=");
    oname(info->executable_name);
    ostr("\ninfo host_name=");
    oname(info->host_name);
    ostr("\ninfo ocaml_runtime_params=");
    oname(info->ocaml_runtime_params);
    ostr("\ninfo pid=");
    ou64(info->pid);
    ostr("\ninfo start_time_us=");
    oi64(info->start_time);
    ostr("\ninfo context=");
    if (info->context)
        oquoted(info->context);
    else
        ostr("<none>");
    oput("\n", 1);
}

/* One "ev" line, and an allocation's "bt" lines. */
static void dump_event(mt_reader *r, const mt_event *ev)
{
    static const char *const sources[] = {"Minor", "Major", "External"};
    ostr("ev ");
    oi64(ev->time);
    switch (ev->kind) {
    case MT_EVENT_ALLOC:
        ostr(" alloc id=");
        ou64(ev->id);
        ostr(" len=");
        oi64((long long)ev->length);
        ostr(" nsamples=");
        oi64((long long)ev->n_samples);
        ostr(" src=");
        ostr(sources[ev->source]);
        ostr(" cp=");
        ou64(ev->common_prefix);
        ostr(" btlen=");
        ou64(ev->backtrace_length);
        break;
    case MT_EVENT_PROMOTE:
        ostr(" promote id=");
        ou64(ev->id);
        break;
    case MT_EVENT_COLLECT:
        ostr(" collect id=");
        ou64(ev->id);
        break;
    }
    if (ev->domain != 0) {
        ostr(" dom=");
        ou64(ev->domain);
    }
    oput("\n", 1);
    if (ev->kind == MT_EVENT_ALLOC)
        dump_backtrace(r, ev);
}

int cmd_dump(int argc, char **argv)
{
    const char *path;
    int raw_frames = 0;
    int status = trace_cli_args("dump", argc, argv, usage_text, usage_tail, &path, &raw_frames);
    if (status >= 0)
        return status;
    mt_reader_options opts = {.raw_frames = raw_frames};
    mt_reader *r = trace_cli_open("dump", path, &opts);
    if (!r)
        return 1;
    dump_info(mt_reader_info(r));
    unsigned long long counts[3] = {0, 0, 0};
    mt_event ev;
    int rc;
    while ((rc = mt_reader_next(r, &ev)) == 1) {
        counts[ev.kind]++;
        dump_event(r, &ev);
    }
    if (rc < 0) {
        oflush();
        fflush(stdout);
        fprintf(stderr, "memtrace dump: %s\n", mt_reader_error(r));
        mt_reader_close(r);
        return 1;
    }
    ostr("end events=");
    ou64(counts[0] + counts[1] + counts[2]);
    ostr(" allocs=");
    ou64(counts[0]);
    ostr(" promotes=");
    ou64(counts[1]);
    ostr(" collects=");
    ou64(counts[2]);
    oput("\n", 1);
    oflush();
    mt_reader_close(r);
    trace_names_note(stderr, "dump");
    if (fflush(stdout) != 0 || out_failed) {
        fprintf(stderr, "memtrace dump: error writing output\n");
        return 1;
    }
    return 0;
}
