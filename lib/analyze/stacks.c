/*
 * stacks.c - the stack interner (stacks.h): functions by (name, file),
 * frames by code, trie nodes by (parent, frame), each behind a small
 * direct-mapped cache of recent answers; the depth rule at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacks.h"

#define MEMO_SIZE 8192
#define CODE_MEMO_SIZE 4096
#define BIG_NODE 4   /* children beyond this go into the table */

int mta_stacks_init(mta_stacks *st)
{
    if (mta_table_init(&st->code_frames, 1024) < 0 || mta_table_init(&st->children, 4096) < 0)
        return -1;
    st->func_mask = 255;
    if (!(st->memo = calloc(MEMO_SIZE, sizeof *st->memo)) ||
        !(st->code_memo = calloc(CODE_MEMO_SIZE, sizeof *st->code_memo)) ||
        !(st->func_slots = calloc(st->func_mask + 1, sizeof *st->func_slots)))
        return -1;
    mt_node root = {0, 0, 0};
    uint32_t zero32 = 0;
    uint16_t zero16 = 0;
    if (MTA_PUSH(st->nodes, root) < 0 || MTA_PUSH(st->first_child, zero32) < 0 ||
        MTA_PUSH(st->next_sibling, zero32) < 0 || MTA_PUSH(st->n_kids, zero16) < 0)
        return -1;
    return 0;
}

/* FNV-1a from a keyed start (names come from the trace; see table.h). */
static uint64_t str_hash(const char *s, uint64_t h)
{
    while (*s)
        h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
    return h;
}

static uint64_t func_hash(const char *name, const char *file)
{
    return str_hash(file, str_hash(name, 0xcbf29ce484222325ULL ^ mta_seed()));
}

int64_t mta_stacks_func(mta_stacks *st, const char *name, const char *file)
{
    if ((st->funcs.n + 1) * 2 > st->func_mask + 1) {
        size_t cap = (st->func_mask + 1) * 2;
        uint32_t *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return -1;
        for (size_t i = 0; i < st->funcs.n; i++) {
            const mt_func *f = &st->funcs.v[i];
            size_t j = mta_hash64(func_hash(f->name, f->filename)) & (cap - 1);
            while (slots[j])
                j = (j + 1) & (cap - 1);
            slots[j] = (uint32_t)i + 1;
        }
        free(st->func_slots);
        st->func_slots = slots;
        st->func_mask = cap - 1;
    }
    size_t j = mta_hash64(func_hash(name, file)) & st->func_mask;
    while (st->func_slots[j]) {
        const mt_func *f = &st->funcs.v[st->func_slots[j] - 1];
        if (!strcmp(f->name, name) && !strcmp(f->filename, file))
            return st->func_slots[j] - 1;
        j = (j + 1) & st->func_mask;
    }
    mt_func f;
    f.name = mta_strdup(&st->strings, name);
    f.filename = mta_strdup(&st->strings, file);
    if (!f.name || !f.filename || MTA_PUSH(st->funcs, f) < 0)
        return -1;
    st->func_slots[j] = (uint32_t)st->funcs.n;
    return (int64_t)st->funcs.n - 1;
}

int64_t mta_stacks_code(mta_stacks *st, mt_reader *r, uint64_t code)
{
    /* a direct-mapped cache of recent codes in front of the table */
    struct mta_code_memo *cm = &st->code_memo[mta_hash64(code) & (CODE_MEMO_SIZE - 1)];
    if (cm->frame && cm->code == code)
        return cm->frame - 1;
    int64_t f = mta_table_get(&st->code_frames, code);
    if (f >= 0) {
        cm->code = code;
        cm->frame = (uint32_t)f + 1;
        return f;
    }
    const mt_location *locs = NULL;
    size_t n = 0;
    if (mt_reader_lookup(r, code, &locs, &n) < 0)
        n = 0;
    if (n > 65535)
        n = 65535;
    int64_t first = (int64_t)st->frames.n;
    if (n == 0) {
        char name[32];
        snprintf(name, sizeof name, "0x%llx", (unsigned long long)code);
        int64_t fn = mta_stacks_func(st, name, "");
        if (fn < 0)
            return -1;
        mt_frame fr = {.func = (mt_func_id)fn, .inline_count = 1, .code = code};
        if (MTA_PUSH(st->frames, fr) < 0)
            return -1;
    } else {
        for (size_t i = 0; i < n; i++) {
            int64_t fn = mta_stacks_func(st, locs[i].defname ? locs[i].defname : "??",
                                         locs[i].filename ? locs[i].filename : "");
            if (fn < 0)
                return -1;
            mt_frame fr = {.func = (mt_func_id)fn,
                           .line = locs[i].line,
                           .start_char = (uint16_t)locs[i].start_char,
                           .end_char = (uint16_t)locs[i].end_char,
                           .inline_index = (uint16_t)i,
                           .inline_count = (uint16_t)n,
                           .code = code};
            if (MTA_PUSH(st->frames, fr) < 0)
                return -1;
        }
    }
    if (mta_table_put(&st->code_frames, code, (uint32_t)first) < 0)
        return -1;
    return first;
}

