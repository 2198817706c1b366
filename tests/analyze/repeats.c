/*
 * repeats.c - unit test of the builder's reuse of the previous allocation's
 * call path (buildread.c stack_of): allocations whose backtrace the codec
 * repeats, or shares only in part (a prefix of the previous one, the same
 * length with another last frame, another first frame), each counted on
 * its own stack, for whole stacks, the shallow models (1 and 2 frames) and
 * folded models; also after 60 000 distinct two-frame stacks (the shallow
 * models' table outgrows the caches and events go through the look-ahead
 * queue, which cuts the backtraces before the stack is found).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memtrace/analyze.h"
#include "testtrace.h"

enum { A = 0x100, B = 0x110, C = 0x120, D = 0x130, E = 0x140 };

/* The tricky sequence: each backtrace (outermost first, 0-terminated) and
 * how many allocations in a row take it. */
static const struct { uint64_t codes[5]; int times; } seq[] = {
    {{A, B, C}, 3},    /* repeated whole */
    {{A, B}, 2},       /* a prefix of the previous one */
    {{A, B, C, D}, 1}, /* longer */
    {{A, B, C, E}, 2}, /* same length, last frame differs */
    {{A}, 1},
    {{B, C}, 1},       /* first frame differs */
    {{A, B, C}, 1},
    {{A, B}, 1},
    {{C, B, C}, 2},    /* same length and last frames as ABC */
    {{A, B, C}, 1},
};
#define NSEQ (sizeof seq / sizeof seq[0])
#define NBIG 60000

static size_t seq_len(size_t i)
{
    size_t n = 0;
    while (n < 5 && seq[i].codes[n])
        n++;
    return n;
}

/* A stack's key: a hash of its codes, outermost first. */
static uint64_t key_of(const uint64_t *codes, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ n;
    for (size_t i = 0; i < n; i++)
        h = (h ^ codes[i]) * 0x100000001b3ULL;
    return h ^ (h >> 31);
}

typedef struct kc { uint64_t key, count; } kc;

static int kc_cmp(const void *a, const void *b)
{
    const kc *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->count < y->count ? -1 : x->count > y->count;
}

static int write_trace(const char *path, int big)
{
    int fd;
    mt_writer *w = tt_writer_open(path, "repeats-test", 1, tt_resolve_none, &fd);
    if (!w)
        return -1;
    mt_timestamp t = TT_START;
    int rc = 0;
    mt_obj_id id;
    for (int i = 0; big && i < NBIG && rc == 0; i++) {
        uint64_t codes[2] = {0x1000, 0x100000 + 16 * (uint64_t)i};
        rc |= mt_writer_put_alloc(w, ++t, 1, 1, MT_SOURCE_EXTERNAL, codes, 2, &id);
    }
    for (size_t i = 0; i < NSEQ && rc == 0; i++)
        for (int k = 0; k < seq[i].times; k++)
            rc |= mt_writer_put_alloc(w, ++t, 1, 1, MT_SOURCE_EXTERNAL, seq[i].codes,
                                      seq_len(i), &id);
    rc |= mt_writer_close(w);
    close(fd);
    return rc;
}

/* The expected stacks of a model cut at depth (0: whole): each
 * allocation's innermost depth codes, counted. */
static size_t expected(int big, size_t depth, kc *out)
{
    size_t n = 0;
    for (int i = 0; big && i < NBIG; i++) {
        uint64_t codes[2] = {0x1000, 0x100000 + 16 * (uint64_t)i};
        size_t len = depth && depth < 2 ? depth : 2;
        out[n].key = key_of(codes + 2 - len, len);
        out[n++].count = 1;
    }
    for (size_t i = 0; i < NSEQ; i++) {
        size_t len = seq_len(i), cut = depth && depth < len ? depth : len;
        out[n].key = key_of(seq[i].codes + len - cut, cut);
        out[n++].count = (uint64_t)seq[i].times;
    }
    /* merge equal keys */
    qsort(out, n, sizeof *out, kc_cmp);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && out[m - 1].key == out[i].key)
            out[m - 1].count += out[i].count;
        else
            out[m++] = out[i];
    }
    return m;
}

typedef struct got { const mt_model *m; kc *v; size_t n; } got;

static int add(void *ctx, mt_node_id node, const mt_cost *c)
{
    got *g = ctx;
    const mt_node *nodes = mt_model_nodes(g->m);
    const mt_frame *frames = mt_model_frames(g->m);
    uint64_t codes[8];
    size_t depth = nodes[node].depth;
    if (depth > 8)
        return -1;
    for (size_t i = depth; i > 0; i--, node = nodes[node].parent)
        codes[i - 1] = frames[nodes[node].frame].code;
    g->v[g->n].key = key_of(codes, depth);
    g->v[g->n++].count = c->allocs;
    return 0;
}

static void check(const char *path, int big, size_t depth, int fold)
{
    size_t cap = NBIG + NSEQ + 8;
    kc *want = calloc(cap, sizeof *want), *have = calloc(cap, sizeof *have);
    mt_model_options mo = {0};
    mo.max_depth = depth;
    mo.fold = fold;
    mo.fold_live_at = MT_TIME_END;
    char *err = NULL;
    mt_model *m = want && have ? mt_model_load(path, &mo, &err) : NULL;
    mt_selection *s = m ? mt_select(m, NULL, MT_TIME_END) : NULL;
    got g = {m, have, 0};
    int ok = s && mt_selection_each_stack(s, add, &g) == 0;
    size_t n = ok ? expected(big, depth, want) : 0;
    if (ok)
        qsort(have, g.n, sizeof *have, kc_cmp);
    ok = ok && g.n == n && memcmp(want, have, n * sizeof *want) == 0;
    CHECK(ok, "%s trace, depth %zu%s: each allocation on its own stack (%zu stacks, %zu expected)",
          big ? "big" : "small", depth, fold ? ", folded" : "", g.n, n);
    if (!m)
        printf("load %s: %s\n", path, err ? err : "?");
    free(err);
    mt_selection_free(s);
    mt_model_free(m);
    free(want);
    free(have);
}

int main(void)
{
    const char *dir = getenv("MT_TMP");
    char p1[4096], p2[4096];
    snprintf(p1, sizeof p1, "%s/repeats1.ctf", dir ? dir : "/tmp");
    snprintf(p2, sizeof p2, "%s/repeats2.ctf", dir ? dir : "/tmp");
    if (write_trace(p1, 0) < 0 || write_trace(p2, 1) < 0) {
        printf("FAIL: cannot write the test traces\n");
        return 1;
    }
    static const size_t depths[] = {0, 1, 2, 64};
    for (int big = 0; big <= 1; big++)
        for (size_t d = 0; d < sizeof depths / sizeof depths[0]; d++)
            for (int fold = 0; fold <= 1; fold++)
                check(big ? p2 : p1, big, depths[d], fold);
    return failures ? 1 : 0;
}
