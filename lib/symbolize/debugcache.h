/*
 * debugcache.h - inflated copies of separate debug files (debugcache.c),
 * kept in the name cache's directory by build-id, so that a module whose
 * shipped debug file has zlib-compressed sections (libc6-dbg's, -dbgsym
 * packages') is not inflated again by each later naming of a new frame.
 */
#ifndef MT_SYMBOLIZE_DEBUGCACHE_H
#define MT_SYMBOLIZE_DEBUGCACHE_H

#include <stddef.h>

#include "memtrace/trace.h"

/* The inflated copy dir/HEX(id).debug of build-id id's debug file,
 * opened and checked: its descriptor, *name (malloc'd, freed first)
 * set to its path; -1 when there is none or it is refused (said through
 * warn: another user's, a link, writable by others, damaged, another
 * build-id's, over the cap). *make: 1 when a copy may be made there
 * (none, or a damaged one), 0 when not. */
int mts_debugcache_open(const char *dir, const unsigned char *id, size_t idlen, char **name,
                        int *make, mt_warning_fn warn, void *warn_ctx);

/* fd: the separate debug file of build-id id that dwarf.c found (and
 * checked), *name its path (malloc'd). Makes the copy from it when fd has
 * compressed debug sections and the caps allow, and returns the copy's
 * descriptor (fd closed, *name replaced); else fd itself. */
int mts_debugcache_make(const char *dir, const unsigned char *id, size_t idlen, int fd,
                        char **name, mt_warning_fn warn, void *warn_ctx);

#define MTS_DEBUGCACHE_MAX_FILE ((long long)256 << 20)    /* one inflated copy */
#define MTS_DEBUGCACHE_MAX_TOTAL ((long long)1 << 30)     /* all of them in a directory */

#endif
