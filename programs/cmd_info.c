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
    "Options:\n";
static const char usage_tail[] =
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

/* The allocation an event records, as the analysis layer sees it: its
 * estimates then come from mt_scale (the blocks it stands for, their
 * variance) exactly as 'stats' computes them. info reads the codec alone,
 * without a model. */
static mt_alloc alloc_of(const mt_trace_info *info, const mt_event *ev)
{
    mt_alloc a;
    memset(&a, 0, sizeof a);
    a.size = ev->length * (uint64_t)(info->word_size / 8);
    a.n_samples = ev->n_samples;
    a.source = (uint8_t)ev->source;
    return a;
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

/* The header's fields. */
static void print_header(const char *path, mt_reader *r, const mt_trace_info *info)
{
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
}

/* What the events add up to. words: the sizes of the sampled blocks; each
 * record of an OCaml or malloc block is one block. A record of a C mapping
 * is one sample point in it, and carries the size of the whole mapping (as
 * many records as points: lib/record/mmap.c), so mappings are counted by
 * their points and estimated, never by adding up their sizes. */
typedef struct counts {
    unsigned long long allocs[3], promotes, collects;
    unsigned long long words, samples, carried, carried_samples, map_points;
    double blocks, map_blocks, blocks_var;
    long long last;
    unsigned max_domain, ndomains;
    unsigned char seen[65536 / 8];
} counts;

static void count_alloc(counts *c, const mt_trace_info *info, const mt_scale *scale,
                        const mt_event *ev)
{
    int c_trace = info->word_size == 8;
    c->allocs[ev->source]++;
    c->carried += ev->carried != 0;
    c->samples += ev->n_samples;
    if (ev->carried) {   /* allocated before the piece began: not counted (as in stats) */
        c->carried_samples += ev->n_samples;
    } else {
        mt_alloc a = alloc_of(info, ev);
        double b = mt_scale_alloc_objects(scale, &a);
        c->blocks += b;
        c->blocks_var += mt_scale_alloc_objects_var(scale, &a);   /* the count's own */
        if (c_trace && ev->source == MT_SOURCE_MAJOR)
            c->map_blocks += b;
    }
    if (c_trace && ev->source == MT_SOURCE_MAJOR)
        c->map_points++;
    else
        c->words += ev->length;
}

/* Reads every event: 0, or 1 after the message. */
static int count_events(counts *c, mt_reader *r, const char *path)
{
    const mt_trace_info *info = mt_reader_info(r);
    mt_scale scale = mt_scale_of(info);
    mt_event ev;
    int rc;
    while ((rc = mt_reader_next(r, &ev)) == 1) {
        c->last = ev.time;
        if (!(c->seen[ev.domain / 8] & (1u << (ev.domain % 8)))) {
            c->seen[ev.domain / 8] |= (unsigned char)(1u << (ev.domain % 8));
            c->ndomains++;
            if (ev.domain > c->max_domain)
                c->max_domain = ev.domain;
        }
        if (ev.kind == MT_EVENT_ALLOC) {
            count_alloc(c, info, &scale, &ev);
            if (ev.n_samples > SAMPLES_MAX || c->samples > SAMPLES_MAX) {
                /* the limit of the analysis layer, and its words */
                fprintf(stderr, "memtrace info: %s: sample counts add up to more than 2^62 (a "
                                "damaged or forged trace)\n", path);
                return 1;
            }
        } else if (ev.kind == MT_EVENT_PROMOTE) {
            c->promotes++;
        } else if (ev.kind == MT_EVENT_COLLECT) {
            c->collects++;
        }
    }
    if (rc < 0) {
        fprintf(stderr, "memtrace info: %s\n", mt_reader_error(r));
        return 1;
    }
    return 0;
}

/* The duration, the end, the counts. */
static void print_events(const counts *c, mt_reader *r, const mt_trace_info *info)
{
    unsigned long long nallocs = c->allocs[0] + c->allocs[1] + c->allocs[2];
    mt_timedelta end = mt_reader_end_time(r);
    if (end > c->last)
        printf("%-18s %.6f s (end of the recording; last event at %.6f s)\n", "duration:",
               (double)end / 1e6, (double)c->last / 1e6);
    else
        printf("%-18s %.6f s (last event)\n", "duration:", (double)c->last / 1e6);
    printf("%-18s %s\n", "end:",
           mt_reader_ended(r) ? "marked by the recorder (the process exited, exec'd or stopped "
                                "tracing, or its piece ended)"
                              : "not marked (killed, crashed, cut short, or another writer)");
    if (c->ndomains > 1)
        printf("%-18s %u (highest %u)\n", "domains:", c->ndomains, c->max_domain);
    printf("%-18s %llu\n", "events:", nallocs + c->promotes + c->collects);
    printf("%-18s %llu (minor %llu, major %llu, external %llu)\n", "allocations:", nallocs,
           c->allocs[0], c->allocs[1], c->allocs[2]);
    if (info->word_size == 8 && c->allocs[0] == 0)   /* a C trace: the sources are kinds */
        printf("%-18s malloc %llu, mmap %llu\n", "by kind:", c->allocs[2], c->allocs[1]);
    if (c->carried)
        printf("%-18s %llu of them (a piece of a rotated recording: blocks live when it "
               "began)\n", "carried over:", c->carried);
    printf("%-18s %llu\n", "promotions:", c->promotes);
    printf("%-18s %llu\n", "collections:", c->collects);
    printf("%-18s %llu\n", "samples:", c->samples);
}

/* The estimates: what was allocated, the sampled blocks, the mappings. */
static void print_estimates(const counts *c, const mt_trace_info *info)
{
    int c_trace = info->word_size == 8;
    /* The estimate 'stats' prints as "allocated", in words. */
    double est = (double)(c->samples - c->carried_samples) * mt_scale_of(info).inv_rate;
    if (c_trace)
        printf("%-18s %.0f bytes in %.0f blocks", "allocated:", est, c->blocks);
    else
        printf("%-18s %.0f words (%.0f bytes) in %.0f blocks", "allocated:", est,
               est * (info->word_size / 8), c->blocks);
    printf(" (estimated from the samples%s", c->carried ? "; carried over not counted" : "");
    if (c->samples > c->carried_samples && c->blocks > 0)
        /* each figure's own error: a count's is far larger (docs/estimates.md) */
        printf("; bytes ±%.1f%%, blocks ±%.1f%%", 100 * mt_noise(c->samples - c->carried_samples),
               100 * sqrt(c->blocks_var) / c->blocks);
    printf(")\n");
    if (c_trace)
        printf("%-18s %llu bytes\n", "sampled blocks:", c->words);
    else
        printf("%-18s %llu words (%llu bytes)\n", "sampled blocks:", c->words,
               c->words * (info->word_size / 8));
    if (c->map_points)
        printf("%-18s %llu sample points in about %.0f mappings (estimated; not in sampled "
               "blocks)\n", "mapped:", c->map_points, c->map_blocks);
}

int cmd_info(int argc, char **argv)
{
    const char *path;
    int status = trace_cli_args("info", argc, argv, usage_text, usage_tail, &path, NULL);
    if (status >= 0)
        return status;
    if (strcmp(path, "-") && mt_path_is_profile(path))
        return info_profile(path);
    mt_reader_options opts = {.skip_backtraces = 1};
    mt_reader *r = trace_cli_open("info", path, &opts);
    if (!r)
        return 1;
    const mt_trace_info *info = mt_reader_info(r);
    print_header(path, r, info);
    fflush(stdout);
    counts *c = calloc(1, sizeof *c);
    if (!c) {
        perror("memtrace info");
        mt_reader_close(r);
        return 1;
    }
    status = count_events(c, r, path);
    if (status == 0) {
        print_events(c, r, info);
        print_estimates(c, info);
    }
    free(c);
    mt_reader_close(r);
    if (status)
        return status;
    return fflush(stdout) == 0 ? 0 : 1;
}
