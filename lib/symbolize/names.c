/*
 * names.c - the namer (memtrace/symbolize.h): raw frames -> names, for the
 * readers of reports and the viewer (mt_reader_set_namer) and for the
 * rewriter of `memtrace symbolize` (rewrite.c).
 *
 * Modules are keyed by (path as the trace gives it, fingerprint): two
 * traces of one path from two builds are two modules, one of which may be
 * the file on disk. A module is usable until dwarf.c finds it unreadable
 * or not the recorded file; from then on its frames stay raw without
 * asking again, and it is listed once as a problem (mt_namer_next_problem)
 * for the caller's messages; so is, once, a usable module without DWARF
 * that leaves a frame unnamed (stripped, its debug symbols not installed),
 * unless it is the C runtime's. Each frame of a usable module is looked up
 * once: its chain of locations is kept per module in a code -> locations
 * table of the codec (lib/trace/loctab.h, keyed by the offset), its names
 * once in one string table. One lock around it all: readers on several
 * threads share the namer, and libdw's handles are not to be shared.
 *
 * With a name cache (mt_namer_options.name_cache, namecache.c), a checked
 * module's chains are first taken from its build-id's cache file, read
 * once when its first frame is asked for (the module's ELF headers are
 * read for its build-id, never its debug information); what the debug
 * information gives for the other frames is added to that file by
 * mts_namer_save_names. A module without DWARF here (stripped, its debug
 * symbols not installed, and no debuginfod server named) is named from
 * its symbol table, kept in a file of its own (namecache.h,
 * MTS_NAMES_SYMTAB) and read only while the module still has no DWARF:
 * once its debug symbols are installed, it is named from them. The same
 * directory keeps inflated copies of compressed separate debug files
 * (debugcache.c, through dwarf.c), so that a frame new to the cache does
 * not have libdw inflate the module's debug sections again.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/symbolize.h"
#include "hash.h"
#include "loctab.h"
#include "rawframe.h"
#include "dwarf.h"
#include "namecache.h"

#define MAX_CHAIN 255   /* locations per code the format allows */

struct nmod {
    uint64_t hash;      /* of the path and the fingerprint */
    char *path;
    uint32_t fp;
    int why;            /* 0: usable; else an mt_namer_why */
    int unnamed_seen;   /* a frame of it stayed unnamed: checked for a note */
    char *trace;        /* the first trace that named it */
    mt_loctab frames;   /* offset -> locations (empty: nothing names it);
                         * hash 1: from the name cache, 0: looked up */
    int cache;          /* 0: not looked at yet; 1: id known, file read or
                         * absent; 2: id known, its file was corrupt;
                         * -1: no cache for it */
    enum mts_names_from from;   /* which cache file (cache 1 or 2) */
    unsigned char id[64];
    size_t idlen;
    size_t fresh;       /* frames looked up in its debug information */
};

struct mt_namer {
    pthread_mutex_t lock;
    int unchecked;
    char *url;
    char *debug_root;
    mt_warning_fn on_warning;
    void *warning_ctx;
    mts_dwarf *dwarf;                 /* made on first need */
    int dwarf_failed;
    struct nmod **mods;               /* open addressing */
    size_t mask, count;
    struct problem { struct nmod *mod; int why; } *problems;   /* in the order found */
    size_t nproblems, capproblems, next_problem;
    mt_pool pool;
    mt_strtab strings;
    char *cache_dir;                  /* the name cache; NULL: none */
    uint64_t cached;                  /* frames named from it */
    mt_location tmp[MAX_CHAIN];
};

mt_namer *mt_namer_new(const mt_namer_options *opts)
{
    mt_namer *nm = calloc(1, sizeof *nm);
    if (!nm)
        return NULL;
    pthread_mutex_init(&nm->lock, NULL);
    nm->strings.pool = &nm->pool;
    if (opts) {
        nm->unchecked = opts->unchecked;
        nm->on_warning = opts->on_warning;
        nm->warning_ctx = opts->warning_ctx;
        if ((opts->debuginfod_url && !(nm->url = strdup(opts->debuginfod_url))) ||
            (opts->debug_root && !(nm->debug_root = strdup(opts->debug_root))) ||
            (opts->name_cache && *opts->name_cache &&
             !(nm->cache_dir = strdup(opts->name_cache)))) {
            free(nm->url);
            free(nm->debug_root);
            free(nm);
            return NULL;
        }
    }
    return nm;
}

