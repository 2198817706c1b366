/*
 * writer_roundtrip.c - the writer used incrementally, as a recorder does:
 * random allocations (deep stacks, inlined frames, codes without debug
 * info, more than 31 files and names, oversized location lists, clamped
 * fields), promotions, collections, gaps over 30 s and 25-bit clock wraps,
 * in v2 and v3. Everything must read back exactly as written; re-encoding
 * the result must give the same bytes; packets must follow the cutting
 * rules; a truncated (too deep) backtrace keeps its outermost 409 frames.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"
#include "memtrace/trace.h"

/* ---- growable output buffer used as the writer's sink ---- */
typedef struct sink {
    unsigned char *data;
    size_t len, cap;
    int in_put; /* set while an event is being added */
} sink;

static int sink_write(void *ctx, const void *buf, size_t len)
{
    sink *s = ctx;
    if (s->len + len > s->cap) {
        s->cap = (s->len + len) * 2;
        s->data = realloc(s->data, s->cap);
        if (!s->data)
            abort();
    }
    memcpy(s->data + s->len, buf, len);
    s->len += len;
    return 0;
}

/* ---- deterministic PRNG ---- */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static unsigned rndn(unsigned n)
{
    return (unsigned)(rnd() % n);
}

/* ---- what each code means: a pure function of the code ---- */
#define NCODES 3000
static char long_name[5000];
static char names[NCODES][2][64];
static mt_location locs_of[NCODES][3];
static size_t nlocs_of[NCODES];
static int resolver_calls;

static mt_location_code code_of(unsigned i)
{
    return 0x400000 + (mt_location_code)i * 0x10; /* never 0 */
}

static void init_locations(void)
{
    memset(long_name, 'x', sizeof long_name - 1);
    for (unsigned i = 0; i < NCODES; i++) {
        snprintf(names[i][0], sizeof names[i][0], "src/file%u.c", i % 47);
        snprintf(names[i][1], sizeof names[i][1], "function_%u", i % 97);
        size_t n = i % 11 == 0 ? 0 : i % 7 == 0 ? 2 : 1; /* none, inlined, plain */
        for (size_t j = 0; j < n; j++) {
            locs_of[i][j].filename = names[i][0];
            locs_of[i][j].defname = j ? "inlined_helper" : names[i][1];
            locs_of[i][j].line = i % 13 == 0 ? 5000000 : i * 3 + (unsigned)j; /* clamped */
            locs_of[i][j].start_char = i % 17 == 0 ? 300 : i % 50;
            locs_of[i][j].end_char = i % 19 == 0 ? 2000 : i % 80 + 10;
        }
        if (i % 500 == 1) { /* over 4096 bytes: the name is cut to 1000 bytes */
            locs_of[i][0] = (mt_location){.filename = names[i][0], .defname = long_name,
                                          .line = 1};
            n = 1;
        }
        nlocs_of[i] = n;
    }
}

static int resolve(void *ctx, mt_location_code code, const mt_location **locs, size_t *n)
{
    sink *s = ctx;
    resolver_calls++;
    if (s->in_put == 2)
        return -1;
    unsigned i = (unsigned)((code - 0x400000) / 0x10);
    if (code < 0x400000 || i >= NCODES)
        return -1;
    *locs = locs_of[i];
    *n = nlocs_of[i];
    return 0;
}

/* ---- the events we write, kept to compare with what we read ---- */
typedef struct rec {
    mt_event_kind kind;
    int64_t time;
    uint64_t id, length, nsamples;
    mt_source source;
    mt_location_code *bt;
    size_t btlen;
} rec;

static rec *recs;
static size_t nrecs, caprecs;

static void remember(rec r)
{
    if (nrecs == caprecs) {
        caprecs = caprecs ? caprecs * 2 : 1024;
        recs = realloc(recs, caprecs * sizeof *recs);
    }
    recs[nrecs++] = r;
}

static const int64_t START = (int64_t)1700000000 * 1000000 + ((1 << 25) - 5000);

