/*
 * stacks.c - unit test of the stack interner (lib/analyze/stacks.c): a
 * function, a frame's child node and a call path are interned once and
 * found again (past the table growths and the list-to-table switch of a
 * node's children), the depth rule at the end (the "[truncated]" frame
 * for stacks deeper than MT_STACK_MAX_DEPTH), and one interner taking
 * over another's stacks with their names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/analyze.h"
#include "analyze/stacks.h"
#include "../check.h"

static void funcs(void)
{
    mta_stacks st;
    memset(&st, 0, sizeof st);
    CHECK(mta_stacks_init(&st) == 0 && st.nodes.n == 1 && st.nodes.v[0].depth == 0,
          "a new interner holds the root node only");
    int64_t a = mta_stacks_func(&st, "f", "a.c"), b = mta_stacks_func(&st, "f", "b.c");
    CHECK(a >= 0 && b >= 0 && a != b, "the same name in two files: two functions");
    CHECK(mta_stacks_func(&st, "f", "a.c") == a, "(f, a.c) again: the same function");
    /* 2000 functions: the table grows several times over */
    char name[32];
    int ok = 1;
    int64_t id[2000];
    for (int i = 0; i < 2000; i++) {
        snprintf(name, sizeof name, "fn%d", i);
        id[i] = mta_stacks_func(&st, name, "x.c");
        ok &= id[i] >= 0;
    }
    for (int i = 0; i < 2000 && ok; i++) {
        snprintf(name, sizeof name, "fn%d", i);
        ok &= mta_stacks_func(&st, name, "x.c") == id[i] &&
              strcmp(st.funcs.v[id[i]].name, name) == 0;
    }
    CHECK(ok && st.funcs.n == 2002, "2000 functions interned once each, found again by name");
    mta_stacks_free(&st);
}

static void children(void)
{
    mta_stacks st;
    memset(&st, 0, sizeof st);
    if (mta_stacks_init(&st) < 0) {
        CHECK(0, "init");
        return;
    }
    /* 20 children of the root (past the list: a table), each with a child */
    int64_t kid[20], grand[20];
    int ok = 1;
    for (int i = 0; i < 20; i++) {
        kid[i] = mta_stacks_child(&st, 0, (mt_frame_id)(100 + i));
        grand[i] = kid[i] >= 0 ? mta_stacks_child(&st, (mt_node_id)kid[i], 7) : -1;
        ok &= kid[i] > 0 && grand[i] > 0;
    }
    CHECK(ok && st.nodes.n == 41, "20 children and 20 grandchildren: 41 nodes");
    for (int i = 0; i < 20 && ok; i++)
        ok &= mta_stacks_child(&st, 0, (mt_frame_id)(100 + i)) == kid[i] &&
              mta_stacks_child(&st, (mt_node_id)kid[i], 7) == grand[i] &&
              st.nodes.v[grand[i]].parent == kid[i] && st.nodes.v[grand[i]].depth == 2;
    CHECK(ok && st.nodes.n == 41, "each found again, with its parent and depth");
    mt_frame_id path[4];
    size_t d = ok ? mta_stacks_path(&st, (mt_node_id)grand[5], path, 4) : 0;
    CHECK(d == 2 && path[0] == 105 && path[1] == 7, "a node's call path, outermost first");
    mta_stacks_free(&st);
}

static void depth_rule(void)
{
    mta_stacks st;
    memset(&st, 0, sizeof st);
    int ok = mta_stacks_init(&st) == 0;
    mt_node_id n = 0;
    for (size_t i = 0; ok && i < MT_STACK_MAX_DEPTH + 5; i++) {
        int64_t c = mta_stacks_child(&st, n, (mt_frame_id)(i % 3));
        ok = c >= 0;
        n = (mt_node_id)c;
    }
    ok = ok && mta_stacks_seal(&st) == 0;
    CHECK(ok && st.deepest == MT_STACK_MAX_DEPTH + 5, "sealed: the deepest node's depth");
    CHECK(ok && st.trunc_frame < st.frames.n &&
              strcmp(st.funcs.v[st.frames.v[st.trunc_frame].func].name, MT_TRUNCATED_NAME) == 0,
          "deeper than MT_STACK_MAX_DEPTH: the truncation frame is made");
    CHECK(ok && !st.func_slots && !st.memo && !st.first_child.v,
          "sealed: the interning tables are freed, the stacks kept");
    mta_stacks_free(&st);

    memset(&st, 0, sizeof st);
    ok = mta_stacks_init(&st) == 0 && mta_stacks_child(&st, 0, 0) > 0 && mta_stacks_seal(&st) == 0;
    CHECK(ok && st.deepest == 1 && st.frames.n == 0, "shallow stacks: no truncation frame");
    mta_stacks_free(&st);
}

static void adopt(void)
{
    mta_stacks dst, src;
    memset(&dst, 0, sizeof dst);
    memset(&src, 0, sizeof src);
    const char *kept = NULL;
    int ok = mta_stacks_init(&dst) == 0 && mta_stacks_init(&src) == 0 &&
             (kept = mta_strdup(&dst.strings, "the trace's host")) != NULL;
    int64_t f = ok ? mta_stacks_func(&src, "from_src", "s.c") : -1;
    int64_t c = f >= 0 ? mta_stacks_child(&src, 0, 3) : -1;
    ok = ok && c > 0 && mta_stacks_adopt(&dst, &src) == 0;
    mta_stacks_free(&src);
    CHECK(ok && dst.funcs.n == 1 && strcmp(dst.funcs.v[0].name, "from_src") == 0 &&
              dst.nodes.n == 2 && strcmp(kept, "the trace's host") == 0,
          "adopted: the other interner's functions, nodes and names, the own names kept");
    CHECK(ok && mta_stacks_func(&dst, "from_src", "s.c") == f && mta_stacks_child(&dst, 0, 3) == c,
          "adopted: its tables find them (nothing interned twice)");
    mta_stacks_free(&dst);
}

int main(void)
{
    funcs();
    children();
    depth_rule();
    adopt();
    return failures ? 1 : 0;
}
