/*
 * cmd_info.c - 'memtrace info': the trace-info fields of a trace and a
 * count of its events, in a form meant for people (one "name: value" line
 * each). Backtraces are not decoded, so this is quick on large traces.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "trace_cli.h"
#include "memtrace/analyze.h"
#include "memtrace/present.h"
#include "memtrace/trace.h"

static const char usage_text[] =
    "usage: memtrace info [OPTIONS] FILE\n"
    "\n"
    "Print the header of the trace FILE ('-' reads standard input): format\n"
    "version, sampling rate, program, host, pid, start time, context; then\n"
    "the trace's duration and how many allocations (by source), promotions\n"
    "and collections it holds; the memory allocated, estimated from the\n"
    "samples as 'memtrace stats' does; and the size of the sampled blocks in\n"
    "words and bytes (in bytes only for traces of C programs, whose words are\n"
    "bytes). A sample point in an mmap'd region names the whole mapping, so\n"
    "mappings are counted apart, by their sample points.\n"
    "\n"
    "FILE may be a pprof profile (docs/profiles-input.md): info then says what\n"
    "kind it is, what it measures, whether its error can be derived, and its\n"
    "totals.\n"
    "\n"
    "Options:\n"
    "  -h, --help   show this help\n"
    "\n"
    "Example:\n"
    "  memtrace info app.ctf\n";

static void print_time(const char *label, long long us)
{
    time_t secs = (time_t)(us / 1000000);
    struct tm tm;
    char buf[64];
    if (us >= 0 && gmtime_r(&secs, &tm) && strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm))
        printf("%-18s %s.%06lld UTC (%lld us since the epoch)\n", label, buf, us % 1000000, us);
    else
        printf("%-18s %lld us since the epoch\n", label, us);
}

/* The blocks one allocation record stands for: n_samples / (rate * words),
 * words counting the header word of OCaml heap blocks (and one byte more
 * for a C mapping), exactly as the analysis layer counts objects
 * (mta_alloc_objects in lib/analyze/scale.h), so that info's estimate is
 * the one 'stats' prints. info reads the codec alone, without a model,
 * hence the formula written again here. */
static double alloc_blocks(const mt_trace_info *info, const mt_event *ev)
{
    if (info->sample_rate <= 0)
        return 0;
    double words = (double)ev->length;
    if (ev->source != MT_SOURCE_EXTERNAL)
        words += 1;
    if (words < 1)
        words = 1;
    return (double)ev->n_samples / info->sample_rate / words;
}

/* A field from the trace, control characters escaped. */
static void print_name(const char *label, const char *text)
{
    printf("%-18s ", label);
    mt_text_put(stdout, text);
    putchar('\n');
}

/* More samples than this in one trace are refused, as every report does. */
#define SAMPLES_MAX (1ULL << 62)

