/*
 * namecache.h - the name cache (namecache.c): what the frames of a module
 * were named, kept on disk by the module's build-id, so that a later
 * symbolization of the same binary names its frames without reading its
 * debug information again (docs/cli/symbolize.md, "Name cache").
 */
#ifndef MT_SYMBOLIZE_NAMECACHE_H
#define MT_SYMBOLIZE_NAMECACHE_H

#include <stddef.h>
#include <stdint.h>

#include "memtrace/trace.h"
#include "loctab.h"

/* One cached frame: the module offset and its chain (outermost first, as
 * mts_dwarf_lookup gives it; n = 0: nothing names the address). Strings
 * are valid during the call only. 0 to go on, -1 to stop (out of memory). */
typedef int (*mts_cache_entry_fn)(void *ctx, uint64_t offset, const mt_location *locs, size_t n);

/* What a cache file's names come from, in its name: HEX(id) for a module's
 * debug information (DWARF), HEX(id).sym for its symbol table alone (a
 * module without debug information here; read only while it still has
 * none, so that installing its debug symbols names it better). */
enum mts_names_from { MTS_NAMES_DWARF, MTS_NAMES_SYMTAB };

/* Reads the cache file of build-id id in dir (from: which of its two), for the module at modpath
 * (a location whose file is marked as "the module's own path" gets
 * modpath), handing each entry to fn. 1 when read, 0 when there is none,
 * -1 when it was refused (not the caller's file, a link, others may write
 * it or its directory, too big), MTS_NAMECACHE_CORRUPT when its content
 * is wrong (truncated, bad checksum, another build-id's): either is said
 * once through warn, and nothing of it may be used (entries already handed
 * to fn are the caller's to drop); MTS_NAMECACHE_DIR_REFUSED when the
 * directory itself is refused (another user's, others may write to it, a
 * link): said once, and no file of it is to be asked for again. */
int mts_namecache_load(const char *dir, const unsigned char *id, size_t idlen,
                       enum mts_names_from from, const char *modpath, mts_cache_entry_fn fn, void *ctx,
                       mt_warning_fn warn, void *warn_ctx);

/* Writes the cache file of build-id id in dir (from: which of its two; made 0700 with its
 * parents when missing) from frames (offset -> chain, as names.c keeps
 * them), mode 0600, through a temporary file renamed over the old one;
 * a link or another user's file there is refused, never followed.
 * Stops adding entries at the size cap; writes no new file when the
 * directory holds MTS_NAMECACHE_MAX_FILES already. 0, or -1 (warned), or
 * MTS_NAMECACHE_DIR_REFUSED (warned) when the directory cannot be made or
 * is not the caller's alone. */
int mts_namecache_save(const char *dir, const unsigned char *id, size_t idlen,
                       enum mts_names_from from, const char *modpath, const mt_loctab *frames,
                       mt_warning_fn warn, void *warn_ctx);

#define MTS_NAMECACHE_CORRUPT (-2)
#define MTS_NAMECACHE_DIR_REFUSED (-3)

/* The namer's side (names.c), for the rewriter: writes what the debug
 * information or the symbol table gave this time into the modules' cache
 * files (nothing without a name cache), and the number of frames named
 * from the cache so far. */
struct mt_namer;
void mts_namer_save_names(struct mt_namer *nm);
uint64_t mts_namer_cached(struct mt_namer *nm);

/* What the name cache's files and the inflated debug files beside them
 * (debugcache.c) share: dir/HEX(id)SUFFIX into out (0, or -1 when too
 * long or no id); is st the caller's and writable by no one else.
 *
 * mts_namecache_open_dir: the cache directory opened component by
 * component (create: the missing ones made, 0700), only along a path no
 * other user can change: every directory on the way is the caller's or
 * root's, one writable by others only when sticky (then what is taken in
 * it is the caller's or root's), a symbolic link followed only when it is
 * the caller's or root's; the last one is no link and the caller's alone.
 * Its descriptor, or -1 with *why (NULL when it does not exist).
 *
 * mts_namecache_create / _commit: a new file base in that directory,
 * relative to its descriptor dfd (never by path: a parent changed in
 * between cannot send it elsewhere), written under a temporary name
 * (into tmp, cap bytes; O_EXCL | O_NOFOLLOW, 0600) then renamed over
 * base. create: the descriptor, or -1 with *why; commit closes fd and
 * renames (ok 0) or removes the temporary file (ok != 0): 0, or -1 with
 * *why. */
struct stat;
int mts_namecache_path(char *out, size_t cap, const char *dir, const unsigned char *id,
                       size_t idlen, const char *suffix);
int mts_namecache_private(const struct stat *st);
int mts_namecache_open_dir(const char *dir, int create, const char **why);
int mts_namecache_create(int dfd, const char *base, char *tmp, size_t cap, const char **why);
int mts_namecache_commit(int dfd, int fd, const char *tmp, const char *base, int ok,
                         const char **why);
/* The directory dfd's files (those not hidden), *bytes the size of those
 * named *suffix and of temporary files being written; a temporary file
 * whose writer is gone (killed while writing) is removed. */
size_t mts_namecache_scan(int dfd, const char *suffix, long long *bytes);

#define MTS_NAMECACHE_MAX_BYTES ((size_t)8 << 20)   /* per file */
#define MTS_NAMECACHE_MAX_FILES 4096                /* per directory (inflated copies too) */

#endif