/* Writes a random trace; returns the bytes. */
static sink write_trace(int version, unsigned nevents)
{
    sink s = {0};
    mt_trace_info info = {.sample_rate = 1e-4, .word_size = 8, .executable_name = "/bin/test",
                          .host_name = "host", .ocaml_runtime_params = "", .pid = 4242,
                          .start_time = START, .context = "unit test"};
    mt_writer_options o = {.version = version, .resolve = resolve, .resolve_ctx = &s,
                           .write = sink_write, .write_ctx = &s};
    char *err = NULL;
    mt_writer *w = mt_writer_open(-1, &info, &o, &err);
    CHECK_QUIET(w != NULL, "writer opens (%s)", err ? err : "");
    if (!w)
        exit(1);
    for (size_t i = 0; i < nrecs; i++)
        free(recs[i].bt);
    nrecs = 0;
    rng_state = 0x9E3779B97F4A7C15ull;
    int64_t now = START;
    mt_location_code stack[400];
    size_t depth = 3;
    for (size_t i = 0; i < depth; i++)
        stack[i] = code_of(i);
    uint64_t live[256];
    size_t nlive = 0;
    for (unsigned e = 0; e < nevents; e++) {
        unsigned r = rndn(1000);
        now += r < 3 ? 31000000 : rndn(40); /* some gaps over 30 s */
        /* Random walk of the stack: pop a few, push a few. */
        size_t pop = rndn(4);
        depth = depth > pop + 1 ? depth - pop : 1;
        size_t push = rndn(5);
        if (r == 7)
            push = 250; /* occasionally a very deep recursion */
        while (push-- && depth < 300)
            stack[depth++] = code_of(rnd() % 64 < 48 ? rndn(200) : rndn(NCODES));
        unsigned what = rndn(10);
        if (what < 6 || nlive == 0) {
            uint64_t len = rndn(4) == 0 ? rnd() % 100000 : rndn(20);
            uint64_t ns = rndn(8) == 0 ? 1 + rndn(5) : 1;
            mt_source src = (mt_source)rndn(3);
            mt_obj_id id;
            s.in_put = 1;
            CHECK_QUIET(mt_writer_put_alloc(w, now, len, ns, src, stack, depth, &id) == 0,
                  "put_alloc");
            s.in_put = 0;
            rec rc = {MT_EVENT_ALLOC, now - START, id, len, ns, src, NULL, depth};
            rc.bt = malloc(depth * sizeof *rc.bt);
            memcpy(rc.bt, stack, depth * sizeof *rc.bt);
            remember(rc);
            if (nlive < 256)
                live[nlive++] = id;
        } else {
            size_t k = rndn((unsigned)nlive);
            uint64_t id = live[k];
            int promote = what == 6;
            if (!promote)
                live[k] = live[--nlive];
            CHECK_QUIET((promote ? mt_writer_put_promote(w, now, id) : mt_writer_put_collect(w, now, id)) == 0,
                  "put promote/collect");
            remember((rec){promote ? MT_EVENT_PROMOTE : MT_EVENT_COLLECT, now - START, id, 0, 0, 0,
                           NULL, 0});
        }
    }
    CHECK_QUIET(mt_writer_close(w) == 0, "writer closes");
    return s;
}

typedef struct collect_ctx {
    mt_reader *r;
} collect_ctx;

static int reader_resolve(void *ctx, mt_location_code code, const mt_location **locs, size_t *n)
{
    return mt_reader_lookup(ctx, code, locs, n);
}

static void check_locations(mt_reader *r, mt_location_code code, int *bad)
{
    const mt_location *l;
    size_t n;
    unsigned i = (unsigned)((code - 0x400000) / 0x10);
    if (mt_reader_lookup(r, code, &l, &n) < 0) {
        (*bad)++;
        return;
    }
    if (i % 500 == 1) {
        if (n != 1 || strcmp(l[0].filename, locs_of[i][0].filename) ||
            strlen(l[0].defname) != 1000 || strncmp(l[0].defname, long_name, 997) ||
            strcmp(l[0].defname + 997, "...") || l[0].line != 1)
            (*bad)++;
        return;
    }
    if (n != nlocs_of[i]) {
        (*bad)++;
        return;
    }
    for (size_t j = 0; j < n; j++) {
        const mt_location *e = &locs_of[i][j];
        uint32_t line = e->line > 0xFFFFF ? 0xFFFFF : e->line;
        uint32_t sc = e->start_char > 255 ? 255 : e->start_char;
        uint32_t ec = e->end_char > 1023 ? 1023 : e->end_char;
        if (strcmp(l[j].filename, e->filename) || strcmp(l[j].defname, e->defname) ||
            l[j].line != line || l[j].start_char != sc || l[j].end_char != ec)
            (*bad)++;
    }
}

