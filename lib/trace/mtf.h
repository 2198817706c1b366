/*
 * mtf.h - the move-to-front tables that compress file and function names in
 * location events: up to 31 recent file names, most recent first, each
 * owning up to 31 recent function names. Code i (0..30) means "entry i",
 * code 31 means "a literal name follows". Both directions live here so the
 * reader and the writer cannot drift apart.
 *
 * Tables hold their own copies of the names (in buffers that are reused when
 * a name is evicted) with a hash of each, so that neither side touches any
 * other memory for a name that is already in a table.
 */
#ifndef MT_TRACE_MTF_H
#define MT_TRACE_MTF_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

typedef struct mt_mtf_name {
    const char *str;        /* the table's copy */
    uint64_t hash;          /* mt_hash_bytes of it */
    const char *interned;   /* decoder: the reader's interned copy once it
                             * asked for one (see mt_mtf_decode), else NULL */
} mt_mtf_name;

typedef struct mt_mtf_file {
    mt_mtf_name name;
    mt_mtf_name defs[MT_MTF_SIZE]; /* most recent first */
    uint8_t ndefs;
} mt_mtf_file;

typedef struct mt_mtf {
    mt_mtf_file files[MT_MTF_SIZE]; /* storage; order says which is where */
    uint8_t order[MT_MTF_SIZE];      /* order[i] = storage slot of entry i */
    uint8_t nfiles;
    /* String buffers of evicted names, for reuse. */
    char **pool;
    size_t npool, pool_cap;
    const struct mt_alloc *al;       /* where the copies live (alloc.h; NULL: malloc) */
} mt_mtf;

/* Decoder: applies one location's (file code, defname code) pair. file_lit /
 * def_lit are the literal names (file_len / def_len bytes, not necessarily
 * NUL-terminated) when the codes are 31: they are copied into the table.
 * Returns 0 with *file and *def pointing at the table entries (valid until the
 * next call; the caller may set their `interned` field), -1 if the file code
 * names an empty entry, -2 if the defname code does, -3 when out of memory.
 * The table is unchanged on -1; on -2 the file entry has moved. */
int mt_mtf_decode(mt_mtf *m, unsigned file_code, const char *file_lit, size_t file_len,
                  unsigned def_code, const char *def_lit, size_t def_len, mt_mtf_name **file,
                  mt_mtf_name **def);

/* Encoder: the codes for (file, def), updating the table. A code of 31 means
 * the caller writes the name literally. Names are compared by content; the
 * table keeps its own copies (caller's strings need not outlive the call).
 * Returns 0, or -1 when out of memory. */
int mt_mtf_encode(mt_mtf *m, const char *file, const char *def, unsigned *file_code,
                  unsigned *def_code);

/* Frees the copies a table holds (either direction). */
void mt_mtf_free(mt_mtf *m);

#endif
