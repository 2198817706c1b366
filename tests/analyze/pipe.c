/*
 * pipe.c - unit test of folded models read on two threads
 * (mt_model_options.read_threads 2: a reading thread decodes and finds the
 * stacks, the caller's thread folds) against one thread: the same hook
 * calls in the same order seeing valid stacks, the same nodes, frames,
 * functions and per-stack costs, whole and shallow; the reader's warnings
 * and the model's own in the same order; the same error for a damaged
 * trace and for a hook that stops the read; progress reported on the
 * caller's thread. Also in the thread sanitizer's stage of make test.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/load.h"
#include "memtrace/analyze.h"
#include "testtrace.h"

#define NCODES 400
static mt_location locs[NCODES];
static char names[NCODES][16];

static int resolve(void *ctx, mt_location_code code, const mt_location **l, size_t *n)
{
    (void)ctx;
    if (code < 0x100 || code >= 0x100 + NCODES)
        return -1;
    *l = &locs[code - 0x100];
    *n = 1;
    return 0;
}

static uint64_t rnd_state = 2463534242ULL;
static uint64_t rnd(void) { return tt_rnd(&rnd_state); }

/* n allocations on stacks that keep appearing all along (new trie nodes
 * in every part of the file), most freed soon, some never; near the end a
 * second collection of a block freed long before (the model's warning). */
static int write_trace(const char *path, size_t n)
{
    int fd;
    mt_writer *w = tt_writer_open(path, "pipe-test", 0.01, resolve, &fd);
    if (!w)
        return -1;
    enum { Q = 4096 };
    static uint64_t live[Q];
    size_t nl = 0;
    uint64_t freed = 0;            /* a block freed early, + 1 */
    mt_timestamp t = TT_START;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        t += 1 + (int64_t)(rnd() % 4);
        /* one of 3000 stacks, of which the later parts of the file use
         * more: new ones come all along */
        uint64_t st[24], pick = 1 + rnd() % (1 + i * 3000 / n), h = pick * 0x9E3779B97F4A7C15ULL;
        size_t len = 2 + pick % 20;
        for (size_t k = 0; k < len; k++)
            st[k] = 0x100 + (k < 3 ? k : tt_rnd(&h) % NCODES);
        mt_obj_id id;
        uint64_t words = 1 + rnd() % 500;
        rc |= mt_writer_put_alloc(w, t, words, 1 + words / 64, (mt_source)(rnd() % 3), st, len,
                                  &id);
        if (rnd() % 100 < 7)
            continue; /* never freed */
        if (nl == Q) {
            size_t j = rnd() % Q;
            rc |= mt_writer_put_collect(w, t, live[j]);
            if (!freed)
                freed = live[j] + 1;
            live[j] = live[--nl];
        }
        live[nl++] = id;
        if (i == n - 2000 && freed)
            rc |= mt_writer_put_collect(w, t, freed - 1);
    }
    rc |= mt_writer_close(w);
    close(fd);
    return rc;
}

/* What the hooks saw: a running hash of every call with its stack's
 * frames and function names, the number of calls, and whether progress
 * came on the caller's thread. */
typedef struct seen {
    uint64_t hash;
    size_t n_fold, n_alloc, n_progress;
    size_t stop_at;              /* on_fold returns -1 at this call (0: never) */
    int bad_stack, other_thread;
    pthread_t self;
    char warnings[4096];
} seen;

static uint64_t mix(uint64_t h, uint64_t x) { return (h ^ x) * 0x100000001b3ULL; }

static void see(seen *s, const mt_model *m, const mt_alloc *a, uint64_t seq, int kind)
{
    if (!pthread_equal(pthread_self(), s->self))
        s->other_thread = 1;
    s->hash = mix(mix(mix(mix(s->hash, (uint64_t)kind), seq), a->size), (uint64_t)a->collect);
    mt_frame_id fr[64];
    if (a->stack >= mt_model_n_nodes(m)) {
        s->bad_stack = 1;
        return;
    }
    size_t d = mt_model_stack(m, a->stack, fr, 64);
    const mt_frame *frames = mt_model_frames(m);
    const mt_func *funcs = mt_model_funcs(m);
    for (size_t k = 0; k < d && k < 64; k++) {
        if (fr[k] >= mt_model_n_frames(m) || frames[fr[k]].func >= mt_model_n_funcs(m)) {
            s->bad_stack = 1;
            return;
        }
        for (const char *c = funcs[frames[fr[k]].func].name; *c; c++)
            s->hash = mix(s->hash, (unsigned char)*c);
    }
}