int cmd_info(int argc, char **argv)
{
    const char *path;
    int status = trace_cli_args(argc, argv, usage_text, &path, NULL);
    if (status >= 0)
        return status;
    if (strcmp(path, "-") && mt_path_is_profile(path))
        return info_profile(path);
    mt_reader_options opts = {.skip_backtraces = 1};
    mt_reader *r = trace_cli_open("info", path, &opts);
    if (!r)
        return 1;
    const mt_trace_info *info = mt_reader_info(r);
    printf("%-18s %s\n", "file:", path);
    if (mt_reader_size(r))
        printf("%-18s %llu bytes\n", "size:", (unsigned long long)mt_reader_size(r));
    printf("%-18s %d\n", "format version:", info->version);
    /* C traces count in bytes (8-bit words): say bytes, not words */
    const char *unit = info->word_size == 8 ? "bytes" : "words";
    printf("%-18s %.17g (1 sample every %.6g %s)\n", "sample rate:", info->sample_rate,
           info->sample_rate > 0 ? 1.0 / info->sample_rate : 0.0, unit);
    printf("%-18s %u bits\n", "word size:", info->word_size);
    print_name("executable:", info->executable_name);
    print_name("host:", info->host_name);
    printf("%-18s %llu\n", "pid:", (unsigned long long)info->pid);
    print_time("start time:", info->start_time);
    print_name("context:", info->context ? info->context : "(none)");
    print_name("runtime params:", info->ocaml_runtime_params);
    if (info->ocaml_runtime_params && !strcmp(info->ocaml_runtime_params, MT_INFO_ATTACHED))
        printf("%-18s %s\n", "attached:", "mid-run (memtrace attach): memory live before the "
                                        "attach is not counted");
    if (info->version >= 3)
        printf("%-18s %u\n", "initial domain:", info->initial_domain);
    fflush(stdout);

    unsigned long long allocs[3] = {0, 0, 0}, promotes = 0, collects = 0;
    /* words: the sizes of the sampled blocks; each record of an OCaml or
     * malloc block is one block. A record of a C mapping is one sample
     * point in it, and carries the size of the whole mapping (as many
     * records as points: lib/record/mmap.c), so mappings are counted by
     * their points and estimated, never by adding up their sizes. */
    unsigned long long words = 0, samples = 0, carried = 0, carried_samples = 0;
    unsigned long long map_points = 0;
    double blocks = 0, map_blocks = 0, blocks_var = 0;
    int c_trace = info->word_size == 8;
    long long last = 0;
    unsigned max_domain = 0;
    unsigned char seen[65536 / 8] = {0};
    unsigned ndomains = 0;
    mt_event ev;
    int rc;
    while ((rc = mt_reader_next(r, &ev)) == 1) {
        last = ev.time;
        if (!(seen[ev.domain / 8] & (1u << (ev.domain % 8)))) {
            seen[ev.domain / 8] |= (unsigned char)(1u << (ev.domain % 8));
            ndomains++;
            if (ev.domain > max_domain)
                max_domain = ev.domain;
        }
        switch (ev.kind) {
        case MT_EVENT_ALLOC:
            allocs[ev.source]++;
            carried += ev.carried != 0;
            samples += ev.n_samples;
            if (ev.n_samples > SAMPLES_MAX || samples > SAMPLES_MAX) {
                /* the limit of the analysis layer, and its words */
                fprintf(stderr, "memtrace info: %s: sample counts add up to more than 2^62 (a "
                                "damaged or forged trace)\n", path);
                mt_reader_close(r);
                return 1;
            }
            if (ev.carried) {   /* allocated before the piece began: not counted (as in stats) */
                carried_samples += ev.n_samples;
            } else {
                double b = alloc_blocks(info, &ev);
                blocks += b;
                /* the count's own variance (as mta_objects_var: b^2 / n (1 - rate)) */
                if (ev.n_samples && info->sample_rate < 1)
                    blocks_var += b * b / (double)ev.n_samples * (1 - info->sample_rate);
                if (c_trace && ev.source == MT_SOURCE_MAJOR)
                    map_blocks += b;
            }
            if (c_trace && ev.source == MT_SOURCE_MAJOR)
                map_points++;
            else
                words += ev.length;
            break;
        case MT_EVENT_PROMOTE:
            promotes++;
            break;
        case MT_EVENT_COLLECT:
            collects++;
            break;
        }
    }
    if (rc < 0) {
        fprintf(stderr, "memtrace info: %s\n", mt_reader_error(r));
        mt_reader_close(r);
        return 1;
    }
    unsigned long long nallocs = allocs[0] + allocs[1] + allocs[2];
    mt_timedelta end = mt_reader_end_time(r);
    if (end > last)
        printf("%-18s %.6f s (end of the recording; last event at %.6f s)\n", "duration:",
               (double)end / 1e6, (double)last / 1e6);
    else
        printf("%-18s %.6f s (last event)\n", "duration:", (double)last / 1e6);
    printf("%-18s %s\n", "end:",
           mt_reader_ended(r) ? "marked by the recorder (the process exited, exec'd or stopped "
                                "tracing, or its piece ended)"
                              : "not marked (killed, crashed, cut short, or another writer)");
    if (ndomains > 1)
        printf("%-18s %u (highest %u)\n", "domains:", ndomains, max_domain);
    printf("%-18s %llu\n", "events:", nallocs + promotes + collects);
    printf("%-18s %llu (minor %llu, major %llu, external %llu)\n", "allocations:", nallocs,
           allocs[0], allocs[1], allocs[2]);
    if (info->word_size == 8 && allocs[0] == 0)   /* a C trace: the sources are kinds */
        printf("%-18s malloc %llu, mmap %llu\n", "by kind:", allocs[2], allocs[1]);
    if (carried)
        printf("%-18s %llu of them (a piece of a rotated recording: blocks live when it "
               "began)\n", "carried over:", carried);
    printf("%-18s %llu\n", "promotions:", promotes);
    printf("%-18s %llu\n", "collections:", collects);
    printf("%-18s %llu\n", "samples:", samples);
    /* The estimate 'stats' prints as "allocated": samples / rate words. */
    double est = info->sample_rate > 0 ? (double)(samples - carried_samples) / info->sample_rate : 0;
    if (c_trace)
        printf("%-18s %.0f bytes in %.0f blocks", "allocated:", est, blocks);
    else
        printf("%-18s %.0f words (%.0f bytes) in %.0f blocks", "allocated:", est,
               est * (info->word_size / 8), blocks);
    printf(" (estimated from the samples%s", carried ? "; carried over not counted" : "");
    if (samples > carried_samples && blocks > 0)
        /* each figure's own error: a count's is far larger (docs/estimates.md) */
        printf("; bytes ±%.1f%%, blocks ±%.1f%%", 100 * mt_noise(samples - carried_samples),
               100 * sqrt(blocks_var) / blocks);
    printf(")\n");
    if (c_trace)
        printf("%-18s %llu bytes\n", "sampled blocks:", words);
    else
        printf("%-18s %llu words (%llu bytes)\n", "sampled blocks:", words,
               words * (info->word_size / 8));
    if (map_points)
        printf("%-18s %llu sample points in about %.0f mappings (estimated; not in sampled "
               "blocks)\n", "mapped:", map_points, map_blocks);
    mt_reader_close(r);
    return fflush(stdout) == 0 ? 0 : 1;
}
