/*
 * diffkeys.c - naming the entries of a comparison so that two traces meet:
 * sites and functions by their name strings in a hash table (keyed with the
 * process seed), call paths as ids in a trie of interned function names, spelt
 * out only when asked for (mt_diff_entry_name). See diffkeys.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diffkeys.h"
#include "table.h"
#include "vec.h"

/* Keyed (lib/common/hash.h): keys are names from the traces. */
static uint64_t hash_str(const char *s)
{
    return mt_hash_bytes(s, strlen(s));
}


int mtd_tab_init(entry_tab *t)
{
    memset(t, 0, sizeof *t);
    t->mask = 255;
    t->slots = calloc(t->mask + 1, sizeof *t->slots);
    return t->slots ? 0 : -1;
}

static int tab_rehash(entry_tab *t)
{
    size_t cap = (t->mask + 1) * 2;
    uint32_t *s = calloc(cap, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = t->hashes[i] & (cap - 1);
        while (s[j])
            j = (j + 1) & (cap - 1);
        s[j] = (uint32_t)i + 1;
    }
    free(t->slots);
    t->slots = s;
    t->mask = cap - 1;
    return 0;
}

/* Doubles the entry arrays (keys, hashes, entries, sides); -1 when out of
 * memory or past 2^32 - 1 entries (what is reallocated stays valid). */
static int tab_grow(entry_tab *t)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    void *k = realloc(t->keys, cap * sizeof *t->keys);
    if (k)
        t->keys = k;
    void *hs = realloc(t->hashes, cap * sizeof *t->hashes);
    if (hs)
        t->hashes = hs;
    void *e = realloc(t->e, cap * sizeof *t->e);
    if (e)
        t->e = e;
    void *a = realloc(t->a, cap * sizeof *t->a);
    if (a)
        t->a = a;
    if (!k || !hs || !e || !a || t->n >= UINT32_MAX - 1)
        return -1;
    t->cap = cap;
    return 0;
}

/* The entry of key (taken over: freed on failure or when already known),
 * created with the given display fields; -1 when out of memory. */
static int64_t tab_get(entry_tab *t, char *key, char *name, const char *func, const char *file,
                       uint32_t line)
{
    uint64_t h = hash_str(key);
    size_t j = h & t->mask;
    while (t->slots[j]) {
        size_t i = t->slots[j] - 1;
        if (t->hashes[i] == h && !strcmp(t->keys[i], key)) {
            if (name != key)
                free(name);
            free(key);
            return (int64_t)i;
        }
        j = (j + 1) & t->mask;
    }
    if ((t->n == t->cap || t->n >= UINT32_MAX - 1) && tab_grow(t) < 0)
        goto oom;
    size_t i = t->n++;
    t->keys[i] = key;
    t->hashes[i] = h;
    memset(&t->e[i], 0, sizeof t->e[i]);
    memset(&t->a[i], 0, sizeof t->a[i]);
    t->e[i].name = name;
    t->e[i].function = func;
    t->e[i].file = file;
    t->e[i].line = line;
    t->slots[j] = (uint32_t)i + 1;
    if (t->n * 4 > (t->mask + 1) * 3 && tab_rehash(t) < 0)
        return -1;   /* the entry is stored; the caller gives up */
    return (int64_t)i;
oom:
    if (name != key)
        free(name);
    free(key);
    return -1;
}




static const char *pool_dup(str_pool *p, const char *s)
{
    size_t len = strlen(s ? s : "") + 1;
    if (len > p->left) {
        size_t sz = len > 65536 ? len : 65536;
        if (MT_VEC_ROOM(p->blocks, p->n, p->cap, 16) < 0)
            return NULL;
        char *blk = malloc(sz);
        if (!blk)
            return NULL;
        p->blocks[p->n++] = blk;
        p->cur = blk;
        p->left = sz;
    }
    char *c = p->cur;
    memcpy(c, s ? s : "", len);
    p->cur += len;
    p->left -= len;
    return c;
}

