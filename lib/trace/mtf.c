/*
 * mtf.c - move-to-front name tables shared by reader and writer (see mtf.h).
 */
#include <stdlib.h>
#include <string.h>

#include "mtf.h"

/* Moves entry i of the file order to the front; returns its storage slot. */
static unsigned file_to_front(mt_mtf *m, unsigned i)
{
    uint8_t slot = m->order[i];
    memmove(m->order + 1, m->order, i);
    m->order[0] = slot;
    return slot;
}

static void def_to_front(mt_mtf_file *f, unsigned i)
{
    const char *d = f->defs[i];
    memmove(f->defs + 1, f->defs, i * sizeof f->defs[0]);
    f->defs[0] = d;
}

static void def_push(mt_mtf_file *f, const char *d)
{
    unsigned keep = f->ndefs < MT_MTF_SIZE ? f->ndefs : MT_MTF_SIZE - 1;
    memmove(f->defs + 1, f->defs, keep * sizeof f->defs[0]);
    f->defs[0] = d;
    f->ndefs = (uint8_t)(keep + 1);
}

int mt_mtf_decode(mt_mtf *m, unsigned file_code, const char *file_lit, unsigned def_code,
                  const char *def_lit, const char **file, const char **def)
{
    mt_mtf_file *f;
    if (file_code < MT_MTF_LITERAL) {
        if (file_code >= m->nfiles)
            return -1;
        f = &m->files[file_to_front(m, file_code)];
    } else if (m->nfiles < MT_MTF_SIZE) {
        unsigned slot = m->nfiles++;
        memmove(m->order + 1, m->order, slot);
        m->order[0] = (uint8_t)slot;
        f = &m->files[slot];
        f->name = file_lit;
        f->ndefs = 0;
    } else {
        /* Table full: the evicted entry's storage is reused and, as in
         * memtrace's reader, keeps its defname table (needed for v1 traces
         * written by an early encoder). */
        f = &m->files[file_to_front(m, MT_MTF_SIZE - 1)];
        f->name = file_lit;
    }
    *file = f->name;
    if (def_code < MT_MTF_LITERAL) {
        if (def_code >= f->ndefs)
            return -2;
        def_to_front(f, def_code);
    } else {
        def_push(f, def_lit);
    }
    *def = f->defs[0];
    return 0;
}

/* Hash of a C string, eight bytes at a time; returns its length too. */
static uint64_t name_hash(const char *s, size_t *len)
{
    size_t n = strlen(s);
    const uint64_t k = 0x9E3779B97F4A7C15ull;
    uint64_t h = n * k;
    *len = n;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, s, 8);
        h = (h ^ v) * k;
        h ^= h >> 29;
        s += 8;
        n -= 8;
    }
    uint64_t v = 0;
    memcpy(&v, s, n);
    h = (h ^ v) * k;
    return h ^ (h >> 32);
}

/* Encoder copies of names live in buffers that remember their capacity
 * (stored just before the string) and go back to a pool when a name is
 * evicted: a busy name table costs no malloc per location. */
static size_t *buf_cap(char *s)
{
    return (size_t *)(void *)(s - sizeof(size_t));
}

static char *copy_of(mt_mtf *m, const char *s, size_t len)
{
    char *c = NULL;
    if (m->npool > 0) {
        c = m->pool[--m->npool];
        if (*buf_cap(c) < len + 1) {
            size_t cap = len + 1 < 64 ? 64 : len + 1;
            size_t *b = realloc(buf_cap(c), sizeof(size_t) + cap);
            if (!b) {
                free(buf_cap(c));
                return NULL;
            }
            *b = cap;
            c = (char *)(b + 1);
        }
    } else {
        size_t cap = len + 1 < 64 ? 64 : len + 1;
        size_t *b = malloc(sizeof(size_t) + cap);
        if (!b)
            return NULL;
        *b = cap;
        c = (char *)(b + 1);
    }
    memcpy(c, s, len + 1);
    return c;
}

static void release(mt_mtf *m, const char *s)
{
    char *c = (char *)s;
    if (m->npool == m->pool_cap) {
        size_t cap = m->pool_cap ? m->pool_cap * 2 : 64;
        char **pool = realloc(m->pool, cap * sizeof *pool);
        if (!pool) {
            free(buf_cap(c));
            return;
        }
        m->pool = pool;
        m->pool_cap = cap;
    }
    m->pool[m->npool++] = c;
}

int mt_mtf_encode(mt_mtf *m, const char *file, const char *def, unsigned *file_code,
                  unsigned *def_code)
{
    size_t flen, dlen;
    uint64_t fh = name_hash(file, &flen), dh = name_hash(def, &dlen);
    mt_mtf_file *f = NULL;
    unsigned i;
    for (i = 0; i < m->nfiles; i++) {
        const mt_mtf_file *e = &m->files[m->order[i]];
        if (e->name_hash == fh && strcmp(e->name, file) == 0)
            break;
    }
    if (i < m->nfiles) {
        *file_code = i;
        f = &m->files[file_to_front(m, i)];
    } else {
        char *copy = copy_of(m, file, flen);
        if (!copy)
            return -1;
        *file_code = MT_MTF_LITERAL;
        unsigned slot;
        if (m->nfiles < MT_MTF_SIZE) {
            slot = m->nfiles++;
            memmove(m->order + 1, m->order, slot);
            m->order[0] = (uint8_t)slot;
        } else {
            slot = file_to_front(m, MT_MTF_SIZE - 1);
            release(m, m->files[slot].name);
            for (unsigned j = 0; j < m->files[slot].ndefs; j++)
                release(m, m->files[slot].defs[j]);
        }
        f = &m->files[slot];
        f->name = copy;
        f->name_hash = fh;
        f->ndefs = 0; /* the writer starts every new file with no names */
    }
    for (i = 0; i < f->ndefs; i++) {
        if (f->def_hash[i] == dh && strcmp(f->defs[i], def) == 0)
            break;
    }
    if (i < f->ndefs) {
        *def_code = i;
        uint64_t h = f->def_hash[i];
        memmove(f->def_hash + 1, f->def_hash, i * sizeof f->def_hash[0]);
        f->def_hash[0] = h;
        def_to_front(f, i);
    } else {
        char *copy = copy_of(m, def, dlen);
        if (!copy)
            return -1;
        *def_code = MT_MTF_LITERAL;
        if (f->ndefs == MT_MTF_SIZE)
            release(m, f->defs[MT_MTF_SIZE - 1]);
        unsigned keep = f->ndefs < MT_MTF_SIZE ? f->ndefs : MT_MTF_SIZE - 1;
        memmove(f->def_hash + 1, f->def_hash, keep * sizeof f->def_hash[0]);
        f->def_hash[0] = dh;
        def_push(f, copy);
    }
    return 0;
}

void mt_mtf_encoder_free(mt_mtf *m)
{
    for (unsigned i = 0; i < m->nfiles; i++) {
        mt_mtf_file *f = &m->files[i];
        free(buf_cap((char *)f->name));
        for (unsigned j = 0; j < f->ndefs; j++)
            free(buf_cap((char *)f->defs[j]));
    }
    for (size_t i = 0; i < m->npool; i++)
        free(buf_cap(m->pool[i]));
    free(m->pool);
    m->pool = NULL;
    m->npool = m->pool_cap = 0;
    m->nfiles = 0;
}
