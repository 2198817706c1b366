/*
 * plumbing.c - allocation plumbing: the list of functions that allocate
 * on behalf of their caller (built-in patterns, user patterns and files),
 * and the selection hook that moves every allocation site out of them to
 * the first frame of the user's code. See docs/names.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "plumbing.h"
#include "select.h"

/* The built-in list, also printed in docs/names.md (keep them in step). */
static const char *const builtin[] = {
    /* C++: operator new, the standard library and its allocators */
    "operator new", "operator new[]", "std::*", "__gnu_cxx::*", "__cxxabiv1::*",
    "__cxa_allocate_exception", "__cxa_allocate_dependent_exception",
    /* the C allocation functions and libc helpers that allocate */
    "malloc", "calloc", "realloc", "reallocarray", "aligned_alloc", "posix_memalign",
    "memalign", "valloc", "pvalloc", "strdup", "strndup", "__strdup", "__strndup",
    "__libc_malloc", "__libc_calloc", "__libc_realloc", "__libc_memalign",
    /* common C wrappers */
    "xmalloc", "xcalloc", "xrealloc", "xzalloc", "xstrdup", "xstrndup", "xmemdup",
    "xreallocarray", "xnmalloc", "xcharalloc",
    "g_malloc", "g_malloc0", "g_malloc_n", "g_malloc0_n", "g_realloc", "g_realloc_n",
    "g_try_malloc", "g_try_malloc0", "g_try_malloc_n", "g_try_malloc0_n", "g_try_realloc",
    "g_try_realloc_n", "g_slice_alloc", "g_slice_alloc0", "g_slice_copy", "g_strdup",
    "g_strndup", "g_memdup", "g_memdup2", "g_aligned_alloc", "g_aligned_alloc0",
    "PyMem_*", "_PyMem_*", "PyObject_Malloc", "PyObject_Calloc", "PyObject_Realloc",
    "_PyObject_Malloc", "_PyObject_Calloc", "_PyObject_Realloc",
    "sqlite3Malloc", "sqlite3MallocZero", "sqlite3Realloc", "sqlite3_malloc",
    "sqlite3_malloc64", "sqlite3_realloc", "sqlite3_realloc64", "sqlite3DbMalloc*",
    "sqlite3DbRealloc*", "sqlite3DbStrDup", "sqlite3DbStrNDup", "sqlite3MemMalloc",
    "sqlite3MemRealloc",
    "OPENSSL_malloc", "OPENSSL_zalloc", "OPENSSL_realloc", "CRYPTO_malloc", "CRYPTO_zalloc",
    "CRYPTO_realloc", "CRYPTO_strdup", "CRYPTO_strndup",
    "av_malloc", "av_mallocz", "av_realloc", "av_strdup", "av_malloc_array", "av_mallocz_array",
    "av_calloc", "av_realloc_f", "av_realloc_array", "av_fast_malloc", "av_fast_realloc",
    "av_buffer_alloc", "av_buffer_allocz", "av_buffer_realloc",
    "x264_malloc", "x264_realloc",
    "zmalloc", "zmalloc_usable", "zcalloc", "zcalloc_usable", "zcalloc_num", "zrealloc*",
    "ztrymalloc*", "ztrycalloc*", "ztryrealloc*", "zstrdup", "zmalloc_no_tcache",
    "je_malloc", "je_calloc", "je_realloc", "tc_malloc", "tc_calloc", "tc_realloc",
    "tc_new", "tc_newarray", "mi_malloc", "mi_calloc", "mi_realloc", "mi_zalloc",
    /* git's wrappers beside the GNU-style ones */
    "xmallocz", "xmallocz_gently", "xmemdupz", "do_xmalloc", "do_xmallocz",
    /* PostgreSQL's memory contexts */
    "palloc", "palloc0", "palloc_extended", "palloc_aligned", "repalloc", "repalloc0",
    "repalloc_extended", "repalloc_huge", "pstrdup", "pnstrdup", "MemoryContextAlloc*",
    "MemoryContextStrdup", "AllocSetAlloc*", "AllocSetRealloc", "GenerationAlloc*",
    "GenerationRealloc", "SlabAlloc*", "SlabRealloc", "BumpAlloc*", "BumpRealloc",
    /* Perl */
    "Perl_safesysmalloc", "Perl_safesyscalloc", "Perl_safesysrealloc", "Perl_savepv",
    "Perl_savepvn", "Perl_savesharedpv", "Perl_savesharedpvn",
    /* APR pools */
    "apr_palloc", "apr_pcalloc", "apr_pstrdup", "apr_pstrndup", "apr_pstrmemdup",
    "apr_pmemdup", "apr_allocator_alloc",
    /* nginx pools */
    "ngx_alloc", "ngx_calloc", "ngx_memalign", "ngx_palloc", "ngx_pnalloc", "ngx_pcalloc",
    "ngx_pmemalign", "ngx_palloc_small", "ngx_palloc_large", "ngx_palloc_block", "ngx_pstrdup",
    /* talloc */
    "_talloc", "__talloc", "__talloc_with_prefix", "_talloc_zero", "_talloc_array",
    "_talloc_zero_array", "_talloc_realloc", "_talloc_realloc_array", "_talloc_memdup",
    "_talloc_named_const", "talloc_named_const", "talloc_strdup", "talloc_strndup",
    /* CPython's object allocator and object creation */
    "pymalloc_alloc", "pymalloc_realloc", "allocate_from_new_pool", "new_arena",
    "_PyObject_New", "_PyObject_NewVar", "_PyObject_GC_New", "_PyObject_GC_NewVar",
    "_PyObject_GC_Resize", "gc_alloc", "PyType_GenericAlloc", "_PyType_AllocNoTrack",
    /* Ruby */
    "ruby_xmalloc*", "ruby_xcalloc*", "ruby_xrealloc*", "ruby_strdup", "objspace_xmalloc*",
    "objspace_xcalloc", "objspace_xrealloc*", "rb_xmalloc_mul_add*",
    /* Lua: its memory manager and lauxlib's allocator */
    "luaM_*", "l_alloc", "luaC_newobj*",
    /* libxml2 */
    "xmlMalloc", "xmlMallocAtomic", "xmlRealloc", "xmlMallocLoc", "xmlMallocAtomicLoc",
    "xmlReallocLoc", "xmlMemMalloc", "xmlMemRealloc", "xmlMemStrdupLoc", "xmlStrdup",
    "xmlStrndup", "xmlCharStrdup", "xmlCharStrndup",
    /* more of OpenSSL */
    "CRYPTO_clear_realloc", "CRYPTO_memdup", "CRYPTO_secure_malloc", "CRYPTO_secure_zalloc",
    NULL};

