/*
 * diffkeys.h - what names the entries of a comparison (diffkeys.c) and what
 * compare.c accumulates in them: the entry table keyed by site or function
 * name, the trie of call paths by function names, the string pool of a
 * result. Internal to lib/analyze.
 */
#ifndef MTA_DIFFKEYS_H
#define MTA_DIFFKEYS_H

#include <stdint.h>

#include "memtrace/compare.h"

/* Per entry, per side: [0] base, [1] new; and the two parts of the
 * difference: [0] what only (or more) the base has, [1] what the new has. */
typedef struct acc {
    double v[2], var[2];
    uint64_t k[2];
    double dv[2], dvar[2];
    uint64_t dk[2];
} acc;

typedef struct entry_tab {
    uint64_t seed;
    uint32_t *slots;         /* entry index + 1; 0: empty */
    uint64_t *hashes;        /* per entry */
    size_t mask;
    char **keys;             /* per entry */
    mt_diff_entry *e;
    acc *a;
    size_t n, cap;
} entry_tab;

/* Strings of an entry (function and file names) must outlive the models:
 * they are copied into chunks owned by the result. */
typedef struct str_pool {
    char **blocks;
    size_t n, cap;
    char *cur;
    size_t left;
} str_pool;

/* Call paths: function names interned (an id per distinct name) and a trie
 * of paths by name ids, so that a path is one number and its name is only
 * spelt out when asked for (mt_diff_entry_name). Path id 0: the empty path. */
typedef struct paths {
    const char **names;      /* name id -> pooled string */
    uint64_t *name_hash;
    size_t n_names, cap_names;
    uint32_t *name_slots;    /* name id + 1 */
    size_t name_mask;
    uint32_t *parent, *name; /* path id -> parent path id, name id */
    size_t n, cap;
    uint64_t *slot_key;      /* parent << 32 | name */
    uint32_t *slot_val;      /* path id + 1 */
    size_t mask;
    uint32_t *entry;         /* path id -> entry index + 1 */
    size_t cap_entry;
} paths;

struct diff_priv {
    mt_diff d;
    str_pool pool;
    paths paths;
};

int mtd_tab_init(entry_tab *t);
/* keep_entries: the entries array has been handed over to a result. */
void mtd_tab_free(entry_tab *t, int keep_entries);
void mtd_pool_free(str_pool *p);
void mtd_paths_free(paths *ps);
/* The entry (site or function key) of a selection trie node; -1 when out of memory. */
int64_t mtd_entry_of(entry_tab *t, str_pool *pool, const mt_selection *s, mt_node_id node,
                     mt_diff_key kind);
/* The entry of call path pid (created on first use); -1 when out of memory. */
int64_t mtd_tab_add_path(entry_tab *t, paths *ps, uint32_t pid);
/* Path id of every selection node (malloc'd), or NULL when out of memory. */
uint32_t *mtd_node_paths(paths *ps, str_pool *pool, const mt_selection *s);

#endif
