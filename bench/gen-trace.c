/*
 * gen-trace.c - writes a synthetic OCaml-like trace for benchmarks:
 * N events (default 5,000,000) of allocations, promotions and collections
 * over a few hundred call paths of depth 8-60 drawn from 2,000 codes with
 * inlined frames, with a deterministic pseudo-random generator.
 *
 *   gen-trace OUT.ctf [EVENTS]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memtrace/trace.h"

#define N_CODES 2000
#define N_PATHS 600
#define MAX_DEPTH 64

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static char names[N_CODES][48], files[64][32];
static mt_location locs[N_CODES][2];

static int resolve(void *ctx, mt_location_code code, const mt_location **l, size_t *n)
{
    (void)ctx;
    size_t i = (size_t)(code - 0x400000) / 16;
    if (i >= N_CODES)
        return -1;
    *l = locs[i];
    *n = i % 7 == 0 ? 2 : 1; /* every 7th code has an inlined frame */
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: gen-trace OUT.ctf [EVENTS]\n");
        return 2;
    }
    long long events = argc > 2 ? atoll(argv[2]) : 5000000;
    for (int i = 0; i < 64; i++)
        snprintf(files[i], sizeof files[i], "src/module_%d.ml", i);
    for (int i = 0; i < N_CODES; i++) {
        snprintf(names[i], sizeof names[i], "Module_%d.function_%d", i % 64, i);
        locs[i][0] = (mt_location){files[i % 64], names[i], 10 + (uint32_t)(i % 900), 2, 30};
        locs[i][1] = (mt_location){files[(i + 1) % 64], names[(i + 1) % N_CODES], 5, 4, 20};
    }
    /* call paths: a shared trunk, then random branches */
    static uint64_t paths[N_PATHS][MAX_DEPTH];
    static int depth[N_PATHS];
    for (int p = 0; p < N_PATHS; p++) {
        depth[p] = 8 + (int)(rnd() % 53);
        for (int d = 0; d < depth[p]; d++) {
            int code = d < 5 ? d : (int)((p * 7 + d * 131 + (rnd() % 3)) % N_CODES);
            paths[p][d] = 0x400000 + 16 * (uint64_t)code;
        }
    }
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    mt_trace_info info = {0};
    info.sample_rate = 1e-4;
    info.word_size = 64;
    info.executable_name = "/usr/bin/synthetic";
    info.host_name = "bench";
    info.ocaml_runtime_params = "";
    info.pid = 4242;
    info.start_time = 1700000000000000LL;
    mt_writer_options wo = {0};
    wo.version = 2;
    wo.resolve = resolve;
    char *err = NULL;
    mt_writer *w = mt_writer_open(fd, &info, &wo, &err);
    if (!w) {
        fprintf(stderr, "gen-trace: %s\n", err);
        return 1;
    }
    /* live objects awaiting promotion / collection */
    size_t cap = 1 << 20, n_live = 0;
    mt_obj_id *live = malloc(cap * sizeof *live);
    mt_timestamp now = info.start_time;
    int path = 0;
    for (long long e = 0; e < events;) {
        now += (mt_timestamp)(rnd() % 5);
        uint64_t r = rnd() % 100;
        if (r < 55 || n_live == 0) {
            if (rnd() % 8 == 0)
                path = (int)(rnd() % N_PATHS);
            uint64_t len = 1 + rnd() % 16;
            int src = rnd() % 50 == 0 ? MT_SOURCE_MAJOR : MT_SOURCE_MINOR;
            if (src == MT_SOURCE_MAJOR)
                len = 257 + rnd() % 4000;
            uint64_t ns = src == MT_SOURCE_MAJOR ? 1 + len / 5000 : 1;
            mt_obj_id id;
            int d = depth[path] - (int)(rnd() % 3);
            if (mt_writer_put_alloc(w, now, len, ns, (mt_source)src, paths[path], (size_t)d, &id) < 0)
                break;
            if (n_live == cap)
                live = realloc(live, (cap *= 2) * sizeof *live);
            live[n_live++] = id;
        } else if (r < 70) {
            size_t i = n_live - 1 - (size_t)(rnd() % (n_live < 64 ? n_live : 64));
            if (mt_writer_put_promote(w, now, live[i]) < 0)
                break;
        } else {
            /* collect: mostly young objects, sometimes old ones; some leak */
            size_t i = rnd() % 4 ? n_live - 1 - (size_t)(rnd() % (n_live < 256 ? n_live : 256))
                                 : (size_t)(rnd() % n_live);
            if (rnd() % 50 == 0) {
                e++;
                continue; /* leave it */
            }
            if (mt_writer_put_collect(w, now, live[i]) < 0)
                break;
            live[i] = live[--n_live];
        }
        e++;
    }
    if (mt_writer_close(w) < 0) {
        fprintf(stderr, "gen-trace: %s\n", "write failed");
        return 1;
    }
    close(fd);
    free(live);
    return 0;
}