static char *join3(const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    char *s = malloc(la + lb + lc + 1);
    if (!s)
        return NULL;
    memcpy(s, a, la);
    memcpy(s + la, b, lb);
    memcpy(s + la + lb, c, lc + 1);
    return s;
}

/* The entry for a selection trie node; -1 when out of memory. */
int64_t mtd_entry_of(entry_tab *t, str_pool *pool, const mt_selection *s, mt_node_id node,
                     mt_diff_key kind)
{
    const mt_model *m = mt_selection_model(s);
    const mt_node *nodes = mt_selection_nodes(s);
    const mt_frame *frames = mt_model_frames(m);
    const mt_func *funcs = mt_model_funcs(m);
    if (node == 0) {
        char *k = strdup("(no stack)");
        if (!k)
            return -1;
        return tab_get(t, k, k, "(no stack)", "", 0);
    }
    const mt_frame *fr = &frames[nodes[node].frame];
    const mt_func *fn = &funcs[fr->func];
    char *key = NULL, *name = NULL;
    const char *file = "";
    uint32_t line = 0;
    if (kind == MT_DIFF_SITE) {
        char ln[32];
        snprintf(ln, sizeof ln, "\x1f%u", fr->line);
        char *kf = join3(fn->name, "\x1f", fn->filename);
        key = kf ? join3(kf, ln, "") : NULL;
        free(kf);
        if (fn->filename[0]) {
            /* as top names a site: no ":0" for an unknown line */
            char tail[64];
            if (fr->line)
                snprintf(tail, sizeof tail, ":%u)", fr->line);
            else
                snprintf(tail, sizeof tail, ")");
            char *n1 = join3(fn->name, " (", fn->filename);
            name = n1 ? join3(n1, tail, "") : NULL;
            free(n1);
        } else {
            name = strdup(fn->name);
        }
        file = fn->filename;
        line = fr->line;
    } else {   /* MT_DIFF_FUNCTION; call paths go through node_paths */
        key = strdup(fn->name);
        name = key;
    }
    if (!key || !name) {
        if (name != key)
            free(name);
        free(key);
        return -1;
    }
    /* Look up first: the pooled copies are made for new entries only. */
    size_t before = t->n;
    int64_t i = tab_get(t, key, name, NULL, NULL, 0);
    if (i >= 0 && (size_t)i >= before) {
        t->e[i].function = pool_dup(pool, fn->name);
        t->e[i].file = pool_dup(pool, file);
        t->e[i].line = line;
        if (!t->e[i].function || !t->e[i].file)
            return -1;
    }
    return i;
}

static int64_t name_id(paths *ps, str_pool *pool, const char *nm)
{
    uint64_t h = hash_str(nm);
    if (!ps->name_slots) {
        ps->name_mask = 1023;
        ps->name_slots = calloc(ps->name_mask + 1, sizeof *ps->name_slots);
        if (!ps->name_slots)
            return -1;
    }
    size_t j = h & ps->name_mask;
    while (ps->name_slots[j]) {
        size_t i = ps->name_slots[j] - 1;
        if (ps->name_hash[i] == h && !strcmp(ps->names[i], nm))
            return (int64_t)i;
        j = (j + 1) & ps->name_mask;
    }
    if (ps->n_names == ps->cap_names) {
        size_t c = ps->cap_names ? ps->cap_names * 2 : 1024;
        const char **n = realloc(ps->names, c * sizeof *n);
        if (!n)
            return -1;
        ps->names = n;
        uint64_t *hh = realloc(ps->name_hash, c * sizeof *hh);
        if (!hh)
            return -1;
        ps->name_hash = hh;
        ps->cap_names = c;
    }
    const char *copy = pool_dup(pool, nm);
    if (!copy || ps->n_names >= UINT32_MAX - 1)
        return -1;
    size_t i = ps->n_names++;
    ps->names[i] = copy;
    ps->name_hash[i] = h;
    ps->name_slots[j] = (uint32_t)i + 1;
    if (ps->n_names * 2 > ps->name_mask + 1) {
        size_t cap = (ps->name_mask + 1) * 2;
        uint32_t *ns = calloc(cap, sizeof *ns);
        if (!ns)
            return -1;
        for (size_t k = 0; k < ps->n_names; k++) {
            size_t q = ps->name_hash[k] & (cap - 1);
            while (ns[q])
                q = (q + 1) & (cap - 1);
            ns[q] = (uint32_t)k + 1;
        }
        free(ps->name_slots);
        ps->name_slots = ns;
        ps->name_mask = cap - 1;
    }
    return (int64_t)i;
}