void mt_namer_free(mt_namer *nm)
{
    if (!nm)
        return;
    for (size_t i = 0; nm->mods && i <= nm->mask; i++) {
        struct nmod *m = nm->mods[i];
        if (!m)
            continue;
        mt_loctab_free(&m->frames);
        free(m->path);
        free(m->trace);
        free(m);
    }
    free(nm->mods);
    free(nm->problems);
    mts_dwarf_free(nm->dwarf);
    mt_strtab_free(&nm->strings);
    mt_pool_free(&nm->pool);
    free(nm->url);
    free(nm->debug_root);
    free(nm->cache_dir);
    pthread_mutex_destroy(&nm->lock);
    free(nm);
}

static uint64_t mod_hash(const char *path, uint32_t fp)
{
    return mt_hash_mix(mt_hash_bytes(path, strlen(path)), fp);
}

static int grow(mt_namer *nm)
{
    size_t cap = nm->mods ? 2 * (nm->mask + 1) : 16;
    struct nmod **t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; nm->mods && i <= nm->mask; i++) {
        if (!nm->mods[i])
            continue;
        size_t j = nm->mods[i]->hash & (cap - 1);
        while (t[j])
            j = (j + 1) & (cap - 1);
        t[j] = nm->mods[i];
    }
    free(nm->mods);
    nm->mods = t;
    nm->mask = cap - 1;
    return 0;
}

/* The module (path, fp), made on first sight; NULL when out of memory. */
static struct nmod *module(mt_namer *nm, const char *path, uint32_t fp, const char *trace)
{
    if ((nm->count + 1) * 2 > (nm->mods ? nm->mask + 1 : 0) && grow(nm) != 0)
        return NULL;
    uint64_t h = mod_hash(path, fp);
    size_t j = h & nm->mask;
    for (; nm->mods[j]; j = (j + 1) & nm->mask)
        if (nm->mods[j]->hash == h && nm->mods[j]->fp == fp && !strcmp(nm->mods[j]->path, path))
            return nm->mods[j];
    struct nmod *m = calloc(1, sizeof *m);
    if (!m || !(m->path = strdup(path)) || !(m->trace = strdup(trace ? trace : "(trace)"))) {
        if (m)
            free(m->path);
        free(m);
        return NULL;
    }
    m->hash = h;
    m->fp = fp;
    mt_loctab_init(&m->frames);
    nm->mods[j] = m;
    nm->count++;
    return m;
}

static void list_problem(mt_namer *nm, struct nmod *m, int why)
{
    if (nm->nproblems == nm->capproblems) {
        size_t cap = nm->capproblems ? 2 * nm->capproblems : 8;
        struct problem *p = realloc(nm->problems, cap * sizeof *p);
        if (!p)
            return;   /* (unlisted) */
        nm->problems = p;
        nm->capproblems = cap;
    }
    nm->problems[nm->nproblems++] = (struct problem){m, why};
}

static void give_up(mt_namer *nm, struct nmod *m, int why)
{
    m->why = why;
    list_problem(nm, m, why);
}

/* Is path one of the C runtime's modules (their unnamed frames are its
 * start-up and thread-start code, of no interest to a reader)? */
