/*
 * dwarf.h - one module's code offsets -> source locations, with libdw, for
 * the trace rewriter (rewrite.c). Modules are opened from disk by path, once
 * each (one file under several spellings too), only when they are regular
 * ELF files, and checked against the fingerprint the recorder wrote.
 */
#ifndef MT_SYMBOLIZE_DWARF_H
#define MT_SYMBOLIZE_DWARF_H

#include <stddef.h>
#include <stdint.h>

#include "memtrace/trace.h"

typedef struct mts_dwarf mts_dwarf;

mts_dwarf *mts_dwarf_new(void);
void mts_dwarf_free(mts_dwarf *d);

enum { MTS_OK = 0, MTS_NO_MODULE = -1, MTS_CHANGED = -2, MTS_NO_SYMBOL = -3 };

/* Locations of the return address at offset (module-relative, as in a raw
 * frame) of the module at path, outermost first, in out (room for max);
 * fingerprint 0 skips the check. Strings are malloc'd (the caller frees
 * them). Returns the count, or an MTS_ code: the module cannot be read,
 * it is not the file that was loaded, or nothing names the address. */
int mts_dwarf_lookup(mts_dwarf *d, const char *path, uint32_t fingerprint, uint64_t offset,
                     mt_location *out, size_t max);

/* The build-id of the module at path, opened (its ELF headers, not its
 * debug information) and checked as by mts_dwarf_lookup: its length with
 * *id set (valid while the module stays open: copy it), 0 when it has
 * none, or MTS_NO_MODULE or MTS_CHANGED. */
int mts_dwarf_build_id(mts_dwarf *d, const char *path, uint32_t fingerprint,
                       const unsigned char **id);

/* Asks the debuginfod server at url (http://host:port; NULL: none, the
 * default) by build-id for the debug information of modules here that
 * have none; its errors (an unknown build-id, a server that cannot be
 * reached) go to warn. 0, or -1 when out of memory. */
int mts_dwarf_set_debuginfod(mts_dwarf *d, const char *url, mt_warning_fn warn, void *ctx);

/* The directory of separate debug files (build-id tree, debuglink and dwz
 * names) instead of /usr/lib/debug: an absolute path without ':' (NULL:
 * /usr/lib/debug again). 0, or -1 for such a path or out of memory. */
int mts_dwarf_set_debug_root(mts_dwarf *d, const char *root);

/* Keep inflated copies of compressed separate debug files in dir (the
 * name cache's directory; debugcache.c) and read them instead; warn says
 * why a copy there is not used. NULL: none (the default). 0, or -1 when
 * out of memory. */
int mts_dwarf_set_debug_copies(mts_dwarf *d, const char *dir, mt_warning_fn warn, void *ctx);

/* 1 when the module at path has DWARF here (its own, a separate debug
 * file's or a debuginfod server's), 0 when not (its code is named by its
 * ELF symbols at most: a stripped binary), -1 when it cannot be read. */
int mts_dwarf_has_dwarf(mts_dwarf *d, const char *path);

#endif
