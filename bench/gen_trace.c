/*
 * gen_trace.c - writes a large, realistic synthetic trace with the codec's
 * writer, for the codec and analysis benchmarks.
 *
 *   gen_trace [-n EVENTS] [-s SEED] [-V 2|3] OUT.ctf
 *
 * The simulated program has a call graph of a few thousand functions spread
 * over a few hundred files; stacks are 8 to 60 frames deep and move by a
 * random walk (a few frames popped and pushed between allocations), so
 * consecutive backtraces share long prefixes as in real programs. About
 * half the events are allocations (mostly small, some large, some with
 * several samples), the rest promotions and collections of earlier ones;
 * some objects are never freed. The default, 5 million events, gives a
 * trace of about 47 MB.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memtrace/trace.h"

#define NFUNCS 12800
#define NFILES 400
#define MAXDEPTH 60

static uint64_t rng = 88172645463325252ull;
static inline uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static inline unsigned rndn(unsigned n)
{
    return (unsigned)((rnd() >> 11) % n);
}

static char fnames[NFILES][48];
static char dnames[NFUNCS][48];
static mt_location locs[NFUNCS][2];

static mt_location_code code_of(unsigned f)
{
    return 0x555555554000ull + (uint64_t)f * 0x1c3; /* like return addresses */
}

static int resolve(void *ctx, mt_location_code code, const mt_location **l, size_t *n)
{
    (void)ctx;
    uint64_t f = (code - 0x555555554000ull) / 0x1c3;
    if (f >= NFUNCS)
        return -1;
    *l = locs[f];
    *n = f % 9 == 0 ? 2 : 1; /* some inlined frames */
    return 0;
}

/* Each function calls a few "favourite" callees: stacks follow the graph. */
static unsigned callees[NFUNCS][4];

int main(int argc, char **argv)
{
    unsigned long long nevents = 5000000;
    int version = 2, c;
    while ((c = getopt(argc, argv, "n:s:V:h")) != -1) {
        switch (c) {
        case 'n': nevents = strtoull(optarg, NULL, 10); break;
        case 's': rng = strtoull(optarg, NULL, 10) | 1; break;
        case 'V': version = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: gen_trace [-n EVENTS] [-s SEED] [-V 2|3] OUT.ctf\n");
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "usage: gen_trace [-n EVENTS] [-s SEED] [-V 2|3] OUT.ctf\n");
        return 2;
    }
    for (unsigned i = 0; i < NFILES; i++)
        snprintf(fnames[i], sizeof fnames[i], "src/module_%u/file_%u.c", i / 20, i);
    for (unsigned i = 0; i < NFUNCS; i++) {
        snprintf(dnames[i], sizeof dnames[i], "module_%u_function_%u", i / 50, i);
        for (int j = 0; j < 2; j++)
            locs[i][j] = (mt_location){.filename = fnames[(i / 15 + (unsigned)j) % NFILES],
                                       .defname = j ? "inlined_helper" : dnames[i],
                                       .line = 10 + i % 900 + (unsigned)j,
                                       .start_char = i % 60,
                                       .end_char = i % 60 + 12};
        for (int j = 0; j < 4; j++)
            callees[i][j] = rndn(NFUNCS);
    }
    int fd = open(argv[optind], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[optind]);
        return 1;
    }
    mt_trace_info info = {.sample_rate = 1e-5, .word_size = 64,
                          .executable_name = "/usr/bin/synthetic-workload",
                          .host_name = "bench", .ocaml_runtime_params = "", .pid = 4242,
                          .start_time = 1700000000000000ll, .context = "bench"};
    mt_writer_options o = {.version = version, .resolve = resolve};
    char *err = NULL;
    mt_writer *w = mt_writer_open(fd, &info, &o, &err);
    if (!w) {
        fprintf(stderr, "gen_trace: %s\n", err);
        return 1;
    }
    mt_location_code stack[MAXDEPTH];
    unsigned funcs[MAXDEPTH];
    size_t depth = 0;
    funcs[depth] = 0;
    stack[depth++] = code_of(0);
    /* Objects that may still be promoted or collected. */
    enum { LIVE = 1 << 16 };
    static mt_obj_id live[LIVE];
    static unsigned char promoted[LIVE];
    size_t nlive = 0;
    int64_t now = info.start_time;
    for (unsigned long long e = 0; e < nevents; e++) {
        now += rndn(3);
        unsigned r = rndn(100);
        if (r < 50 || nlive == 0) {
            /* Walk the call graph: return from a few frames, call a few. */
            size_t pop = rndn(5);
            if (rndn(40) == 0)
                pop = depth / 2;
            depth = depth > pop + 8 ? depth - pop : 8 < depth ? 8 : depth;
            size_t push = rndn(6) + (depth < 10 ? 3 : 0);
            while (push-- && depth < MAXDEPTH) {
                unsigned caller = funcs[depth - 1];
                unsigned f = rndn(8) ? callees[caller][rndn(4)] : rndn(NFUNCS);
                funcs[depth] = f;
                stack[depth++] = code_of(f);
            }
            uint64_t len = rndn(20) ? 1 + rndn(12) : 20 + rndn(5000);
            uint64_t ns = len > 1000 ? 1 + rndn(3) : 1;
            mt_source src = len > 256 ? MT_SOURCE_MAJOR : MT_SOURCE_MINOR;
            mt_obj_id id;
            if (mt_writer_put_alloc(w, now, len, ns, src, stack, depth, &id) < 0)
                break;
            if (nlive < LIVE && rndn(50)) { /* 2% are never freed */
                promoted[nlive] = src != MT_SOURCE_MINOR;
                live[nlive++] = id;
            }
        } else {
            /* Mostly recent objects die: pick near the end of the live list. */
            size_t k = nlive - 1 - (rndn(4) ? rndn(nlive < 64 ? (unsigned)nlive : 64)
                                            : rndn((unsigned)nlive));
            if (r < 62 && !promoted[k]) {
                promoted[k] = 1;
                if (mt_writer_put_promote(w, now, live[k]) < 0)
                    break;
            } else {
                if (mt_writer_put_collect(w, now, live[k]) < 0)
                    break;
                live[k] = live[nlive - 1];
                promoted[k] = promoted[nlive - 1];
                nlive--;
            }
        }
    }
    if (mt_writer_finish(w) < 0) {
        fprintf(stderr, "gen_trace: %s\n", mt_writer_error(w));
        return 1;
    }
    mt_writer_close(w);
    return close(fd) == 0 ? 0 : 1;
}