const char *const *mt_plumbing_builtin(void) { return builtin; }

struct mt_plumbing {
    char **pat;          /* patterns; a leading '!' is an exception */
    size_t n, cap;
};

mt_plumbing *mt_plumbing_new(int with_builtin)
{
    mt_plumbing *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    if (with_builtin)
        for (size_t i = 0; builtin[i]; i++)
            if (mt_plumbing_add(p, builtin[i]) < 0) {
                mt_plumbing_free(p);
                return NULL;
            }
    return p;
}

void mt_plumbing_free(mt_plumbing *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        free(p->pat[i]);
    free(p->pat);
    free(p);
}

int mt_plumbing_add(mt_plumbing *p, const char *pattern)
{
    if (p->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 64;
        char **v = realloc(p->pat, nc * sizeof *v);
        if (!v)
            return -1;
        p->pat = v;
        p->cap = nc;
    }
    if (!(p->pat[p->n] = strdup(pattern)))
        return -1;
    p->n++;
    return 0;
}

int mt_plumbing_load(mt_plumbing *p, const char *path, char **err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        if (err && (*err = malloc(strlen(path) + 128)))
            sprintf(*err, "%s: %s", path, strerror(errno));
        return -1;
    }
    char line[4096];
    unsigned ln = 0;
    int rc = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        size_t l = strlen(line);
        if (l == sizeof line - 1 && line[l - 1] != '\n') {
            if (err && (*err = malloc(strlen(path) + 128)))
                sprintf(*err, "%s: line %u: longer than %zu bytes", path, ln, sizeof line - 2);
            rc = -1;
            break;
        }
        char *h = strchr(line, '#');
        if (h)
            *h = 0;
        char *s = line, *e = line + strlen(line);
        while (*s == ' ' || *s == '\t')
            s++;
        while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
            e--;
        *e = 0;
        if (!*s)
            continue;
        if (mt_plumbing_add(p, s) < 0) {
            if (err && (*err = malloc(strlen(path) + 64)))
                sprintf(*err, "%s: out of memory", path);
            rc = -1;
            break;
        }
    }
    if (rc == 0 && ferror(f)) {
        if (err && (*err = malloc(strlen(path) + 128)))
            sprintf(*err, "%s: %s", path, strerror(errno));
        rc = -1;
    }
    fclose(f);
    return rc;
}

