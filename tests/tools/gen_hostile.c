/*
 * gen_hostile.c - writes small hostile traces for tests/analyze/hostile.sh
 * (nothing big is kept in the repository: the tests make them):
 *
 *   gen_hostile bomb OUT STACKS DEPTH   STACKS allocations whose stacks are
 *                                       DEPTH frames deep and differ only in
 *                                       the innermost one (common prefixes
 *                                       make this a few bytes per stack)
 *   gen_hostile wide OUT STACKS DEPTH   STACKS stacks of DEPTH frames that
 *                                       differ near the outermost end (a
 *                                       top-down tree of about STACKS * DEPTH
 *                                       nodes)
 *   gen_hostile slide OUT STACKS PERIOD each stack one frame longer than the
 *                                       one before, cycling through PERIOD
 *                                       functions: the innermost 1023 frames
 *                                       differ every time (one frame more per
 *                                       stack on the wire)
 *   gen_hostile collide OUT N           N location codes that all fell into one
 *                                       slot of the reader's unkeyed code table
 *   gen_hostile collide-model OUT N     N codes that all fell into one slot of
 *                                       the model's unkeyed tables
 *   gen_hostile names OUT               function names with terminal escape
 *                                       sequences and other control characters,
 *                                       and names of thousands of 'a's
 *   gen_hostile html OUT                function and file names that are HTML
 *                                       markup (tags, handlers, entities), for
 *                                       the viewer's page to show as text
 *   gen_hostile samples OUT             allocations whose sample counts add up
 *                                       past 2^63
 *   gen_hostile carried-mid OUT         blocks "carried over" (the mark of a
 *                                       rotated piece's first packets) in the
 *                                       middle of a trace, some freed
 *   gen_hostile carried-twice OUT       carried and new blocks freed twice
 *   gen_hostile carried-huge OUT        carried blocks whose sample counts
 *                                       add up past 2^62
 *   gen_hostile ids-back OUT            a v3 trace whose second packet (new
 *                                       blocks) repeats the ids of its first
 *                                       (carried blocks)
 *   gen_hostile rawmod OUT              a raw frame of a module whose path holds
 *                                       escapes (and is not there)
 *   gen_hostile run OUT                 OUT without samples and OUT.4242 beside
 *                                       it, whose command line holds escapes
 *   gen_hostile far OUT                 allocations more than 2^62 us after
 *                                       the start, the last at INT64_MAX - 1
 *   gen_hostile negstart OUT            a trace whose start time is negative
 *   gen_hostile nostack OUT             10 allocations one a second (0 s to 9 s):
 *                                       3 at main > alpha, 5 at
 *                                       main > beta, 2 without a stack (the
 *                                       unwinder found no frame), interleaved
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memtrace/trace.h"

#define CODE_MASK 0x7FFFFFFFFFFFFFFFull

/* Names of codes: a table filled by each mode, looked up by the writer. */
typedef struct named {
    mt_location_code code;
    mt_location loc;
} named;
static named *names;
static size_t n_names, cap_names;

static void name_code(mt_location_code code, const char *fn, const char *file, unsigned line)
{
    if (n_names == cap_names) {
        cap_names = cap_names ? cap_names * 2 : 64;
        names = realloc(names, cap_names * sizeof *names);
        if (!names) {
            perror("gen_hostile");
            exit(1);
        }
    }
    names[n_names].code = code;
    names[n_names].loc = (mt_location){.filename = strdup(file), .defname = strdup(fn),
                                       .line = line, .start_char = 1, .end_char = 2};
    n_names++;
}

static int resolve(void *ctx, mt_location_code code, const mt_location **locs, size_t *n)
{
    (void)ctx;
    /* few names per trace, or looked up in order: a reverse scan is enough */
    static size_t hint;
    if (hint < n_names && names[hint].code == code) {
        *locs = &names[hint].loc;
        *n = 1;
        hint++;
        return 0;
    }
    for (size_t i = n_names; i-- > 0;)
        if (names[i].code == code) {
            *locs = &names[i].loc;
            *n = 1;
            hint = i + 1;
            return 0;
        }
    return -1;
}

