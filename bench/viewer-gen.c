/*
 * viewer-gen.c - writes the trace the viewer's benchmark browses: N events
 * (default 5,000,000) of a program shaped like a real one: 1,500 functions
 * in 120 files, 400 distinct call paths 10 to 40 frames deep that share
 * their outer frames (main, a few phases, their helpers), allocation sizes
 * spread over powers of two, most blocks freed soon, some later, a few
 * never (a slow leak). Deterministic.
 *
 *   viewer-gen OUT.ctf [EVENTS [PATHS]]
 *
 * PATHS (default 400) sets the number of distinct call paths; above 400 each
 * path is derived from its number on the fly, so a trace can have millions
 * of distinct allocation sites (the viewer's memory-budget test uses this).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memtrace/trace.h"

#define NFUNC 1500
#define NFILE 120
#define NPATH 400
#define MAXD 40
#define QMAX (1u << 20)

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static char fname[NFUNC][40], filename[NFILE][32];
static mt_location loc[NFUNC];
static mt_location_code path[NPATH][MAXD];
static size_t plen[NPATH];

/* Many paths: path p's frames come from a generator seeded with p, shaped
 * like the table's (main, a phase, then a walk down the layered graph). */
static size_t many_path(uint64_t p, mt_location_code *out)
{
    uint64_t x = p * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
    size_t d = 10 + (size_t)(p % (MAXD - 10));
    out[0] = 0x400000;
    for (size_t k = 1; k < d; k++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if (k == 1) {
            out[k] = 0x400000 + 16 * (1 + x % 8);
            continue;
        }
        size_t band = 9 + (k * (NFUNC - 9)) / MAXD;
        out[k] = 0x400000 + 16 * (band + x % 60);
    }
    return d;
}

static int resolve(void *ctx, mt_location_code code, const mt_location **l, size_t *n)
{
    (void)ctx;
    size_t f = (size_t)(code - 0x400000) / 16;
    if (f >= NFUNC)
        return -1;
    *l = &loc[f];
    *n = 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: viewer-gen OUT.ctf [EVENTS [PATHS]]\n");
        return 2;
    }
    uint64_t nev = argc > 2 ? strtoull(argv[2], NULL, 10) : 5000000;
    uint64_t npaths = argc > 3 ? strtoull(argv[3], NULL, 10) : NPATH;
    if (npaths < 1)
        npaths = 1;
    mt_location_code many[MAXD];
    for (int i = 0; i < NFILE; i++)
        snprintf(filename[i], sizeof filename[i], "src/module%03d.c", i);
    for (int i = 0; i < NFUNC; i++) {
        snprintf(fname[i], sizeof fname[i], i == 0 ? "main" : "mod%03d_fn%04d", i % NFILE, i);
        loc[i] = (mt_location){filename[i % NFILE], fname[i], (uint32_t)(10 + i % 900), 2, 20};
    }
    /* paths: main, then a phase (1..8), then a walk down a layered call graph */
    for (int p = 0; p < NPATH; p++) {
        size_t d = 10 + rnd() % (MAXD - 10);
        path[p][0] = 0x400000;
        path[p][1] = 0x400000 + 16 * (1 + rnd() % 8);
        for (size_t k = 2; k < d; k++) {
            size_t band = 9 + (k * (NFUNC - 9)) / MAXD;   /* deeper frames, later functions */
            path[p][k] = 0x400000 + 16 * (band + rnd() % 60);
        }
        plen[p] = d;
    }
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    mt_trace_info info = {0};
    info.sample_rate = 1e-4;
    info.word_size = 64;
    info.executable_name = "/usr/bin/viewer-bench-workload";
    info.host_name = "bench";
    info.ocaml_runtime_params = "";
    info.pid = 4242;
    info.start_time = 1700000000000000LL;
    info.context = "viewer benchmark";
    mt_writer_options wo = {0};
    wo.resolve = resolve;
    char *err = NULL;
    mt_writer *w = mt_writer_open(fd, &info, &wo, &err);
    if (!w) {
        fprintf(stderr, "viewer-gen: %s\n", err);
        return 1;
    }
    /* two queues of blocks to free, each with a fixed delay (so each is
     * sorted by due time): short-lived and long-lived blocks */
    static mt_obj_id qid[2][QMAX];
    static uint64_t qdue[2][QMAX];
    size_t qhead[2] = {0, 0}, qtail[2] = {0, 0};
    const uint64_t delay[2] = {300, 400000};
    mt_timestamp t = info.start_time;
    uint64_t ev = 0;
    size_t p = 0;
    while (ev < nev) {
        t += 1;
        int q = -1;
        for (int k = 0; k < 2 && q < 0; k++)
            if (qhead[k] != qtail[k] && qdue[k][qhead[k] % QMAX] <= ev)
                q = k;
        if (q >= 0) {
            if (mt_writer_put_collect(w, t, qid[q][qhead[q] % QMAX]) < 0)
                goto fail;
            qhead[q]++;
            ev++;
            continue;
        }
        const mt_location_code *frames;
        size_t nframes;
        if (npaths <= NPATH) {
            if (rnd() % 16 == 0)   /* stay on a path for a while, as programs do */
                p = (rnd() % 4 == 0) ? rnd() % 20 : rnd() % npaths;   /* some paths are hot */
            frames = path[p];
            nframes = plen[p];
        } else {   /* every allocation on its own path, until they run out */
            nframes = many_path(ev % npaths, many);
            frames = many;
        }
        uint64_t words = 1ull << (rnd() % 10);
        mt_obj_id id;
        if (mt_writer_put_alloc(w, t, words, 1 + (words > 256 ? rnd() % 3 : 0),
                                (mt_source)(rnd() % 2), frames, nframes, &id) < 0)
            goto fail;
        ev++;
        uint64_t r = rnd() % 100;
        q = r < 4 ? -1 : r < 80 ? 0 : 1;   /* 4% never freed: a slow leak */
        if (q < 0 || qtail[q] - qhead[q] == QMAX)
            continue;
        qid[q][qtail[q] % QMAX] = id;
        qdue[q][qtail[q] % QMAX] = ev + delay[q];
        qtail[q]++;
    }
    if (mt_writer_close(w) < 0) {
        fprintf(stderr, "viewer-gen: %s\n", "write failed");
        return 1;
    }
    close(fd);
    return 0;
fail:
    fprintf(stderr, "viewer-gen: %s\n", mt_writer_error(w));
    return 1;
}