/* Does s[0..n) match the glob g ('*' only)? Linear backtracking on the
 * last star: O(len(s) * len(g)) at worst. */
static int glob(const char *g, const char *s, size_t n)
{
    const char *star = NULL;
    size_t i = 0, back = 0;
    while (i < n) {
        if (*g == '*') {
            star = ++g;
            back = i;
        } else if (*g && *g == s[i]) {
            g++;
            i++;
        } else if (star) {
            g = star;
            i = ++back;
        } else
            return 0;
    }
    while (*g == '*')
        g++;
    return *g == 0;
}

int mt_plumbing_match(const mt_plumbing *p, const char *func_name)
{
    size_t st, len, args;
    mta_name_span(func_name, &st, &len, &args);
    const char *q = func_name + st;
    int hit = 0;
    for (size_t i = 0; i < p->n; i++) {
        const char *g = p->pat[i];
        if (g[0] == '!') {
            if (glob(g + 1, q, len))
                return 0;
        } else if (!hit && glob(g, q, len))
            hit = 1;
    }
    return hit;
}

/* A frame the recorder could not name ("??", "0x55d0c0de1234",
 * "libfoo.so+0x1234"): skipped when its caller is plumbing (a tail of
 * the library without symbols), kept otherwise. */
static int unnamed(const char *name)
{
    if (!strcmp(name, "??") || !strncmp(name, "0x", 2))
        return 1;
    const char *plus = strstr(name, "+0x");
    return plus && !strpbrk(name, " (");
}

/* The kind of every function of m for the plumbing hook: 1 plumbing, 2 a
 * frame without a name (plumbing when its caller is), 0 other; NULL when
 * out of memory. */
static uint8_t *func_kinds(const mt_model *m, const mt_plumbing *p, int *any)
{
    uint8_t *pl = calloc(m->stacks.funcs.n + 1, 1);
    if (!pl)
        return NULL;
    *any = 0;
    for (size_t i = 0; i < m->stacks.funcs.n; i++) {
        if (p && mt_plumbing_match(p, m->stacks.funcs.v[i].name))
            pl[i] = 1, *any = 1;
        else if (unnamed(m->stacks.funcs.v[i].name))
            pl[i] = 2;
    }
    return pl;
}