static int on_fold(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    seen *s = ctx;
    see(s, m, a, seq, 1);
    return ++s->n_fold == s->stop_at ? -1 : 0;
}

static int on_alloc(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    seen *s = ctx;
    see(s, m, a, seq, 0);
    s->n_alloc++;
    return 0;
}

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    seen *s = ctx;
    (void)done;
    (void)total;
    if (!pthread_equal(pthread_self(), s->self))
        s->other_thread = 1;
    s->n_progress++;
}

static void on_warning(void *ctx, const char *msg)
{
    seen *s = ctx;
    if (!pthread_equal(pthread_self(), s->self))
        s->other_thread = 1;
    size_t l = strlen(s->warnings);
    snprintf(s->warnings + l, sizeof s->warnings - l, "%s[%s]", l ? ", " : "", msg);
}

typedef struct run {
    mt_model *m;
    char *err;
    seen s;
} run;

static void load(run *r, const char *path, int threads, int hooks, size_t max_depth,
                 size_t stop_at)
{
    memset(r, 0, sizeof *r);
    r->s.self = pthread_self();
    r->s.stop_at = stop_at;
    mt_model_options o = {0};
    o.fold = 1;
    o.fold_live_at = MT_TIME_END;
    o.max_depth = max_depth;
    o.read_threads = threads;
    o.on_warning = on_warning;
    o.warning_ctx = &r->s;
    o.on_progress = on_progress;
    o.progress_ctx = &r->s;
    if (hooks) {
        o.on_fold = on_fold;
        o.on_alloc = on_alloc;
        o.fold_ctx = &r->s;
    }
    r->m = mt_model_load(path, &o, &r->err);
}

static void unload(run *r)
{
    mt_model_free(r->m);
    free(r->err);
}

typedef struct sums { size_t n; uint64_t hash; } sums;

static int each(void *ctx, mt_node_id node, const mt_cost *c)
{
    sums *s = ctx;
    s->n++;
    s->hash = mix(mix(mix(mix(s->hash, node), c->samples), c->live_samples), c->allocs);
    double d[4] = {c->alloc_bytes, c->alloc_objects, c->live_bytes, c->temp_objects};
    uint64_t bits[4];
    memcpy(bits, d, sizeof bits);
    for (int k = 0; k < 4; k++)
        s->hash = mix(s->hash, bits[k]);
    return 0;
}

static sums costs(const mt_model *m)
{
    sums s = {0, 0};
    mt_selection *sel = mt_select(m, NULL, MT_TIME_END);
    if (sel)
        mt_selection_each_stack(sel, each, &s);
    mt_selection_free(sel);
    return s;
}

static int same_model(const mt_model *a, const mt_model *b)
{
    if (mt_model_n_nodes(a) != mt_model_n_nodes(b) || mt_model_n_frames(a) != mt_model_n_frames(b) ||
        mt_model_n_funcs(a) != mt_model_n_funcs(b) ||
        memcmp(mt_model_nodes(a), mt_model_nodes(b), mt_model_n_nodes(a) * sizeof(mt_node)))
        return 0;
    for (size_t i = 0; i < mt_model_n_frames(a); i++) {
        const mt_frame *x = &mt_model_frames(a)[i], *y = &mt_model_frames(b)[i];
        if (x->func != y->func || x->line != y->line || x->code != y->code ||
            x->inline_count != y->inline_count)
            return 0;
    }
    for (size_t i = 0; i < mt_model_n_funcs(a); i++)
        if (strcmp(mt_model_funcs(a)[i].name, mt_model_funcs(b)[i].name) ||
            strcmp(mt_model_funcs(a)[i].filename, mt_model_funcs(b)[i].filename))
            return 0;
    sums x = costs(a), y = costs(b);
    uint64_t pa, pb, ca, cb;
    mt_model_event_counts(a, &pa, NULL, &ca);
    mt_model_event_counts(b, &pb, NULL, &cb);
    return x.n > 1 && x.n == y.n && x.hash == y.hash && pa == pb && ca == cb &&
           mt_model_end(a) == mt_model_end(b) && mt_model_peak_time(a) == mt_model_peak_time(b);
}

