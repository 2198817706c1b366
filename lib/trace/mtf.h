/*
 * mtf.h - the move-to-front tables that compress file and function names in
 * location events: up to 31 recent file names, most recent first, each
 * owning up to 31 recent function names. Code i (0..30) means "entry i",
 * code 31 means "a literal name follows". Both directions live here so the
 * reader and the writer cannot drift apart.
 *
 * Decoder tables hold interned strings (equal names are equal pointers);
 * encoder tables hold their own copies, compared by content.
 */
#ifndef MT_TRACE_MTF_H
#define MT_TRACE_MTF_H

#include <stdint.h>

#include "format.h"

typedef struct mt_mtf_file {
    const char *name;
    const char *defs[MT_MTF_SIZE]; /* most recent first */
    uint8_t ndefs;
    /* Encoder only: hashes of name and defs, compared before the strings. */
    uint64_t name_hash;
    uint64_t def_hash[MT_MTF_SIZE];
} mt_mtf_file;

typedef struct mt_mtf {
    mt_mtf_file files[MT_MTF_SIZE]; /* storage; order says which is where */
    uint8_t order[MT_MTF_SIZE];      /* order[i] = storage slot of entry i */
    uint8_t nfiles;
    /* Encoder only: string buffers of evicted names, for reuse. */
    char **pool;
    size_t npool, pool_cap;
} mt_mtf;

/* Decoder: applies one location's (file code, defname code) pair. file_lit /
 * def_lit are the literal names when the codes are 31. Returns 0 with the
 * names set, -1 if the file code names an empty entry, -2 if the defname code
 * does. The table is unchanged on -1; on -2 the file entry has moved. */
int mt_mtf_decode(mt_mtf *m, unsigned file_code, const char *file_lit, unsigned def_code,
                  const char *def_lit, const char **file, const char **def);

/* Encoder: the codes for (file, def), updating the table. A code of 31 means
 * the caller writes the name literally. Names are compared by content; the
 * table keeps its own copies (caller's strings need not outlive the call).
 * Returns 0, or -1 when out of memory. */
int mt_mtf_encode(mt_mtf *m, const char *file, const char *def, unsigned *file_code,
                  unsigned *def_code);
/* Frees the copies an encoder's table holds. */
void mt_mtf_encoder_free(mt_mtf *m);

#endif