static int is_runtime(const char *path)
{
    static const char *const prefixes[] = {"libc.so", "ld-linux", "ld64.so", "libpthread.so",
                                           "libgcc_s.so", "libstdc++.so"};
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (strncmp(base, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

/* A frame of m got no name: listed once when m has no DWARF here. */
static void unnamed(mt_namer *nm, struct nmod *m)
{
    if (m->unnamed_seen)
        return;
    m->unnamed_seen = 1;
    if (!is_runtime(m->path) && mts_dwarf_has_dwarf(nm->dwarf, m->path) == 0)
        list_problem(nm, m, MT_NAMER_NO_DEBUG);
}

/* The dwarf reader, made on first need; NULL when it cannot be. */
static mts_dwarf *dwarf(mt_namer *nm)
{
    if (!nm->dwarf && !nm->dwarf_failed) {
        nm->dwarf = mts_dwarf_new();
        if (!nm->dwarf ||
            mts_dwarf_set_debuginfod(nm->dwarf, nm->url, nm->on_warning, nm->warning_ctx) != 0 ||
            mts_dwarf_set_debug_root(nm->dwarf, nm->debug_root) != 0 ||
            mts_dwarf_set_debug_copies(nm->dwarf, nm->cache_dir, nm->on_warning,
                                       nm->warning_ctx) != 0) {
            mts_dwarf_free(nm->dwarf);
            nm->dwarf = NULL;
            nm->dwarf_failed = 1;
        }
    }
    return nm->dwarf;
}

struct cached_ctx {
    mt_namer *nm;
    struct nmod *m;
};

/* A cache file's entry into the module's table (mts_cache_entry_fn). */
static int add_cached(void *ctx, uint64_t off, const mt_location *locs, size_t n)
{
    struct cached_ctx *c = ctx;
    mt_location l[MAX_CHAIN];
    for (size_t i = 0; i < n; i++) {
        l[i] = locs[i];
        l[i].filename = mt_strtab_intern(&c->nm->strings, locs[i].filename, strlen(locs[i].filename));
        l[i].defname = mt_strtab_intern(&c->nm->strings, locs[i].defname, strlen(locs[i].defname));
        if (!l[i].filename || !l[i].defname)
            return -1;
    }
    return mt_loctab_add(&c->m->frames, off, l, n, (uint64_t)1 << 8) < 0 ? -1 : 0;   /* (kept >> 8) */
}

/* Reads m's cache file, once, when m is checked by a build-id: 0, or -1
 * when m cannot be used (given up on, as a lookup would). */
static int read_cache(mt_namer *nm, struct nmod *m)
{
    m->cache = -1;
    if (!m->fp || !dwarf(nm))
        return 0;
    const unsigned char *id;
    int len = mts_dwarf_build_id(nm->dwarf, m->path, m->fp, &id);
    if (len == MTS_NO_MODULE || len == MTS_CHANGED) {
        give_up(nm, m, len == MTS_CHANGED ? MT_NAMER_CHANGED : MT_NAMER_MISSING);
        return -1;
    }
    if (len <= 0 || (size_t)len > sizeof m->id)
        return 0;
    memcpy(m->id, id, (size_t)len);
    m->idlen = (size_t)len;
    struct cached_ctx c = {nm, m};
    m->from = MTS_NAMES_DWARF;
    int rc = mts_namecache_load(nm->cache_dir, m->id, m->idlen, m->from, m->path, add_cached, &c,
                                nm->on_warning, nm->warning_ctx);
    /* none from its debug information: from its symbol table, if it
     * still has no DWARF here (its ELF headers are read already) and no
     * server might give some */
    if (rc == 0 && !nm->url && mts_dwarf_has_dwarf(nm->dwarf, m->path) == 0) {
        m->from = MTS_NAMES_SYMTAB;
        rc = mts_namecache_load(nm->cache_dir, m->id, m->idlen, m->from, m->path, add_cached, &c,
                                nm->on_warning, nm->warning_ctx);
    }
    if (rc < 0) {   /* nothing of it is used */
        mt_loctab_free(&m->frames);
        mt_loctab_init(&m->frames);
    }
    m->cache = rc == MTS_NAMECACHE_CORRUPT ? 2 : rc < 0 ? -1 : 1;
    if (rc == MTS_NAMECACHE_DIR_REFUSED) {   /* said once: no cache from here on */
        free(nm->cache_dir);
        nm->cache_dir = NULL;
        mts_dwarf_set_debug_copies(nm->dwarf, NULL, NULL, NULL);
    }
    return 0;
}

/* The locations of a raw frame (its chain, outermost first) into *locs,
 * looked up once per module and offset; the count, 0 when it stays raw. */
static size_t frame(mt_namer *nm, const char *trace, const mt_location *raw, uint64_t off,
                    const mt_location **locs)
{
    uint32_t fp = mt_raw_fingerprint_join(raw->start_char, raw->end_char);
    if (fp == 0 && !nm->unchecked)
        return 0;   /* nothing to check the file against: never a wrong name */
    struct nmod *m = module(nm, raw->filename, fp, trace);
    if (!m || m->why)
        return 0;
    if (nm->cache_dir && m->cache == 0 && read_cache(nm, m) != 0)
        return 0;
    size_t k;
    if (mt_loctab_find(&m->frames, off, locs, &k) == 0) {
        uint64_t from;
        if (k > 0 && mt_loctab_hash(&m->frames, off, &from) && from == 1)
            nm->cached++;
        if (k == 0 && m->cache > 0 && m->from == MTS_NAMES_SYMTAB)
            unnamed(nm, m);   /* no DWARF and a frame unnamed: said as a lookup would */
        return k;
    }
    if (!dwarf(nm))
        return 0;
    int got = mts_dwarf_lookup(nm->dwarf, m->path, fp, off, nm->tmp, MAX_CHAIN);
    if (got == MTS_NO_MODULE || got == MTS_CHANGED) {
        give_up(nm, m, got == MTS_CHANGED ? MT_NAMER_CHANGED : MT_NAMER_MISSING);
        return 0;
    }
    k = got > 0 ? (size_t)got : 0;
    if (k == 0)
        unnamed(nm, m);
    int oom = 0;
    for (size_t i = 0; i < k; i++) {   /* dwarf.c's strings are malloc'd: one copy each */
        char *f = (char *)nm->tmp[i].filename, *d = (char *)nm->tmp[i].defname;
        nm->tmp[i].filename = f ? mt_strtab_intern(&nm->strings, f, strlen(f)) : NULL;
        nm->tmp[i].defname = d ? mt_strtab_intern(&nm->strings, d, strlen(d)) : NULL;
        oom |= !nm->tmp[i].filename || !nm->tmp[i].defname;
        free(f);
        free(d);
    }
    if (oom || mt_loctab_add(&m->frames, off, nm->tmp, k, 0) < 0 ||
        mt_loctab_find(&m->frames, off, locs, &k) != 0)
        return 0;
    m->fresh++;
    return k;
}

void mts_namer_save_names(mt_namer *nm)
{
    pthread_mutex_lock(&nm->lock);
    for (size_t i = 0; nm->cache_dir && nm->mods && i <= nm->mask; i++) {
        struct nmod *m = nm->mods[i];
        int has = m && !m->why && m->cache > 0 && m->fresh > 0 && nm->dwarf
                      ? mts_dwarf_has_dwarf(nm->dwarf, m->path) : -1;
        /* names from DWARF go to its file only while the module has
         * DWARF; names from the symbol table to theirs only when that file
         * was the one read (no DWARF file, no server that might give
         * DWARF): the two are never mixed */
        enum mts_names_from from = has == 1 ? MTS_NAMES_DWARF : MTS_NAMES_SYMTAB;
        if (has >= 0 && (has == 1 || m->from == MTS_NAMES_SYMTAB) &&
            mts_namecache_save(nm->cache_dir, m->id, m->idlen, from, m->path, &m->frames,
                               nm->on_warning, nm->warning_ctx) == MTS_NAMECACHE_DIR_REFUSED) {
            free(nm->cache_dir);
            nm->cache_dir = NULL;
            mts_dwarf_set_debug_copies(nm->dwarf, NULL, NULL, NULL);
        }
        if (m)
            m->fresh = 0;   /* saved (or not to be): until more is looked up */
    }
    pthread_mutex_unlock(&nm->lock);
}

uint64_t mts_namer_cached(mt_namer *nm)
{
    pthread_mutex_lock(&nm->lock);
    uint64_t n = nm->cached;
    pthread_mutex_unlock(&nm->lock);
    return n;
}

size_t mt_namer_name(void *namer, const char *trace, const mt_location *in, size_t n,
                     mt_location *out, size_t max)
{
    mt_namer *nm = namer;
    size_t k = 0;
    int named = 0;
    pthread_mutex_lock(&nm->lock);
    for (size_t i = 0; i < n && k < max; i++) {
        uint64_t off;
        const mt_location *l;
        size_t got;
        if (mt_raw_parse(in[i].filename, in[i].defname, in[i].line, &off) &&
            (got = frame(nm, trace, &in[i], off, &l)) > 0) {
            /* a chain longer than the room left keeps its innermost part */
            size_t room = max - k, skip = got > room ? got - room : 0;
            memcpy(out + k, l + skip, (got - skip) * sizeof *out);
            k += got - skip;
            named = 1;
            continue;
        }
        out[k++] = in[i];
    }
    pthread_mutex_unlock(&nm->lock);
    return named ? k : 0;
}

int mt_namer_next_problem(mt_namer *nm, mt_namer_problem *p)
{
    pthread_mutex_lock(&nm->lock);
    int any = nm->next_problem < nm->nproblems;
    if (any) {
        struct problem *q = &nm->problems[nm->next_problem++];
        p->module = q->mod->path;
        p->trace = q->mod->trace;
        p->why = (mt_namer_why)q->why;
    }
    pthread_mutex_unlock(&nm->lock);
    return any;
}
