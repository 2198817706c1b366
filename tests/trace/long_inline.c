/*
 * long_inline.c - a code whose inline chain does not fit one location event
 * (255 locations, 4 KiB) keeps its innermost function and line and its
 * outermost function; nothing becomes "??". Three shapes: too many
 * locations, long C++-style names, one name longer than the event itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "memtrace/trace.h"

#define MAXN 400
static mt_location chain[MAXN];
static size_t chain_n;
static char names[MAXN][6000];

static int resolve(void *ctx, mt_location_code code, const mt_location **locs, size_t *n)
{
    (void)ctx;
    (void)code;
    *locs = chain;
    *n = chain_n;
    return 0;
}

/* Chain of n locations, outermost first, names of name_len bytes. */
static void make_chain(size_t n, size_t name_len)
{
    chain_n = n;
    for (size_t i = 0; i < n; i++) {
        char *s = names[i];
        int k = snprintf(s, 6000, "%s_%zu<", i == 0 ? "outer" : i == n - 1 ? "inner" : "mid", i);
        while ((size_t)k < name_len)
            s[k++] = 'T';
        s[k] = '\0';
        chain[i] = (mt_location){.filename = "/src/app/map.h", .defname = s,
                                 .line = (uint32_t)(100 + i)};
    }
}

static void run(const char *what, size_t n, size_t name_len)
{
    make_chain(n, name_len);
    char path[] = "/tmp/long_inline-XXXXXX";
    int fd = mkstemp(path);
    mt_trace_info info = {.sample_rate = 1e-5, .word_size = 8, .executable_name = "x",
                          .host_name = "h", .ocaml_runtime_params = "", .pid = 1,
                          .start_time = 1600000000000000ll};
    mt_writer_options wo = {.version = 2, .resolve = resolve};
    char *err = NULL;
    mt_writer *w = mt_writer_open(fd, &info, &wo, &err);
    mt_location_code bt[1] = {0x401234};
    mt_writer_put_alloc(w, info.start_time + 10, 100, 1, MT_SOURCE_EXTERNAL, bt, 1, NULL);
    CHECK(mt_writer_close(w) == 0, "%s: written", what);
    close(fd);
    mt_reader *r = mt_reader_open(path, NULL, &err);
    mt_event ev;
    const mt_location *l = NULL;
    size_t got = 0;
    int ok = r && mt_reader_next(r, &ev) == 1 &&
             mt_reader_lookup(r, ev.backtrace[0], &l, &got) == 0 && got > 0;
    CHECK(ok, "%s: read back", what);
    if (ok) {
        const mt_location *in = &l[got - 1], *out = &l[0];
        CHECK(strncmp(in->defname, names[n - 1], 20) == 0 && in->line == 100 + n - 1,
              "%s: innermost function and line kept (%.30s:%u)", what, in->defname, in->line);
        CHECK(got == 1 || (strncmp(out->defname, "outer_0<", 8) == 0 && out->line == 100),
              "%s: outermost function kept (%.30s)", what, out->defname);
        int unknown = 0;
        for (size_t i = 0; i < got; i++)
            unknown |= strcmp(l[i].defname, "??") == 0;
        CHECK(!unknown && got <= 255, "%s: %zu of %zu locations, no unknown frame", what, got, n);
    }
    if (r)
        mt_reader_close(r);
    unlink(path);
}

int main(void)
{
    run("300 locations", 300, 10);
    run("40 long C++ names", 40, 300);
    run("a name longer than an event", 3, 5000);
    run("one location with a huge name", 1, 5000);
    return failures != 0;
}
