/*
 * mtf.c - move-to-front name tables shared by reader and writer (see mtf.h).
 */
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

void mt_mtf_encode(mt_mtf *m, const char *file, const char *def, unsigned *file_code,
                   unsigned *def_code)
{
    mt_mtf_file *f = NULL;
    unsigned i;
    for (i = 0; i < m->nfiles; i++) {
        if (m->files[m->order[i]].name == file)
            break;
    }
    if (i < m->nfiles) {
        *file_code = i;
        f = &m->files[file_to_front(m, i)];
    } else {
        *file_code = MT_MTF_LITERAL;
        unsigned slot;
        if (m->nfiles < MT_MTF_SIZE) {
            slot = m->nfiles++;
            memmove(m->order + 1, m->order, slot);
            m->order[0] = (uint8_t)slot;
        } else {
            slot = file_to_front(m, MT_MTF_SIZE - 1);
        }
        f = &m->files[slot];
        f->name = file;
        f->ndefs = 0; /* the writer starts every new file with no names */
    }
    for (i = 0; i < f->ndefs; i++) {
        if (f->defs[i] == def)
            break;
    }
    if (i < f->ndefs) {
        *def_code = i;
        def_to_front(f, i);
    } else {
        *def_code = MT_MTF_LITERAL;
        def_push(f, def);
    }
}
