/*
 * safefile.h - the one way memtrace creates an output file and the one way
 * it opens a file that goes with a trace (TRACE.rss, TRACE.mtidx) for
 * reading, safe in directories other users may write to (/tmp, /var/tmp, a
 * 1777 --pprof-dir). In lib/common, compiled with the codec, so that the
 * CLI, the reports (lib/present), the analysis (lib/analyze) and the viewer
 * share it;
 * the recorder (lib/record) links it too: it creates its traces itself
 * (O_EXCL, O_NOFOLLOW: tracer_file.c), and its leak verdicts (TRACE.leaks)
 * with mt_outfile_create, which allocates nothing.
 */
#ifndef MT_TRACE_SAFEFILE_H
#define MT_TRACE_SAFEFILE_H

#include <stdio.h>
#include <sys/types.h>

/* An output file being written. */
typedef struct mt_outfile {
    int fd;        /* write here (a new file: O_RDWR); may be closed and set to -1 before commit */
    char *path;    /* the file asked for */
    char *tmp;     /* its temporary name until commit; NULL: written in place */
} mt_outfile;

/* Opens path to write a new version of it:
 * - missing, or a regular file of the caller's: a new file is created
 *   exclusively (O_EXCL | O_NOFOLLOW) under an unpredictable name in
 *   path's directory (.NAME.tmp.PID.RANDOM), with mode (less the umask),
 *   and renamed over path by mt_outfile_commit: a reader never sees half a
 *   file, and whatever another user put at path (a link, a hard link to
 *   another file) is replaced, never written through;
 * - a character device (/dev/null), or a FIFO of the caller's: written in
 *   place;
 * - a symbolic link: followed only when it belongs to the caller or root
 *   (/dev/stdout, the user's own links), then written through in place;
 * - anything else (a regular file, FIFO, socket or link of another user, a
 *   directory): refused.
 * Returns 0, or -1 with *why set to a static string (errno's text when the
 * system said no). */
int mt_outfile_open(mt_outfile *o, const char *path, mode_t mode, const char **why);

/* The same without allocating (for the recorder): the temporary name goes
 * into tmp (cap bytes; "" when the file is written in place), and with
 * MT_OUTFILE_REGULAR anything but a missing path or a regular file of the
 * caller's is refused (no device, FIFO or link: nothing that could block
 * or lead elsewhere). The descriptor, or -1 with *why; then
 * mt_outfile_finish. */
#define MT_OUTFILE_REGULAR 1
int mt_outfile_create(const char *path, char *tmp, size_t cap, mode_t mode, int flags,
                      const char **why);
/* Closes fd (unless -1) and renames tmp (unless "") to path; on failure
 * removes tmp. 0, or -1 with *why. */
int mt_outfile_finish(int fd, const char *tmp, const char *path, const char **why);

/* Closes the file (unless fd is -1 already) and renames it to its path.
 * 0, or -1 with *why (the temporary file is then removed). Frees o's
 * names either way. */
int mt_outfile_commit(mt_outfile *o, const char **why);

/* Gives up: closes and removes the temporary file, frees o's names. */
void mt_outfile_abort(mt_outfile *o);

/* mt_outfile_open as a stdio stream, mode 0666 less the umask; "-" is
 * stdout. NULL with *why. */
FILE *mt_outfile_fopen(mt_outfile *o, const char *path, const char **why);

/* Closes f (stdout: flushes it) and commits o: 0, or -1 with *why (a write
 * error, the disk full: the temporary file is removed). failed: the caller
 * could not write it all; the temporary file is removed, -1. */
int mt_outfile_fclose(mt_outfile *o, FILE *f, int failed, const char **why);

/* Opens a file that goes with the trace at trace (TRACE.rss, TRACE.mtidx)
 * for reading: never through a symbolic link, never blocking (a FIFO is
 * refused, not waited on), only a regular file that belongs to the trace's
 * owner or to the caller and that no one else may write (group and others
 * have no write permission). The descriptor (blocking, close-on-exec), or
 * -1 with *why; errno is ENOENT when there is no such file (callers skip
 * that silently). */
int mt_sidecar_open(const char *path, const char *trace, const char **why);

#endif