static const char *exe_name = "hostile", *host_name = "host", *context = NULL;

static int out_version = 2;
static int64_t start_time = 1700000000000000LL;   /* the trace's (negstart: < 0) */

static mt_writer *open_out(const char *path, int *fd)
{
    *fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (*fd < 0) {
        perror(path);
        exit(1);
    }
    mt_trace_info info = {.version = 2, .sample_rate = 1e-4, .word_size = 8,
                          .executable_name = exe_name, .host_name = host_name,
                          .ocaml_runtime_params = "", .pid = 1, .context = context,
                          .start_time = start_time};
    mt_writer_options o = {.version = out_version, .resolve = resolve};
    char *err = NULL;
    mt_writer *w = mt_writer_open(*fd, &info, &o, &err);
    if (!w) {
        fprintf(stderr, "gen_hostile: %s\n", err ? err : "cannot write");
        exit(1);
    }
    return w;
}

static void close_out(mt_writer *w, int fd)
{
    if (mt_writer_close(w) < 0 || close(fd) < 0) {
        fprintf(stderr, "gen_hostile: write failed\n");
        exit(1);
    }
}

static void put(mt_writer *w, int64_t t, uint64_t samples, const mt_location_code *bt, size_t n,
                size_t shared)
{
    if (mt_writer_put_alloc_shared(w, start_time + t, 4, samples, MT_SOURCE_EXTERNAL, bt,
                                   n, shared, NULL) < 0) {
        fprintf(stderr, "gen_hostile: %s\n", mt_writer_error(w));
        exit(1);
    }
}

/* Multiplicative inverse of an odd number mod 2^64 (Newton's iteration). */
static uint64_t inverse(uint64_t a)
{
    uint64_t x = a;
    for (int i = 0; i < 6; i++)
        x *= 2 - a * x;
    return x;
}

/* The inverse of the unkeyed 64-bit finalizer the model's tables used. */
static uint64_t unfmix(uint64_t x)
{
    x ^= x >> 33;
    x *= inverse(0xc4ceb9fe1a85ec53ULL);
    x ^= x >> 33;
    x *= inverse(0xff51afd7ed558ccdULL);
    x ^= x >> 33;
    return x;
}