static void compare(const char *what, const char *path, int hooks, size_t max_depth)
{
    run one, two;
    load(&one, path, 1, hooks, max_depth, 0);
    load(&two, path, 2, hooks, max_depth, 0);
    CHECK(one.m && two.m, "%s: both load (%s)", what, two.err ? two.err : one.err ? one.err : "");
    if (one.m && two.m) {
        CHECK(same_model(one.m, two.m), "%s: two threads build the same model (%zu nodes)", what,
              mt_model_n_nodes(two.m));
        if (hooks)
            CHECK(one.s.hash == two.s.hash && one.s.n_fold == two.s.n_fold &&
                      one.s.n_alloc == two.s.n_alloc && one.s.n_fold > 100000 &&
                      !one.s.bad_stack && !two.s.bad_stack,
                  "%s: the same %zu on_fold and %zu on_alloc calls, valid stacks", what,
                  two.s.n_fold, two.s.n_alloc);
        const char *model_w = strstr(two.s.warnings, "already collected"),
                   *reader_w = strstr(two.s.warnings, "skipping truncated");
        CHECK(strcmp(one.s.warnings, two.s.warnings) == 0 && model_w && reader_w &&
                  model_w < reader_w,
              "%s: the same warnings in the same order: %s", what, two.s.warnings);
        CHECK(!two.s.other_thread && two.s.n_progress > 0,
              "%s: %zu progress calls and every callback on the caller's thread", what,
              two.s.n_progress);
    }
    unload(&one);
    unload(&two);
}

static int copy_damaged(const char *from, const char *to, long at, size_t n)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    int rc = in && out ? 0 : -1;
    long pos = 0;
    int c;
    while (rc == 0 && (c = getc(in)) != EOF) {
        if (pos >= at && pos < at + (long)n)
            c = 0xff;
        putc(c, out);
        pos++;
    }
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        rc = -1;
    return rc;
}

int main(void)
{
    for (int i = 0; i < NCODES; i++) {
        snprintf(names[i], sizeof names[i], "f%d", i);
        locs[i] = (mt_location){"p.c", names[i], i + 1, 0, 0};
    }
    const char *dir = getenv("MT_TMP");
    char path[4096], bad[4096];
    snprintf(path, sizeof path, "%s/pipe.ctf", dir ? dir : "/tmp");
    snprintf(bad, sizeof bad, "%s/pipe-bad.ctf", dir ? dir : "/tmp");
    if (write_trace(path, 400000) < 0) {
        printf("FAIL: cannot write the test trace\n");
        return 1;
    }
    /* a truncated packet at the end: the reader's warning, after the
     * model's (the unknown object collected near the end) */
    FILE *f = fopen(path, "ab");
    if (!f || fwrite("\x01\x02\x03", 1, 3, f) != 3 || fclose(f) != 0) {
        printf("FAIL: cannot append to the test trace\n");
        return 1;
    }
    compare("whole stacks, hooks", path, 1, 0);
    compare("whole stacks", path, 0, 0);
    compare("shallow (2), hooks", path, 1, 2);
    compare("shallow (5)", path, 0, 5);

    /* the reading thread's error comes after the events before it, as is */
    struct stat st;
    if (stat(path, &st) < 0 || copy_damaged(path, bad, (long)st.st_size / 2, 64) < 0) {
        printf("FAIL: cannot write the damaged trace\n");
        return 1;
    }
    run one, two;
    load(&one, bad, 1, 1, 0, 0);
    load(&two, bad, 2, 1, 0, 0);
    CHECK(!one.m && !two.m && one.err && two.err && strcmp(one.err, two.err) == 0 &&
              strstr(two.err, "offset") && one.s.hash == two.s.hash &&
              one.s.n_fold == two.s.n_fold && two.s.n_fold > 0,
          "damaged trace: the same error after the same %zu folds: %s", two.s.n_fold,
          two.err ? two.err : "(none)");
    unload(&one);
    unload(&two);

    /* a hook that stops the read: the reading thread is stopped and joined
     * (the sanitizers see any thread or memory left behind) */
    size_t stops[] = {1, 1000, 150000};
    for (size_t k = 0; k < 3; k++) {
        load(&one, path, 1, 1, 0, stops[k]);
        load(&two, path, 2, 1, 0, stops[k]);
        CHECK(!one.m && !two.m && one.err && two.err && strcmp(one.err, two.err) == 0 &&
                  strstr(two.err, "stopped by the caller") && one.s.hash == two.s.hash &&
                  two.s.n_fold == stops[k] && one.s.n_alloc == two.s.n_alloc,
              "on_fold stops at call %zu: the same calls, then '%s'", stops[k],
              two.err ? two.err : "(none)");
        unload(&one);
        unload(&two);
    }
    unlink(path);
    unlink(bad);
    return failures != 0;
}
