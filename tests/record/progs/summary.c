/*
 * summary.c - reads a trace with the codec's reader and prints what the
 * recorder tests check:
 *   INFO pid=<pid> rate=<r> word_size=<w> allocs=<n> collects=<n> live=<n>
 *   SITE <function> <estimated bytes allocated> <estimated bytes live> <samples>
 *   FUNC <every function name seen in a backtrace, once>
 *   STACKS max=<longest backtrace> truncated=<backtraces whose outermost
 *          frame is "[truncated]">
 *   END last_event_us=<time of the last event> end_us=<end of the
 *       recording> marked=<1 if the writer marked its end>
 *   CARRIED n=<blocks carried over from the previous piece of a rotated
 *       recording: live, not counted as allocated nor in allocs=>
 *       live_bytes=<their estimated bytes>
 * Estimates use n_samples / rate. The site is the innermost location of
 * the innermost frame. Exits 1 if the trace is malformed, a collect names
 * an unknown or already collected allocation, or a carried block comes
 * after a new allocation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/trace.h"

struct site { char *name; double alloc, live; unsigned long samples; };
static struct site sites[4096];
static int nsites;

static struct site *site_of(const char *name)
{
    for (int i = 0; i < nsites; i++)
        if (strcmp(sites[i].name, name) == 0)
            return &sites[i];
    if (nsites == 4096)
        return &sites[0];
    sites[nsites].name = strdup(name);
    return &sites[nsites++];
}

static char **funcs;
static size_t nfuncs, capfuncs;

static void saw_func(const char *f)
{
    for (size_t i = 0; i < nfuncs; i++)
        if (strcmp(funcs[i], f) == 0)
            return;
    if (nfuncs == capfuncs) {
        capfuncs = capfuncs ? capfuncs * 2 : 256;
        funcs = realloc(funcs, capfuncs * sizeof *funcs);
    }
    funcs[nfuncs++] = strdup(f);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: summary TRACE\n");
        return 2;
    }
    char *err = NULL;
    mt_reader *r = mt_reader_open(argv[1], NULL, &err);
    if (!r) {
        fprintf(stderr, "summary: %s\n", err);
        return 1;
    }
    const mt_trace_info *info = mt_reader_info(r);
    double rate = info->sample_rate;
    size_t cap = 1 << 16;
    struct { struct site *site; double w; int live; } *objs = calloc(cap, sizeof *objs);
    unsigned long allocs = 0, collects = 0, live = 0, truncated = 0, carried = 0;
    double carried_bytes = 0;
    size_t max_len = 0;
    long long last = 0;
    mt_event ev;
    int rc;
    while ((rc = mt_reader_next(r, &ev)) == 1) {
        last = ev.time;
        if (ev.kind == MT_EVENT_ALLOC) {
            if (ev.backtrace_length > max_len)
                max_len = ev.backtrace_length;
            const mt_location *outer;
            size_t nouter;
            if (ev.backtrace_length > 0 &&
                mt_reader_lookup(r, ev.backtrace[0], &outer, &nouter) == 0 && nouter == 1 &&
                strcmp(outer[0].defname, "[truncated]") == 0 && outer[0].line == 0 &&
                outer[0].filename[0] == '\0')
                truncated++;
            if (ev.id >= cap) {
                size_t ncap = cap;
                while (ev.id >= ncap)
                    ncap *= 2;
                objs = realloc(objs, ncap * sizeof *objs);
                memset(objs + cap, 0, (ncap - cap) * sizeof *objs);
                cap = ncap;
            }
            const char *name = "?";
            for (size_t i = 0; i < ev.backtrace_length; i++) {
                const mt_location *locs;
                size_t n;
                if (mt_reader_lookup(r, ev.backtrace[i], &locs, &n) == 0)
                    for (size_t k = 0; k < n; k++) {
                        saw_func(locs[k].defname);
                        if (i + 1 == ev.backtrace_length && k + 1 == n)
                            name = locs[k].defname;
                    }
            }
            struct site *s = site_of(name);
            double w = (double)ev.n_samples / rate;
            if (ev.carried) {
                if (allocs > 0) {
                    fprintf(stderr, "summary: carried block %llu after new allocations\n",
                            (unsigned long long)ev.id);
                    return 1;
                }
                carried++;
                carried_bytes += w;
            } else {
                s->alloc += w;
                s->samples += ev.n_samples;
                allocs++;
            }
            s->live += w;
            objs[ev.id].site = s;
            objs[ev.id].w = w;
            objs[ev.id].live = 1;
            live++;
        } else if (ev.kind == MT_EVENT_COLLECT) {
            if (ev.id >= cap || !objs[ev.id].live) {
                fprintf(stderr, "summary: collect of unknown allocation %llu\n",
                        (unsigned long long)ev.id);
                return 1;
            }
            objs[ev.id].live = 0;
            objs[ev.id].site->live -= objs[ev.id].w;
            collects++;
            live--;
        }
    }
    if (rc < 0) {
        fprintf(stderr, "summary: %s\n", mt_reader_error(r));
        return 1;
    }
    printf("INFO pid=%llu rate=%.17g word_size=%u allocs=%lu collects=%lu live=%lu\n",
           (unsigned long long)info->pid, rate, info->word_size, allocs, collects, live);
    printf("CONTEXT %s\n", info->context ? info->context : "");
    printf("STACKS max=%zu truncated=%lu\n", max_len, truncated);
    printf("END last_event_us=%lld end_us=%lld marked=%d\n", last,
           (long long)mt_reader_end_time(r), mt_reader_ended(r));
    printf("EXE %s\n", info->executable_name);
    printf("CARRIED n=%lu live_bytes=%.0f\n", carried, carried_bytes);
    for (int i = 0; i < nsites; i++)
        printf("SITE %s %.0f %.0f %lu\n", sites[i].name, sites[i].alloc,
               sites[i].live < 0.5 && sites[i].live > -0.5 ? 0.0 : sites[i].live,
               sites[i].samples);
    for (size_t i = 0; i < nfuncs; i++)
        printf("FUNC %s\n", funcs[i]);
    mt_reader_close(r);
    return 0;
}