static mt_location_code *frames(size_t n)
{
    mt_location_code *bt = malloc((n ? n : 1) * sizeof *bt);
    if (!bt) {
        perror("gen_hostile");
        exit(1);
    }
    return bt;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: gen_hostile bomb|wide|slide|collide|collide-model|names|html|samples|"
                        "carried-mid|carried-twice|carried-huge|ids-back|rawmod|run|far|negstart|nostack OUT [N [DEPTH]]\n");
        return 2;
    }
    const char *mode = argv[1], *out = argv[2];
    size_t n = argc > 3 ? strtoull(argv[3], NULL, 10) : 0;
    size_t depth = argc > 4 ? strtoull(argv[4], NULL, 10) : 0;
    int fd;
    if (!strcmp(mode, "bomb") || !strcmp(mode, "wide")) {
        int wide = !strcmp(mode, "wide");
        if (n < 1 || depth < 2)
            return fprintf(stderr, "gen_hostile %s: need STACKS and DEPTH >= 2\n", mode), 2;
        const mt_location_code rec = 0x401000, leaf0 = 0x402000;
        name_code(rec, "recurse", "bomb.c", 10);
        for (unsigned k = 0; k < 64; k++) {
            char fn[32];
            snprintf(fn, sizeof fn, "%s_%u", wide ? "entry" : "leaf", k);
            name_code(leaf0 + 16 * k, fn, "bomb.c", 20 + k);
        }
        mt_location_code *bt = frames(depth);
        for (size_t i = 0; i < depth; i++)
            bt[i] = rec;
        mt_writer *w = open_out(out, &fd);
        for (size_t s = 0; s < n; s++) {
            /* bomb: the same DEPTH-1 outer frames, a new leaf; wide: a new
             * outermost frame (one of 64, then the leaf varies too) */
            size_t shared = s == 0 ? 0 : wide ? 0 : depth - 1;
            if (wide) {
                /* the first 16 frames spell s in binary with two functions */
                for (size_t k = 0; k < 16 && k + 1 < depth; k++)
                    bt[k] = leaf0 + 16 * ((s >> k) & 1);
                bt[depth - 1] = leaf0 + 16 * (2 + s % 62);
            } else {
                bt[depth - 1] = leaf0 + 16 * (s % 64);
            }
            put(w, (int64_t)s, 1, bt, depth, shared);
        }
        free(bt);
        close_out(w, fd);
        return 0;
    }
    if (!strcmp(mode, "slide")) {
        if (n < 1 || depth < 2)
            return fprintf(stderr, "gen_hostile slide: need STACKS and PERIOD >= 2\n"), 2;
        size_t base = 300, len = base + n; /* the writer cuts a backtrace of more new codes than fit its packet */
        mt_location_code *bt = frames(len);
        for (size_t i = 0; i < len; i++)
            bt[i] = 0x700000 + 16 * (i % depth); /* no locations: named after the code */
        mt_writer *w = open_out(out, &fd);
        for (size_t s = 0; s < n; s++)
            put(w, (int64_t)s, 1, bt, base + s, s ? base + s - 1 : 0);
        free(bt);
        close_out(w, fd);
        return 0;
    }
    if (!strcmp(mode, "collide") || !strcmp(mode, "collide-model")) {
        int model = !strcmp(mode, "collide-model");
        if (n < 1)
            return fprintf(stderr, "gen_hostile %s: need N\n", mode), 2;
        uint64_t kinv = inverse(0x9E3779B97F4A7C15ull);
        mt_writer *w = open_out(out, &fd);
        size_t made = 0;
        for (uint64_t i = 1; made < n; i++) {
            /* reader: (code * K) >> 20 was the slot; model: fmix(code) */
            uint64_t c = model ? unfmix(i << 40) : (i << 44) * kinv;
            if (c == 0 || c != (c & CODE_MASK))
                continue; /* codes are 63 bits on the wire */
            char fn[32];
            snprintf(fn, sizeof fn, "f%zu", made);
            name_code(c, fn, "collide.c", (unsigned)(made % 1000) + 1);
            put(w, (int64_t)made, 1, &c, 1, 0);
            made++;
        }
        close_out(w, fd);
        return 0;
    }
    if (!strcmp(mode, "names")) {
        static const char *const odd[] = {
            "\033]0;pwned\007retitle",      /* OSC: sets the terminal's title */
            "\033[2J\033[Hclear_screen",    /* CSI: clears the screen */
            "bell\007and\bbackspace",
            "new\nline\rreturn\ttab",
            "del\177c1\302\233csi",         /* DEL, and U+009B (a C1 CSI) in UTF-8 */
            "raw\233c1",                    /* a lone C1 byte */
            "semi;colon back\\slash \"quote\"",
            "caf\303\251_ok",               /* UTF-8 that must stay as is */
            "over\300\257long",             /* overlong '/' (2 bytes) */
            "over3\340\200\257x",          /* overlong '/' (3 bytes) */
            "surr\355\240\200ogate",       /* U+D800, a surrogate */
            "beyond\364\220\200\200max",  /* U+110000, past the last */
            "::error title=pwned::workflow",  /* a GitHub Actions command */
            "  ::warning::indented",
            "old##[error]form",
        };
        exe_name = "/bin/\033]2;title\007app\302\233\377";
        host_name = "host\033[5m";
        mt_writer *w = open_out(out, &fd);
        size_t k = sizeof odd / sizeof odd[0];
        for (size_t i = 0; i < k; i++) {
            mt_location_code bt[2] = {0x501000, 0x502000 + 16 * i};
            if (i == 0)
                name_code(bt[0], "main", "names.c", 1);
            name_code(bt[1], odd[i], "file\033[31mred.c", (unsigned)i + 2);
            put(w, (int64_t)i, 1 + i, bt, 2, 0);
        }
        /* long names of 'a's (for regexes that backtrack) */
        char *longname = malloc(3001);
        memset(longname, 'a', 3000);
        longname[3000] = 0;
        for (size_t i = 0; i < 20; i++) {
            longname[i] = 'b'; /* distinct names */
            mt_location_code bt[2] = {0x501000, 0x503000 + 16 * i};
            name_code(bt[1], longname, "long.c", (unsigned)i + 1);
            put(w, (int64_t)(k + i), 1, bt, 2, 0);
        }
        free(longname);
        close_out(w, fd);
        return 0;
    }
    if (!strcmp(mode, "nostack")) {
        /* site of each allocation: a alpha, b beta, - none */
        static const char order[] = "a-bbab-bab";
        mt_location_code bt[2] = {0x601000, 0};
        name_code(0x601000, "main", "nostack.c", 1);
        name_code(0x602000, "alpha", "nostack.c", 2);
        name_code(0x603000, "beta", "nostack.c", 3);
        mt_writer *w = open_out(out, &fd);
        for (int i = 0; order[i]; i++) {
            bt[1] = order[i] == 'a' ? 0x602000 : 0x603000;
            put(w, (int64_t)i * 1000000, 1, bt, order[i] == '-' ? 0 : 2, 0);
        }
        close_out(w, fd);
        return 0;
    }
    if (!strcmp(mode, "html")) {
        static const char *const markup[] = {
            "<img src=x onerror=\"document.body.dataset.pwned='img'\">",
            "<script>document.body.dataset.pwned='script'</script>",
            "<b>bold</b> &amp; &lt;not an entity&gt;",
            "\"><svg onload=\"document.body.dataset.pwned='svg'\">",
            "a</div><div class=tm-node>fake",
            "it's `tick` ${x} {{y}}",
        };
        mt_writer *w = open_out(out, &fd);
        size_t k = sizeof markup / sizeof markup[0];
        for (size_t i = 0; i < k; i++) {
            mt_location_code bt[2] = {0x501000, 0x504000 + 16 * i};
            if (i == 0)
                name_code(bt[0], "main", "html.c", 1);
            name_code(bt[1], markup[i], "<i>file</i>.c", (unsigned)i + 2);
            put(w, (int64_t)i, 100 + 20 * i, bt, 2, 0);
        }
        close_out(w, fd);
        return 0;
    }
    if (!strcmp(mode, "rawmod")) {
        /* a raw frame (module path, BASENAME+0xOFFSET, line 0) of a module
         * that is not there, whose path holds escapes and a workflow command */
        mt_writer *w = open_out(out, &fd);
        mt_location_code bt[1] = {0x605000};
        name_code(bt[0], "::error title=pwned::evil\033]0;title\007\302\233\377.so+0x1234",
                  "/no/such/dir\033[2J/::error title=pwned::evil\033]0;title\007\302\233\377.so", 0);
        put(w, 0, 3, bt, 1, 0);
        close_out(w, fd);
        return 0;
    }
    if (!strcmp(mode, "run")) {
        /* the traces of one run: OUT without a sample, OUT.4242 beside it
         * with a command line of escapes and a workflow command */
        context = "sh -c true";
        mt_writer *w = open_out(out, &fd);
        close_out(w, fd);
        char path[4096];
        snprintf(path, sizeof path, "%s.4242", out);
        context = "::error title=pwned::x \033]0;title\007 \302\233 \377 \355\240\200 arg";
        w = open_out(path, &fd);
        mt_location_code bt[1] = {0x606000};
        name_code(bt[0], "work", "run.c", 1);
        for (int i = 0; i < 10; i++)
            put(w, i, 5, bt, 1, 0);
        close_out(w, fd);
        return 0;
    }
    if (!strcmp(mode, "far")) {
        /* times past 2^62 us from the start (the epoch), up to the last
         * representable but one */
        start_time = 0;
        mt_writer *w = open_out(out, &fd);
        mt_location_code bt[1] = {0x603000};
        name_code(bt[0], "far", "far.c", 1);
        put(w, 0, 1, bt, 1, 0);
        put(w, 1000, 1, bt, 1, 0);
        put(w, ((int64_t)1 << 62) + 12345, 1, bt, 1, 0);
        put(w, INT64_MAX - start_time - 1, 1, bt, 1, 0);
        close_out(w, fd);
        return 0;
    }
    if (!strcmp(mode, "negstart")) {
        /* a start time before 1970 (the .rss beside it is the test's) */
        start_time = -1000000;
        mt_writer *w = open_out(out, &fd);
        mt_location_code bt[1] = {0x604000};
        name_code(bt[0], "early", "neg.c", 1);
        for (int i = 0; i < 10; i++)
            put(w, i * 1000, 1, bt, 1, 0);
        close_out(w, fd);
        return 0;
    }
    if (!strcmp(mode, "samples")) {
        mt_writer *w = open_out(out, &fd);
        mt_location_code bt[1] = {0x601000};
        name_code(bt[0], "huge", "samples.c", 1);
        for (int i = 0; i < 4; i++)
            put(w, i, (uint64_t)1 << 62, bt, 1, 0);
        close_out(w, fd);
        return 0;
    }
    if (!strncmp(mode, "carried-", 8)) {
        mt_writer *w = open_out(out, &fd);
        mt_location_code bt[2] = {0x701000, 0x701010};
        name_code(bt[0], "main", "carried.c", 1);
        name_code(bt[1], "keep", "carried.c", 2);
        const int64_t t0 = 1700000000000000LL;
        mt_obj_id id[300];
        int huge = !strcmp(mode, "carried-huge"), mid = !strcmp(mode, "carried-mid");
        int rc = 0;
        for (int i = 0; mid && i < 100; i++)   /* new blocks first */
            rc |= mt_writer_put_alloc(w, t0 + 10 + i, 64 + i, 1, MT_SOURCE_EXTERNAL, bt, 2, &id[i]);
        rc |= mt_writer_set_carried(w, 1);
        for (int i = 100; i < 200; i++)
            rc |= mt_writer_put_alloc(w, t0 + (mid ? 200 : 0), 64 + i,
                                      huge ? (uint64_t)1 << 61 : (uint64_t)(1 + i % 3), MT_SOURCE_EXTERNAL,
                                      bt, 2, &id[i]);
        rc |= mt_writer_set_carried(w, 0);
        for (int i = 200; i < 300; i++)
            rc |= mt_writer_put_alloc(w, t0 + 300 + i, 64 + i, 1, MT_SOURCE_EXTERNAL, bt, 1, &id[i]);
        for (int i = 0; i < 300; i += 3) {
            if (!mid && i < 100)
                continue;   /* only carried-mid has blocks before the carried ones */
            rc |= mt_writer_put_collect(w, t0 + 1000 + i, id[i]);
            if (!strcmp(mode, "carried-twice"))
                rc |= mt_writer_put_collect(w, t0 + 1001 + i, id[i]);
        }
        rc |= mt_writer_flush_until(w, t0 + 5000, 1);
        if (rc < 0) {
            fprintf(stderr, "gen_hostile: %s\n", mt_writer_error(w));
            return 1;
        }
        close_out(w, fd);
        return 0;
    }
    if (!strcmp(mode, "ids-back")) {
        out_version = 3;
        mt_writer *w = open_out(out, &fd);
        mt_location_code bt[1] = {0x702000};
        name_code(bt[0], "again", "ids.c", 1);
        mt_writer_set_carried(w, 1);
        for (int i = 0; i < 3; i++)
            put(w, 0, 1, bt, 1, 0);
        mt_writer_set_carried(w, 0);
        mt_writer_flush(w);
        off_t second = lseek(fd, 0, SEEK_CUR);
        for (int i = 0; i < 2; i++)
            put(w, 5 + i, 1, bt, 1, 0);
        mt_writer_flush(w);
        mt_writer_put_collect(w, 1700000000000000LL + 200, 0);
        close_out(w, fd);
        /* the second packet's ids 3-4 become 0-1 (v3 header: little-endian
         * first and end ids at 52 and 60) */
        unsigned char ids[16] = {0};
        ids[8] = 2;
        fd = open(out, O_WRONLY);
        if (fd < 0 || pwrite(fd, ids, sizeof ids, second + 52) != (ssize_t)sizeof ids || close(fd)) {
            perror(out);
            return 1;
        }
        return 0;
    }
    fprintf(stderr, "gen_hostile: unknown mode '%s'\n", mode);
    return 2;
}