int mta_plumbing_apply(mt_selection *s, const mt_plumbing *p)
{
    const mt_model *m = s->m;
    size_t nn = m->stacks.nodes.n;
    int any;
    uint8_t *pl = func_kinds(m, p, &any);
    if (!pl)
        return -1;
    if (!any) {
        free(pl);
        return 0;
    }
    mt_node_id *site = malloc(nn * sizeof *site);
    mt_frame_id *via = malloc(nn * sizeof *via);
    if (!site || !via) {
        free(pl);
        free(site);
        free(via);
        return -1;
    }
    /* Parents come before children. site[i]: the selection node of the
     * stack without its innermost plumbing run, UINT32_MAX while the whole
     * stack is plumbing; via[i]: the outermost frame of that run. */
    site[0] = UINT32_MAX;
    via[0] = MT_NO_FRAME;
    for (size_t i = 1; i < nn; i++) {
        const mt_node *nd = &m->stacks.nodes.v[i];
        uint8_t k = pl[m->stacks.frames.v[nd->frame].func];
        if (k == 1 || (k == 2 && via[nd->parent] != MT_NO_FRAME)) {
            site[i] = site[nd->parent];
            via[i] = via[nd->parent] != MT_NO_FRAME ? via[nd->parent] : nd->frame;
        } else {
            site[i] = s->map ? s->map[i] : (mt_node_id)i;
            via[i] = MT_NO_FRAME;
        }
    }
    for (size_t i = 0; i < nn; i++)
        if (site[i] == UINT32_MAX) {
            site[i] = s->map ? s->map[i] : (mt_node_id)i;
            via[i] = MT_NO_FRAME;
        }
    free(pl);
    free(s->map);
    s->map = site;
    s->via = via;
    return 0;
}

int mt_selection_sites_complete(const mt_selection *s, const mt_plumbing *p, size_t max_depth)
{
    const mt_model *m = s->m;
    if (!max_depth)
        return 1;
    if (s->own_nodes)
        return 0; /* hidden frames: node ids are no model node ids */
    size_t nn = m->stacks.nodes.n;
    uint32_t *codes = malloc((nn ? nn : 1) * sizeof *codes);
    /* allp[i]: every frame from the (cut) root down to node i is plumbing,
     * as mta_plumbing_apply sees it (a frame without a name counts once a
     * plumbing frame is above it): its site lies above the cut. */
    uint8_t *allp = malloc(nn ? nn : 1);
    int any;
    uint8_t *pl = func_kinds(m, p, &any);
    if (!codes || !pl || !allp) {
        free(codes);
        free(pl);
        free(allp);
        return 0;
    }
    codes[0] = 0;
    allp[0] = 1;
    for (size_t i = 1; i < nn; i++) {
        const mt_node *nd = &m->stacks.nodes.v[i];
        codes[i] = codes[nd->parent] + (m->stacks.frames.v[nd->frame].inline_index == 0);
        uint8_t k = pl[m->stacks.frames.v[nd->frame].func];
        allp[i] = allp[nd->parent] && (k == 1 || (k == 2 && nd->parent != 0));
    }
    int ok = 1;
    for (size_t i = 0; i < mta_n_allocs(m) && ok; i++) {
        mt_node_id n = m->whole->allocs.v[i].stack;
        if (n == 0 || codes[n] < max_depth || !mta_selection_has(s, i))
            continue; /* the whole stack is there */
        mt_node_id site = s->map ? s->map[n] : n;
        if (allp[n])
            ok = 0; /* nothing but plumbing so far */
        if (codes[site] <= 1)
            ok = 0; /* the site's caller was cut away */
    }
    for (size_t n = 1; m->fold && n < nn && ok; n++) {
        if (codes[n] < max_depth || !mta_fold_counts(s, (mt_node_id)n))
            continue;
        mt_node_id site = s->map ? s->map[n] : (mt_node_id)n;
        if (allp[n])
            ok = 0;
        if (codes[site] <= 1)
            ok = 0;
    }
    free(codes);
    free(pl);
    free(allp);
    return ok;
}

mt_frame_id mt_selection_via(const mt_selection *s, size_t i)
{
    return s->via ? s->via[s->m->whole->allocs.v[i].stack] : MT_NO_FRAME;
}