static int64_t path_id(paths *ps, uint32_t parent, uint32_t nm)
{
    if (!ps->slot_key) {
        ps->mask = 4095;
        ps->slot_key = calloc(ps->mask + 1, sizeof *ps->slot_key);
        ps->slot_val = calloc(ps->mask + 1, sizeof *ps->slot_val);
        ps->cap = 1024;
        ps->parent = malloc(ps->cap * sizeof *ps->parent);
        ps->name = malloc(ps->cap * sizeof *ps->name);
        if (!ps->slot_key || !ps->slot_val || !ps->parent || !ps->name)
            return -1;
        ps->parent[0] = ps->name[0] = 0;
        ps->n = 1;
    }
    uint64_t key = (uint64_t)parent << 32 | nm;
    size_t j = mta_hash64(key) & ps->mask;
    while (ps->slot_val[j]) {
        if (ps->slot_key[j] == key)
            return ps->slot_val[j] - 1;
        j = (j + 1) & ps->mask;
    }
    if (ps->n == ps->cap) {
        size_t c = ps->cap * 2;
        uint32_t *a = realloc(ps->parent, c * sizeof *a);
        if (!a)
            return -1;
        ps->parent = a;
        uint32_t *b = realloc(ps->name, c * sizeof *b);
        if (!b)
            return -1;
        ps->name = b;
        ps->cap = c;
    }
    if (ps->n >= UINT32_MAX - 1)
        return -1;
    size_t id = ps->n++;
    ps->parent[id] = parent;
    ps->name[id] = nm;
    ps->slot_key[j] = key;
    ps->slot_val[j] = (uint32_t)id + 1;
    if (ps->n * 2 > ps->mask + 1) {
        size_t cap = (ps->mask + 1) * 2;
        uint64_t *k2 = calloc(cap, sizeof *k2);
        uint32_t *v2 = calloc(cap, sizeof *v2);
        if (!k2 || !v2) {
            free(k2);
            free(v2);
            return -1;
        }
        for (size_t q = 0; q <= ps->mask; q++)
            if (ps->slot_val[q]) {
                size_t r = mta_hash64(ps->slot_key[q]) & (cap - 1);
                while (v2[r])
                    r = (r + 1) & (cap - 1);
                k2[r] = ps->slot_key[q];
                v2[r] = ps->slot_val[q];
            }
        free(ps->slot_key);
        free(ps->slot_val);
        ps->slot_key = k2;
        ps->slot_val = v2;
        ps->mask = cap - 1;
    }
    return (int64_t)id;
}

void mtd_paths_free(paths *ps)
{
    free(ps->names);
    free(ps->name_hash);
    free(ps->name_slots);
    free(ps->parent);
    free(ps->name);
    free(ps->slot_key);
    free(ps->slot_val);
    free(ps->entry);
}

