/*
 * mtf.c - move-to-front name tables shared by reader and writer (see mtf.h).
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "check.h"
#include "hash.h"
#include "mtf.h"
#include "vec.h"

/* Copies of names live in buffers that remember their capacity (stored just
 * before the string) and go back to a pool when a name is evicted: a busy
 * name table costs no malloc per location, and the buffers it cycles through
 * stay in the processor's cache. */
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
            size_t *b = mt_al_realloc(m->al, buf_cap(c), sizeof(size_t) + cap);
            if (!b) {
                mt_al_free(m->al, buf_cap(c));
                return NULL;
            }
            *b = cap;
            c = (char *)(b + 1);
        }
    } else {
        size_t cap = len + 1 < 64 ? 64 : len + 1;
        size_t *b = mt_al_realloc(m->al, NULL, sizeof(size_t) + cap);
        if (!b)
            return NULL;
        *b = cap;
        c = (char *)(b + 1);
    }
    memcpy(c, s, len);
    c[len] = '\0';
    return c;
}

static void release(mt_mtf *m, const char *s)
{
    char *c = (char *)s;
    if (MT_VEC_ROOM_IN(mt_al_re(m->al), m->pool, m->npool, m->pool_cap, 64) < 0) {
        mt_al_free(m->al, buf_cap(c));
        return;
    }
    m->pool[m->npool++] = c;
}

/* Moves entry i of the file order to the front; returns its storage slot. */
static unsigned file_to_front(mt_mtf *m, unsigned i)
{
    MT_ASSERT(i < m->nfiles && m->nfiles <= MT_MTF_SIZE);
    uint8_t slot = m->order[i];
    memmove(m->order + 1, m->order, i);
    m->order[0] = slot;
    return slot;
}

/* A new file entry named name at the front: a free storage slot, or the
 * least recently used entry's, whose name is given back. Returns the entry;
 * *evicted tells which (an evicted entry still has its names). */
static mt_mtf_file *new_file_entry(mt_mtf *m, mt_mtf_name name, int *evicted)
{
    mt_mtf_file *f;
    *evicted = m->nfiles == MT_MTF_SIZE;
    if (!*evicted) {
        unsigned slot = m->nfiles++;
        memmove(m->order + 1, m->order, slot);
        m->order[0] = (uint8_t)slot;
        f = &m->files[slot];
        f->ndefs = 0;
    } else {
        f = &m->files[file_to_front(m, MT_MTF_SIZE - 1)];
        release(m, f->name.str);
    }
    f->name = name;
    return f;
}

static void def_to_front(mt_mtf_file *f, unsigned i)
{
    MT_ASSERT(i < f->ndefs && f->ndefs <= MT_MTF_SIZE);
    mt_mtf_name d = f->defs[i];
    memmove(f->defs + 1, f->defs, i * sizeof f->defs[0]);
    f->defs[0] = d;
}

/* Makes room for a new name at the front of f's names (the oldest of a full
 * table is given back); the caller fills defs[0]. */
static void def_make_room(mt_mtf *m, mt_mtf_file *f)
{
    if (f->ndefs == MT_MTF_SIZE)
        release(m, f->defs[MT_MTF_SIZE - 1].str);
    unsigned keep = f->ndefs < MT_MTF_SIZE ? f->ndefs : MT_MTF_SIZE - 1;
    memmove(f->defs + 1, f->defs, keep * sizeof f->defs[0]);
    f->ndefs = (uint8_t)(keep + 1);
    MT_ASSERT(f->ndefs >= 1 && f->ndefs <= MT_MTF_SIZE);
}

int mt_mtf_decode(mt_mtf *m, unsigned file_code, const char *file_lit, size_t file_len,
                  unsigned def_code, const char *def_lit, size_t def_len, mt_mtf_name **file,
                  mt_mtf_name **def)
{
    mt_mtf_file *f;
    if (file_code < MT_MTF_LITERAL) {
        if (file_code >= m->nfiles)
            return -1;
        f = &m->files[file_to_front(m, file_code)];
    } else {
        char *copy = copy_of(m, file_lit, file_len);
        if (!copy)
            return -3;
        /* When the table is full, the evicted entry's storage is reused and,
         * as in memtrace's reader, keeps its defname table (needed for v1
         * traces written by an early encoder). */
        int evicted;
        mt_mtf_name name = {.str = copy, .hash = mt_hash_bytes(file_lit, file_len)};
        f = new_file_entry(m, name, &evicted);
    }
    *file = &f->name;
    if (def_code < MT_MTF_LITERAL) {
        if (def_code >= f->ndefs)
            return -2;
        def_to_front(f, def_code);
    } else {
        char *copy = copy_of(m, def_lit, def_len);
        if (!copy)
            return -3;
        def_make_room(m, f);
        f->defs[0] = (mt_mtf_name){.str = copy, .hash = mt_hash_bytes(def_lit, def_len)};
    }
    *def = &f->defs[0];
    return 0;
}

int mt_mtf_encode(mt_mtf *m, const char *file, const char *def, unsigned *file_code,
                  unsigned *def_code)
{
    size_t flen = strlen(file), dlen = strlen(def);
    uint64_t fh = mt_hash_bytes(file, flen), dh = mt_hash_bytes(def, dlen);
    mt_mtf_file *f = NULL;
    unsigned i;
    for (i = 0; i < m->nfiles; i++) {
        const mt_mtf_file *e = &m->files[m->order[i]];
        if (e->name.hash == fh && strcmp(e->name.str, file) == 0)
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
        int evicted;
        f = new_file_entry(m, (mt_mtf_name){.str = copy, .hash = fh}, &evicted);
        if (evicted) {
            /* The writer starts every new file with no names. */
            for (unsigned j = 0; j < f->ndefs; j++)
                release(m, f->defs[j].str);
            f->ndefs = 0;
        }
    }
    for (i = 0; i < f->ndefs; i++) {
        if (f->defs[i].hash == dh && strcmp(f->defs[i].str, def) == 0)
            break;
    }
    if (i < f->ndefs) {
        *def_code = i;
        def_to_front(f, i);
    } else {
        char *copy = copy_of(m, def, dlen);
        if (!copy)
            return -1;
        *def_code = MT_MTF_LITERAL;
        def_make_room(m, f);
        f->defs[0] = (mt_mtf_name){.str = copy, .hash = dh};
    }
    return 0;
}

void mt_mtf_free(mt_mtf *m)
{
    for (unsigned i = 0; i < m->nfiles; i++) {
        mt_mtf_file *f = &m->files[i];
        mt_al_free(m->al, buf_cap((char *)f->name.str));
        for (unsigned j = 0; j < f->ndefs; j++)
            mt_al_free(m->al, buf_cap((char *)f->defs[j].str));
    }
    for (size_t i = 0; i < m->npool; i++)
        mt_al_free(m->al, buf_cap(m->pool[i]));
    mt_al_free(m->al, m->pool);
    m->pool = NULL;
    m->npool = m->pool_cap = 0;
    m->nfiles = 0;
}