/* Reads the trace back and compares with recs; then re-encodes it. */
static void check_trace(const sink *s, int version)
{
    char *err = NULL;
    mt_reader *r = mt_reader_open_memory(s->data, s->len, "mem.ctf", NULL, &err);
    CHECK_QUIET(r != NULL, "v%d trace opens: %s", version, err ? err : "");
    if (!r)
        return;
    const mt_trace_info *info = mt_reader_info(r);
    CHECK_QUIET(info->version == version && info->pid == 4242 && info->start_time == START &&
              info->word_size == 8 && info->sample_rate == 1e-4 &&
              info->context && strcmp(info->context, "unit test") == 0 &&
              strcmp(info->executable_name, "/bin/test") == 0,
          "v%d trace info reads back", version);
    sink again = {0};
    mt_writer_options o = {.version = version, .resolve = reader_resolve, .resolve_ctx = r,
                           .write = sink_write, .write_ctx = &again};
    mt_writer *w = mt_writer_open(-1, info, &o, &err);
    mt_event ev;
    size_t i = 0;
    int rc, mismatches = 0, badlocs = 0;
    while ((rc = mt_reader_next(r, &ev)) == 1) {
        if (i >= nrecs) {
            mismatches++;
            break;
        }
        const rec *x = &recs[i++];
        int same = ev.kind == x->kind && ev.time == x->time && ev.id == x->id;
        if (same && ev.kind == MT_EVENT_ALLOC) {
            same = ev.length == x->length && ev.n_samples == x->nsamples &&
                   ev.source == x->source && ev.backtrace_length == x->btlen &&
                   memcmp(ev.backtrace, x->bt, x->btlen * sizeof *x->bt) == 0;
            for (size_t k = 0; k < ev.backtrace_length; k++)
                check_locations(r, ev.backtrace[k], &badlocs);
        }
        if (!same && mismatches++ < 3)
            printf("  event %zu differs (kind %d time %lld id %llu)\n", i - 1, ev.kind,
                   (long long)ev.time, (unsigned long long)ev.id);
        mt_writer_put_event(w, info->start_time, &ev);
    }
    CHECK_QUIET(rc == 0, "v%d trace reads to the end: %s", version, rc < 0 ? mt_reader_error(r) : "");
    CHECK_QUIET(i == nrecs && mismatches == 0, "v%d: all %zu events read back as written (%zu read, %d differ)",
          version, nrecs, i, mismatches);
    CHECK_QUIET(badlocs == 0, "v%d: every code's locations read back (clamped, long names cut): %d bad",
          version, badlocs);
    CHECK_QUIET(mt_writer_close(w) == 0, "re-encoder closes");
    CHECK_QUIET(again.len == s->len && memcmp(again.data, s->data, s->len) == 0,
          "v%d: re-encoding the decoded trace gives the same bytes", version);
    free(again.data);
    mt_reader_close(r);
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Walks the packet headers: sizes, time spans, v3 id chunks. */
static void check_packets(const sink *s, int version)
{
    size_t hs = version >= 3 ? 68 : 66, off = 0, npackets = 0;
    int bad_size = 0, bad_span = 0, bad_chunk = 0;
    while (off + hs <= s->len) {
        const unsigned char *p = s->data + off;
        size_t size = (p[4] | p[5] << 8 | p[6] << 16 | (size_t)p[7] << 24) / 8;
        int64_t b = (int64_t)get64(p + 8), e = (int64_t)get64(p + 16);
        uint64_t ib = get64(p + hs - 16), ie = get64(p + hs - 8);
        if (size > 32768 || size < hs)
            bad_size++;
        if (e - b > 30000000)
            bad_span++;
        if (version >= 3 && ie > ib && ib / 10000 != (ie - 1) / 10000)
            bad_chunk++;
        npackets++;
        off += size ? size : 1;
    }
    CHECK_QUIET(off == s->len && bad_size == 0, "v%d: %zu packets of at most 32 KiB tile the file",
          version, npackets);
    CHECK_QUIET(bad_span == 0, "v%d: no packet spans more than 30 s", version);
    CHECK_QUIET(bad_chunk == 0, "v%d: no packet crosses a 10000-id chunk", version);
}

/* A stack deeper than the 4096-byte budget: outermost 409 frames survive;
 * the next allocation's prefix exceeds what the reader has, so it repeats
 * the truncated backtrace. */
static void check_truncation(void)
{
    sink s = {0};
    mt_trace_info info = {.sample_rate = 1, .word_size = 8, .executable_name = "t",
                          .host_name = "h", .ocaml_runtime_params = "", .pid = 1,
                          .start_time = START};
    mt_writer_options o = {.resolve = resolve, .resolve_ctx = &s, .write = sink_write,
                           .write_ctx = &s};
    mt_writer *w = mt_writer_open(-1, &info, &o, NULL);
    static mt_location_code deep[1001];
    for (unsigned i = 0; i < 1001; i++)
        deep[i] = code_of(i + 1);
    mt_writer_put_alloc(w, START + 1, 4, 1, MT_SOURCE_MINOR, deep, 1000, NULL);
    mt_writer_put_alloc(w, START + 2, 4, 1, MT_SOURCE_MINOR, deep, 1001, NULL);
    mt_writer_put_alloc(w, START + 3, 4, 1, MT_SOURCE_MINOR, deep, 2, NULL);
    CHECK_QUIET(mt_writer_close(w) == 0, "deep-stack trace closes");
    mt_reader *r = mt_reader_open_memory(s.data, s.len, "deep.ctf", NULL, NULL);
    mt_event ev;
    CHECK_QUIET(r && mt_reader_next(r, &ev) == 1 && ev.backtrace_length == 409 &&
              memcmp(ev.backtrace, deep, 409 * sizeof deep[0]) == 0 && ev.common_prefix == 0,
          "a 1000-frame stack keeps its outermost 409 frames");
    CHECK_QUIET(r && mt_reader_next(r, &ev) == 1 && ev.common_prefix == 1000 &&
              ev.backtrace_length == 409,
          "the next stack's prefix (1000) exceeds the truncated one: it is repeated");
    CHECK_QUIET(r && mt_reader_next(r, &ev) == 1 && ev.common_prefix == 2 && ev.backtrace_length == 2,
          "a shorter stack after that decodes normally");
    CHECK_QUIET(r && mt_reader_next(r, &ev) == 0, "deep-stack trace ends cleanly");
    mt_reader_close(r);
    free(s.data);
}

/* After fork, the child must not write into its parent's trace. */
static void check_fork(void)
{
    sink s = {0};
    mt_trace_info info = {.sample_rate = 1, .word_size = 8, .executable_name = "t",
                          .host_name = "h", .ocaml_runtime_params = "", .pid = 1,
                          .start_time = START};
    mt_writer_options o = {.write = sink_write, .write_ctx = &s};
    mt_writer *w = mt_writer_open(-1, &info, &o, NULL);
    mt_location_code bt[1] = {0x1234};
    mt_writer_put_alloc(w, START, 1, 1, MT_SOURCE_MINOR, bt, 1, NULL);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        size_t before = s.len;
        int rc = mt_writer_flush(w);
        _exit(rc == -1 && s.len == before && mt_writer_error(w) ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_QUIET(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "a forked child's flush fails and writes nothing");
    CHECK_QUIET(mt_writer_close(w) == 0, "the parent still closes its trace");
    free(s.data);
}

int main(void)
{
    init_locations();
    for (int version = 2; version <= 3; version++) {
        resolver_calls = 0;
        sink s = write_trace(version, 60000);
        CHECK_QUIET(resolver_calls > NCODES / 2, "v%d: the resolver was asked for locations (%d)",
              version, resolver_calls);
        check_trace(&s, version);
        check_packets(&s, version);
        free(s.data);
    }
    check_truncation();
    check_fork();
    for (size_t i = 0; i < nrecs; i++)
        free(recs[i].bt);
    free(recs);
    if (failures == 0)
        printf("PASS: writer round trips (v2, v3), packet rules, truncation, fork\n");
    return failures ? 1 : 0;
}