/* An entry without a key string (a call path), appended. */
int64_t mtd_tab_add_path(entry_tab *t, paths *ps, uint32_t pid)
{
    if (pid >= ps->cap_entry) {
        size_t c = ps->cap_entry ? ps->cap_entry : 1024;
        while (c <= pid)
            c *= 2;
        uint32_t *e = realloc(ps->entry, c * sizeof *e);
        if (!e)
            return -1;
        memset(e + ps->cap_entry, 0, (c - ps->cap_entry) * sizeof *e);
        ps->entry = e;
        ps->cap_entry = c;
    }
    if (ps->entry[pid])
        return ps->entry[pid] - 1;
    if (t->n == t->cap && tab_grow(t) < 0)
        return -1;
    size_t i = t->n++;
    t->keys[i] = NULL;
    t->hashes[i] = 0;
    memset(&t->e[i], 0, sizeof t->e[i]);
    memset(&t->a[i], 0, sizeof t->a[i]);
    t->e[i].name = NULL;
    t->e[i].path = pid;
    t->e[i].function = pid ? ps->names[ps->name[pid]] : "(no stack)";
    t->e[i].file = "";
    ps->entry[pid] = (uint32_t)i + 1;
    return (int64_t)i;
}

/* Path id of every selection node (parents come first). */
uint32_t *mtd_node_paths(paths *ps, str_pool *pool, const mt_selection *s)
{
    const mt_model *m = mt_selection_model(s);
    const mt_node *nodes = mt_selection_nodes(s);
    const mt_frame *frames = mt_model_frames(m);
    const mt_func *funcs = mt_model_funcs(m);
    size_t nn = mt_selection_n_nodes(s), nf = mt_model_n_funcs(m);
    uint32_t *np = malloc((nn ? nn : 1) * sizeof *np);
    uint32_t *fid = malloc((nf ? nf : 1) * sizeof *fid);
    if (!np || !fid)
        goto fail;
    memset(fid, 0xff, (nf ? nf : 1) * sizeof *fid);
    np[0] = 0;
    for (size_t n = 1; n < nn; n++) {
        mt_func_id f = frames[nodes[n].frame].func;
        if (fid[f] == UINT32_MAX) {
            int64_t id = name_id(ps, pool, funcs[f].name);
            if (id < 0)
                goto fail;
            fid[f] = (uint32_t)id;
        }
        int64_t p = path_id(ps, np[nodes[n].parent], fid[f]);
        if (p < 0)
            goto fail;
        np[n] = (uint32_t)p;
    }
    free(fid);
    return np;
fail:
    free(np);
    free(fid);
    return NULL;
}

size_t mt_diff_entry_name(const mt_diff *d, const mt_diff_entry *e, char *buf, size_t cap)
{
    if (e->name || !e->path) {
        const char *nm = e->name ? e->name : "(no stack)";
        size_t len = strlen(nm);
        if (cap) {
            size_t k = len < cap - 1 ? len : cap - 1;
            memcpy(buf, nm, k);
            buf[k] = 0;
        }
        return len;
    }
    const paths *ps = &((const struct diff_priv *)d)->paths;
    size_t len = 0;
    for (uint32_t p = e->path; p; p = ps->parent[p])
        len += strlen(ps->names[ps->name[p]]) + (ps->parent[p] ? 1 : 0);
    if (cap == 0)
        return len;
    /* written from the end (innermost) backwards, clipped to the buffer */
    size_t pos = len;
    for (uint32_t p = e->path; p; p = ps->parent[p]) {
        const char *nm = ps->names[ps->name[p]];
        size_t l = strlen(nm);
        for (size_t k = l; k-- > 0;) {
            pos--;
            if (pos < cap - 1)
                buf[pos] = nm[k];
        }
        if (ps->parent[p]) {
            pos--;
            if (pos < cap - 1)
                buf[pos] = ';';
        }
    }
    buf[len < cap - 1 ? len : cap - 1] = 0;
    return len;
}

void mtd_tab_free(entry_tab *t, int keep_entries)
{
    for (size_t i = 0; i < t->n; i++) {
        if (t->keys[i] != t->e[i].name)
            free(t->keys[i]);
        if (!keep_entries)
            free(t->e[i].name);
    }
    free(t->keys);
    free(t->hashes);
    free(t->slots);
    free(t->a);
    if (!keep_entries)
        free(t->e);
}

void mtd_pool_free(str_pool *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->blocks[i]);
    free(p->blocks);
}
