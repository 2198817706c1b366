/*
 * stacks.h - the stack interner of a model: names (a string pool),
 * functions, frames and the call-path trie, with the tables that intern
 * them while a trace is read. Every part of a model (the whole model's
 * allocation table, a folded model's per-node costs, selections) names a
 * stack by its trie node here. Internal.
 *
 * Lifetimes: the data (funcs, frames, nodes, strings) lives as long as the
 * model; the interning tables only while the model is built
 * (mta_stacks_seal frees them). Not thread safe: one builder at a time.
 */
#ifndef MTA_STACKS_H
#define MTA_STACKS_H

#include "memtrace/analyze.h"
#include "pool.h"
#include "table.h"

typedef struct mta_stacks {
    mta_pool strings;              /* names of functions and files, the trace's info */
    MTA_VEC(mt_func) funcs;
    MTA_VEC(mt_frame) frames;      /* a code's frames are consecutive (inline_count) */
    MTA_VEC(mt_node) nodes;        /* the trie; node 0 is the root */
    uint32_t deepest;              /* depth of the deepest node (mta_stacks_seal) */
    mt_frame_id trunc_frame;       /* the "[truncated]" frame, when deepest > MT_STACK_MAX_DEPTH */
    /* The interning tables (NULL / empty once sealed): */
    mta_table code_frames;         /* code -> first frame index */
    /* Children of a trie node: a list (first_child, next_sibling), and for
     * nodes with many children also the table (parent << 32 | frame). Most
     * nodes have few children, and a node just created has none: no hash
     * lookup, no cache miss in a big table. */
    mta_table children;
    MTA_VEC(uint32_t) first_child;
    MTA_VEC(uint32_t) next_sibling;
    MTA_VEC(uint16_t) n_kids;      /* saturates past the list's limit */
    struct mta_child_memo { uint64_t key; uint32_t node; } *memo; /* recent children */
    struct mta_code_memo { uint64_t code; uint32_t frame; } *code_memo; /* frame + 1; 0 empty */
    uint32_t *func_slots;          /* hash of (name, file) -> func id + 1, 0 empty */
    size_t func_mask;
} mta_stacks;

/* The tables and the trie's root. Returns 0, or -1 when out of memory
 * (mta_stacks_free then). */
int mta_stacks_init(mta_stacks *st);
/* The function (name, file), interned: its id, or -1 when out of memory. */
int64_t mta_stacks_func(mta_stacks *st, const char *name, const char *file);
/* The frames of a code (r's locations; a name "0x..." when it has none),
 * interned on first sight: the first frame's index (its inline_count
 * tells how many), or -1 when out of memory. */
int64_t mta_stacks_code(mta_stacks *st, mt_reader *r, uint64_t code);
/* The child of parent for frame, made on first sight: its node, or -1
 * when out of memory or past 2^32 nodes. */
int64_t mta_stacks_child(mta_stacks *st, mt_node_id parent, mt_frame_id frame);
/* The end of building: the depth rule (deepest, and the frame that stands
 * for the cut part of stacks deeper than MT_STACK_MAX_DEPTH, select.c),
 * then the tables freed. Returns 0, or -1 when out of memory. */
int mta_stacks_seal(mta_stacks *st);
/* dst takes src's functions, frames, nodes, tables and strings (dst's own
 * functions, frames, nodes and tables are dropped; its strings kept);
 * src keeps nothing but what did not fit. Returns 0, or -1 when out of
 * memory (the strings not moved stay src's: free src after dst). */
int mta_stacks_adopt(mta_stacks *dst, mta_stacks *src);
/* The frames of node's call path, outermost first, into out[0 .. cap);
 * returns the depth. */
size_t mta_stacks_path(const mta_stacks *st, mt_node_id node, mt_frame_id *out, size_t cap);
/* Bytes held by the data (not the tables). */
size_t mta_stacks_memory(const mta_stacks *st);
/* Frees the tables only: what a finished model does not keep. */
void mta_stacks_drop_tables(mta_stacks *st);
void mta_stacks_free(mta_stacks *st);

#endif