int64_t mta_stacks_child(mta_stacks *st, mt_node_id parent, mt_frame_id frame)
{
    uint64_t key = (uint64_t)parent << 32 | frame;
    /* Hot paths repeat: a small cache in front of everything. Key 0 (root,
     * frame 0) is never cached. */
    struct mta_child_memo *mo = &st->memo[(key * 0x9E3779B97F4A7C15ULL) >> 51];
    if (mo->key == key && key)
        return mo->node;
    int big = st->n_kids.v[parent] > BIG_NODE;
    if (big) {
        int64_t n = mta_table_get(&st->children, key);
        if (n >= 0) {
            mo->key = key;
            mo->node = (uint32_t)n;
            return n;
        }
    } else {
        for (uint32_t c = st->first_child.v[parent]; c; c = st->next_sibling.v[c])
            if (st->nodes.v[c].frame == frame) {
                mo->key = key;
                mo->node = c;
                return c;
            }
    }
    mt_node node = {.parent = parent, .frame = frame, .depth = st->nodes.v[parent].depth + 1};
    uint32_t zero = 0;
    uint16_t nk = 0;
    if (st->nodes.n >= UINT32_MAX - 1 || MTA_PUSH(st->nodes, node) < 0 ||
        MTA_PUSH(st->first_child, zero) < 0 || MTA_PUSH(st->n_kids, nk) < 0 ||
        MTA_PUSH(st->next_sibling, st->first_child.v[parent]) < 0)
        return -1;
    uint32_t n = (uint32_t)st->nodes.n - 1;
    st->first_child.v[parent] = n;
    if (st->n_kids.v[parent] <= BIG_NODE)
        st->n_kids.v[parent]++;
    if (big) {
        if (mta_table_put(&st->children, key, n) < 0)
            return -1;
    } else if (st->n_kids.v[parent] > BIG_NODE) {
        /* became big: index all its children */
        for (uint32_t c = n; c; c = st->next_sibling.v[c])
            if (mta_table_put(&st->children, (uint64_t)parent << 32 | st->nodes.v[c].frame, c) < 0)
                return -1;
    }
    return n;
}

int mta_stacks_seal(mta_stacks *st)
{
    for (size_t i = 0; i < st->nodes.n; i++)
        if (st->nodes.v[i].depth > st->deepest)
            st->deepest = st->nodes.v[i].depth;
    if (st->deepest > MT_STACK_MAX_DEPTH) {
        int64_t fn = mta_stacks_func(st, MT_TRUNCATED_NAME, "");
        mt_frame fr = {.func = (mt_func_id)fn, .inline_count = 1};
        if (fn < 0 || MTA_PUSH(st->frames, fr) < 0)
            return -1;
        st->trunc_frame = (mt_frame_id)(st->frames.n - 1);
    }
    mta_stacks_drop_tables(st);
    return 0;
}

int mta_stacks_adopt(mta_stacks *dst, mta_stacks *src)
{
    mta_pool strings = dst->strings;
    memset(&dst->strings, 0, sizeof dst->strings);
    mta_stacks_free(dst);
    *dst = *src;
    dst->strings = strings;
    mta_pool left = src->strings;
    memset(src, 0, sizeof *src);
    src->strings = left;
    return mta_pool_adopt(&dst->strings, &src->strings);
}

size_t mta_stacks_path(const mta_stacks *st, mt_node_id node, mt_frame_id *out, size_t cap)
{
    size_t depth = st->nodes.v[node].depth;
    for (size_t i = depth; i > 0; i--) {
        if (i - 1 < cap)
            out[i - 1] = st->nodes.v[node].frame;
        node = st->nodes.v[node].parent;
    }
    return depth;
}

size_t mta_stacks_memory(const mta_stacks *st)
{
    return st->funcs.cap * sizeof(mt_func) + st->frames.cap * sizeof(mt_frame) +
           st->nodes.cap * sizeof(mt_node) + st->strings.n * MTA_POOL_CHUNK;
}

void mta_stacks_drop_tables(mta_stacks *st)
{
    mta_table_destroy(&st->code_frames);
    mta_table_destroy(&st->children);
    free(st->first_child.v);
    free(st->next_sibling.v);
    free(st->n_kids.v);
    free(st->memo);
    free(st->code_memo);
    free(st->func_slots);
    memset(&st->first_child, 0, sizeof st->first_child);
    memset(&st->next_sibling, 0, sizeof st->next_sibling);
    memset(&st->n_kids, 0, sizeof st->n_kids);
    st->memo = NULL;
    st->code_memo = NULL;
    st->func_slots = NULL;
    st->func_mask = 0;
}

void mta_stacks_free(mta_stacks *st)
{
    mta_stacks_drop_tables(st);
    mta_pool_free(&st->strings);
    free(st->funcs.v);
    free(st->frames.v);
    free(st->nodes.v);
    memset(st, 0, sizeof *st);
}
