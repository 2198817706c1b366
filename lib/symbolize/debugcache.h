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

/* fd: the separate debug file of build-id id that dwarf.c found (and
 * checked), *name its path (malloc'd). Returns the descriptor libdw is to
 * read: the inflated copy dir/HEX(id).debug, made from fd first when it
 * is missing and fd has compressed debug sections (fd is then closed and
 * *name replaced by the copy's path); else fd itself, when there is
 * nothing to gain or no copy can be used or made (said through warn when
 * a copy there is refused: another user's, a link, writable by others,
 * damaged, another build-id's, over the cap). */
int mts_debugcache_use(const char *dir, const unsigned char *id, size_t idlen, int fd,
                       char **name, mt_warning_fn warn, void *warn_ctx);

#define MTS_DEBUGCACHE_MAX_FILE ((long long)256 << 20)    /* one inflated copy */
#define MTS_DEBUGCACHE_MAX_TOTAL ((long long)1 << 30)     /* all of them in a directory */

#endif
