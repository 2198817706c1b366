/*
 * paths.c - unit test of the model's call-path memo (whole stacks, buildread.c
 * trie_path): a program that comes back to call paths it used before gets
 * the same stacks, with the same costs in the same order, as a model that
 * builds each stack code by code (a model cut deeper than every stack),
 * also past the memo's buffer starting over, and folded too.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/load.h"
#include "memtrace/analyze.h"
#include "testtrace.h"

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ULL;
    x ^= x >> 27;
    return x;
}

/* Path p: 6 to 37 codes; the outer ones shared by many paths, the inner
 * ones drawn from a few hundred functions. */
static size_t path_of(uint64_t p, uint64_t *codes)
{
    size_t len = 6 + (size_t)(p % 32);
    codes[0] = 0x1000;
    for (size_t k = 1; k < len; k++)
        codes[k] = 0x1000 + 16 * (k < 3 ? 1 + (p >> k) % 4 : 1 + mix(p * 64 + k) % 400);
    return len;
}

/* Rounds over npaths paths: a few allocations on one path, then the next
 * (most allocations start a new path, so most stacks go through the
 * memo); every other block is freed soon. */
static int write_trace(const char *path, uint64_t npaths, int rounds)
{
    int fd;
    mt_writer *w = tt_writer_open(path, "paths-test", 0.01, tt_resolve_none, &fd);
    if (!w)
        return -1;
    mt_timestamp t = TT_START;
    int rc = 0;
    uint64_t codes[40];
    for (int r = 0; r < rounds && rc == 0; r++)
        for (uint64_t i = 0; i < npaths && rc == 0; i++) {
            uint64_t p = mix(i + 1) % npaths;
            size_t len = path_of(p, codes);
            for (uint64_t k = 0; k <= (i + (uint64_t)r) % 3; k++) {
                mt_obj_id id;
                t += 1;
                rc |= mt_writer_put_alloc(w, t, 1 + i % 100, 1, MT_SOURCE_EXTERNAL, codes, len,
                                          &id);
                if (k % 2 == 0)
                    rc |= mt_writer_put_collect(w, t + 1, id);
            }
        }
    rc |= mt_writer_close(w);
    close(fd);
    return rc;
}

/* A fingerprint of a selection's stacks in order: node and cost of each. */
typedef struct print { uint64_t n, h; } print;

static int add(void *ctx, mt_node_id node, const mt_cost *c)
{
    print *p = ctx;
    uint64_t v[1 + sizeof *c / 8];
    v[0] = node;
    memcpy(&v[1], c, sizeof *c); /* 8-byte fields */
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        p->h = mix(p->h ^ v[i]);
    p->n++;
    return 0;
}

static int fingerprint(const char *path, size_t max_depth, int fold, print *out)
{
    mt_model_options mo = {0};
    mo.max_depth = max_depth;
    mo.fold = fold;
    mo.fold_live_at = MT_TIME_END;
    char *err = NULL;
    mt_model *m = mt_model_load(path, &mo, &err);
    mt_selection *s = m ? mt_select(m, NULL, MT_TIME_END) : NULL;
    memset(out, 0, sizeof *out);
    int rc = s ? mt_selection_each_stack(s, add, out) : -1;
    if (!m)
        printf("load %s: %s\n", path, err ? err : "?");
    free(err);
    mt_selection_free(s);
    mt_model_free(m);
    return rc;
}

static void compare(const char *path, const char *what)
{
    print whole, step, folded, folded_step;
    int ok = fingerprint(path, 0, 0, &whole) == 0 && fingerprint(path, 64, 0, &step) == 0 &&
             fingerprint(path, 0, 1, &folded) == 0 && fingerprint(path, 64, 1, &folded_step) == 0;
    CHECK(ok && whole.n > 100 && whole.n == step.n && whole.h == step.h,
          "%s: whole stacks = stacks built code by code (%llu stacks)", what,
          (unsigned long long)whole.n);
    CHECK(ok && folded.n == whole.n && folded.h == folded_step.h, "%s: folded, the same", what);
}

int main(void)
{
    const char *dir = getenv("MT_TMP");
    char p1[4096], p2[4096];
    snprintf(p1, sizeof p1, "%s/paths1.ctf", dir ? dir : "/tmp");
    snprintf(p2, sizeof p2, "%s/paths2.ctf", dir ? dir : "/tmp");
    /* 300 paths, often revisited; 70 000 paths twice over: more codes than
     * the memo's buffer holds, so it starts over while being used */
    if (write_trace(p1, 300, 20) < 0 || write_trace(p2, 70000, 2) < 0) {
        printf("FAIL: cannot write the test traces\n");
        return 1;
    }
    compare(p1, "few paths");
    compare(p2, "many paths");
    return failures ? 1 : 0;
}
