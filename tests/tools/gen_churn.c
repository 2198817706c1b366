/*
 * gen_churn.c - writes a random trace for tests/present/stream.sh: N
 * allocations on a few stacks of a C program (malloc and mmap kinds),
 * several at the same microsecond now and then, freed after random delays
 * (some never):
 *
 *   gen_churn OUT N SEED
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "memtrace/trace.h"

static const mt_location locs[6] = {
    {"main.c", "main", 10, 0, 0},     {"io.c", "read_input", 20, 0, 0},
    {"io.c", "parse_line", 30, 0, 0}, {"cache.c", "cache_put", 40, 0, 0},
    {"buf.c", "buf_grow", 50, 0, 0},  {"leak.c", "leak_slowly", 60, 0, 0},
};

static int resolve(void *ctx, mt_location_code code, const mt_location **l, size_t *n)
{
    (void)ctx;
    if (code < 0x1000 || code >= 0x1000 + 6)
        return -1;
    *l = &locs[code - 0x1000];
    *n = 1;
    return 0;
}

static uint64_t rng;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: gen_churn OUT N SEED\n");
        return 2;
    }
    size_t n = strtoull(argv[2], NULL, 10);
    rng = strtoull(argv[3], NULL, 10) * 2654435761u + 88172645463325252ULL;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    mt_trace_info info = {0};
    info.sample_rate = 1e-3;
    info.word_size = 8;
    info.executable_name = "churn";
    info.host_name = "h";
    info.ocaml_runtime_params = "";
    info.pid = 42;
    info.start_time = 1700000000000000LL;
    mt_writer_options o = {0};
    o.resolve = resolve;
    char *err = NULL;
    mt_writer *w = mt_writer_open(fd, &info, &o, &err);
    if (!w) {
        fprintf(stderr, "gen_churn: %s\n", err ? err : "cannot write");
        return 1;
    }
    enum { LIVE = 2048 };
    static uint64_t id[LIVE];
    static int64_t due[LIVE];
    size_t nl = 0;
    mt_timestamp t = info.start_time;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (rnd() % 3)
            t += (int64_t)(rnd() % 50);
        for (size_t k = 0; k < nl;)
            if (due[k] <= t) {
                rc |= mt_writer_put_collect(w, t, id[k]);
                id[k] = id[--nl];
                due[k] = due[nl];
            } else {
                k++;
            }
        uint64_t st[4] = {0x1000, 0x1001 + rnd() % 2, 0x1003 + rnd() % 2, 0x1005};
        size_t len = 1 + rnd() % 4;
        uint64_t bytes = rnd() % 8 == 0 ? 4096 + rnd() % 100000 : 1 + rnd() % 2000;
        mt_obj_id oid;
        rc |= mt_writer_put_alloc(w, t, bytes, 1 + bytes / 800,
                                  bytes > 50000 ? MT_SOURCE_MAJOR : MT_SOURCE_EXTERNAL, st, len,
                                  &oid);
        if (rnd() % 12 == 0 || nl == LIVE)
            continue; /* never freed */
        id[nl] = oid;
        due[nl++] = t + (int64_t)(rnd() % (rnd() % 6 == 0 ? 500000 : 2000));
    }
    rc |= mt_writer_close(w);
    close(fd);
    if (rc) {
        fprintf(stderr, "gen_churn: cannot write %s\n", argv[1]);
        return 1;
    }
    return 0;
}
