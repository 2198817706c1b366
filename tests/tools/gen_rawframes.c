/*
 * gen_rawframes.c - writes traces of raw frames ("module+0xoffset", as the
 * recorder writes them: lib/common/rawframe.h) for the hostile tests of
 * `memtrace symbolize` (tests/record/symbolize_hostile.sh). The modules are
 * named, not read: frames carry no fingerprint (0 = unknown), so any file
 * the test puts at those paths is used.
 *
 *   gen_rawframes codes OUT MODULE N       N allocations, each at a frame
 *                                           code of its own in MODULE
 *                                           (offsets 16 apart from BASE)
 *   gen_rawframes spellings OUT MODULE N   MODULE spelled N ways
 *                                           (DIR/./BASE, DIR/././BASE, ...),
 *                                           a few frames under each
 *   gen_rawframes modules OUT PREFIX N     N modules PREFIX0, PREFIX1, ...,
 *                                           one frame each (at BASE)
 *
 * A last argument BASE (hex) sets the first offset (default 0x1000).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memtrace/trace.h"

/* The location of each code, in order: code i + 1 is locs[i]. */
static mt_location *locs;
static size_t n_locs, cap_locs;

static mt_location_code add_location(const char *file, const char *def, unsigned line)
{
    if (n_locs == cap_locs) {
        cap_locs = cap_locs ? cap_locs * 2 : 1024;
        locs = realloc(locs, cap_locs * sizeof *locs);
        if (!locs) {
            perror("gen_rawframes");
            exit(1);
        }
    }
    locs[n_locs] = (mt_location){.filename = strdup(file), .defname = strdup(def), .line = line};
    if (!locs[n_locs].filename || !locs[n_locs].defname) {
        perror("gen_rawframes");
        exit(1);
    }
    return (mt_location_code)++n_locs;
}

/* A raw frame: the module's path, "BASENAME+0xOFFSET", no line. */
static mt_location_code add_frame(const char *module, unsigned long long offset)
{
    const char *base = strrchr(module, '/');
    char fn[4200];
    snprintf(fn, sizeof fn, "%s+0x%llx", base ? base + 1 : module, offset);
    return add_location(module, fn, 0);
}

static int resolve(void *ctx, mt_location_code code, const mt_location **l, size_t *n)
{
    (void)ctx;
    if (code < 1 || code > n_locs)
        return -1;
    *l = &locs[code - 1];
    *n = 1;
    return 0;
}

static mt_writer *w;
static int fd;

static void put(mt_location_code code, int64_t t)
{
    mt_location_code bt[2] = {1, code};   /* under code 1, main (not a raw frame) */
    if (mt_writer_put_alloc(w, 1700000000000000LL + t, 16, 1, MT_SOURCE_EXTERNAL, bt, 2,
                            NULL) < 0) {
        fprintf(stderr, "gen_rawframes: %s\n", mt_writer_error(w));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: gen_rawframes codes|spellings|modules OUT MODULE|PREFIX N [BASE]\n");
        return 2;
    }
    const char *mode = argv[1], *out = argv[2], *module = argv[3];
    size_t n = strtoull(argv[4], NULL, 10);
    unsigned long long b = argc > 5 ? strtoull(argv[5], NULL, 16) : 0x1000;
    if (module[0] != '/' || n == 0) {
        fprintf(stderr, "gen_rawframes: MODULE must be an absolute path, N > 0\n");
        return 2;
    }
    fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(out);
        return 1;
    }
    mt_trace_info info = {.version = 2, .sample_rate = 1e-4, .word_size = 8,
                          .executable_name = "rawframes", .host_name = "host",
                          .ocaml_runtime_params = "", .pid = 1,
                          .start_time = 1700000000000000LL};
    mt_writer_options o = {.version = 2, .resolve = resolve};
    char *err = NULL;
    w = mt_writer_open(fd, &info, &o, &err);
    if (!w) {
        fprintf(stderr, "gen_rawframes: %s\n", err ? err : "cannot write");
        return 1;
    }
    /* code 1: the outer frame, a plain location */
    add_location("main.c", "main", 1);
    if (!strcmp(mode, "codes")) {
        for (size_t i = 0; i < n; i++)
            put(add_frame(module, b + 16 * (unsigned long long)i), (int64_t)i);
    } else if (!strcmp(mode, "spellings")) {
        const char *slash = strrchr(module, '/');
        size_t dirlen = (size_t)(slash - module);
        for (size_t i = 0; i < n; i++) {
            size_t len = dirlen + 2 * (i + 1) + strlen(slash) + 1;
            char *p = malloc(len);
            if (!p) {
                perror("gen_rawframes");
                return 1;
            }
            memcpy(p, module, dirlen);
            for (size_t k = 0; k <= i; k++)
                memcpy(p + dirlen + 2 * k, "/.", 2);
            strcpy(p + dirlen + 2 * (i + 1), slash);
            for (unsigned k = 0; k < 4; k++)
                put(add_frame(p, b + 64 * (unsigned long long)(4 * i + k)), (int64_t)i);
            free(p);
        }
    } else if (!strcmp(mode, "modules")) {
        for (size_t i = 0; i < n; i++) {
            char p[4200];
            snprintf(p, sizeof p, "%s%zu", module, i);
            put(add_frame(p, b), (int64_t)i);
        }
    } else {
        fprintf(stderr, "gen_rawframes: unknown mode '%s'\n", mode);
        return 2;
    }
    if (mt_writer_close(w) < 0 || close(fd) < 0) {
        fprintf(stderr, "gen_rawframes: write failed\n");
        return 1;
    }
    return 0;
}
