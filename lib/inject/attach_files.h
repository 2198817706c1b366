/*
 * attach_files.h - how 'memtrace attach', often run as root, touches the
 * files of the process it visits without becoming that process's tool:
 * it never opens, as itself, a path or a descriptor number the process
 * supplies. A path inside the process's root is resolved there and only
 * there (openat2 RESOLVE_IN_ROOT, no symbolic or magic links), opened
 * O_PATH first and read only if it is a regular file (of the expected
 * owner); a descriptor of the process is taken with pidfd_getfd (the same
 * open file, with the rights the process opened it with, never a new open
 * of what it names) and used only if it is the empty memfd expected. Every
 * access goes through the process's pidfd-verified identity
 * (attach_target_same). docs/attach.md, "What attach trusts".
 */
#ifndef MEMTRACE_ATTACH_FILES_H
#define MEMTRACE_ATTACH_FILES_H

#include <stdint.h>
#include <sys/stat.h>

#include "attach_target.h"

/* path (absolute, as the process sees it) opened O_PATH inside the
 * process's root: no symbolic link, no magic link, no way out of its root
 * (extra: O_DIRECTORY or 0). The descriptor, or -1 with why. */
int attach_open_in_root(const attach_target *t, const char *path, int extra, char *why,
                        size_t cap);

/* An O_PATH descriptor reopened for reading, if it is a regular file
 * (owned by owner unless owner is (uid_t)-1); never blocks (O_NONBLOCK),
 * never follows a link. The descriptor (st filled), or -1 with why. */
int attach_open_regular(int opath, uid_t owner, struct stat *st, char *why, size_t cap);

/* The object mapped at base..end (its path file as the maps show it)
 * opened for reading: the mapping itself (/proc/PID/map_files), else its
 * path inside the process's root; a regular file only. -1 if neither. */
int attach_open_mapped(const attach_target *t, const char *file, uint64_t base, uint64_t end);

/* Fills the process's descriptor target_fd, which it just returned from
 * memfd_create("libmemtrace.so"), with the file lib (opened here: our own
 * library): the descriptor is taken with pidfd_getfd and must be an empty
 * memfd open for writing. 0, or -1 with why (nothing written). */
int attach_fill_memfd(const attach_target *t, int target_fd, const char *lib, char *why,
                      size_t cap);

/* The file the process wrote at inner (as it sees it, in its root) copied
 * to dest (created as every output file is, lib/common/safefile.c): a
 * regular file owned by the process's user, no link anywhere on the way,
 * at most its allocated size (a sparse file is refused); then removed
 * there. 1 copied, 0 there is no such file, -1 with why (dest not made). */
int attach_copy_out(const attach_target *t, const char *inner, const char *dest, char *why,
                    size_t cap);

/* Whether the process's user (its uid, gid and groups) may create a file
 * in directory dir (as we see it): 1 yes, 0 no, -1 cannot tell. Checked in
 * a child process with that user's file-system identity. */
int attach_user_can_create(const attach_target *t, const char *dir);

#endif
