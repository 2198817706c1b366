/*
 * tracer_file.c - the files of the tracer (tracer_state.h): a process's
 * trace opened safely (FILE for the first process, FILE.PID for the
 * others, never through a link, never another user's file), each piece's
 * trace info (executable, host, command line), and rotation: one piece
 * ended, the next begun with the blocks still live, the piece KEEP back
 * deleted. The names come from runfiles.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <sys/auxv.h>

#include "carry.h"
#include "highfd.h"
#include "ownheap.h"
#include "../trace/alloc.h"
#include "rss.h"
#include "runfiles.h"
#include "sampler.h"
#include "tracer_state.h"

#define TRACE_MODE 0600

/* The writer's location resolver. */
static int resolve(void *ctx, mt_location_code code, const mt_location **locs, size_t *n)
{
    (void)ctx;
    static const mt_location truncated = { "", "[truncated]", 0, 0, 0 };
    if (code == TRUNCATED_CODE) {
        *locs = &truncated;
        *n = 1;
        return 0;
    }
    if (!mtr_tr.modules)
        mtr_tr.modules = mtr_modules_new();
    return mtr_modules_resolve(mtr_tr.modules, code, locs, n);
}

/* ---------------------------------------------------------------------- */
/* Starting and stopping                                                   */

/* The command line, arguments joined by spaces, into buf (cap > 0). */
void mtr_tr_read_cmdline(char *buf, size_t cap)
{
    size_t len = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n;
        while (len < cap - 1 && (n = read(fd, buf + len, cap - 1 - len)) > 0)
            len += (size_t)n;
        close(fd);
    }
    while (len > 0 && buf[len - 1] == '\0')
        len--;
    for (size_t i = 0; i < len; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[len] = '\0';
}

/* The command line as executed, read by the constructor before main: a
 * program that rewrites its argv later (a process title, "postgres:
 * startup") and the children it forks (which keep this copy) are named by
 * the command that started them, not by the title at their first sample. */
char mtr_tr_exec_cmdline[4096];

/* The executable's name for the trace: the path the program was started
 * by (AT_EXECFN: /usr/bin/redis-server), which /proc/self/exe would give
 * with its symbolic links resolved (/usr/bin/redis-check-rdb); made
 * absolute. /proc/self/exe when that path is not the running binary (a
 * script started through its #! line, a path gone or changed since). */
static void executable_name(char *out, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    out[n > 0 ? n : 0] = '\0';
    const char *fn = (const char *)getauxval(AT_EXECFN);
    struct stat a, b;
    if (!fn || !*fn || stat(fn, &a) != 0 || stat("/proc/self/exe", &b) != 0 ||
        a.st_dev != b.st_dev || a.st_ino != b.st_ino)
        return;
    char cwd[PATH_MAX], abs[2 * PATH_MAX];
    int k = -1;
    if (fn[0] == '/')
        k = snprintf(abs, sizeof abs, "%s", fn);
    else if (getcwd(cwd, sizeof cwd)) {
        while (fn[0] == '.' && fn[1] == '/')
            fn += 2;
        k = snprintf(abs, sizeof abs, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", fn);
    }
    if (k > 0 && (size_t)k < cap)
        memcpy(out, abs, (size_t)k + 1);
}

/* Move fd out of the way of descriptors the program may dup2 onto. */
static int high_fd(int fd)
{
    return mtr_high_fd(fd);
}

/* Opens FILE for the first process: never through a symbolic link (a
 * link planted at the path cannot redirect the trace onto another file),
 * never a FIFO (it would block) or someone else's file; an existing
 * regular file of ours is truncated; a character device (/dev/null) is
 * written as is. Returns the descriptor, or -1 with *why set. */
static int open_first(const char *path, const char **why)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, TRACE_MODE);
    if (fd < 0) {
        *why = errno == ELOOP ? "is a symbolic link (not followed)"
             : errno == ENXIO ? "is a FIFO or socket" : strerror(errno);
        return -1;
    }
    struct stat st;
    *why = NULL;
    if (fstat(fd, &st) != 0)
        *why = strerror(errno);
    else if (S_ISREG(st.st_mode) && st.st_uid != geteuid())
        *why = "belongs to another user";
    else if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
        *why = "is not a regular file";
    else if (S_ISREG(st.st_mode) && ftruncate(fd, 0) != 0)
        *why = strerror(errno);
    else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
        *why = strerror(errno);
    if (*why) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Creates path, which must not exist (O_EXCL: never an existing file,
 * never through a link): the files of a child (FILE.<pid>), of a recording
 * started on request (FILE-NNNN) and every piece of them. -1 with *why;
 * errno EEXIST when the name is taken. */
static int open_new(const char *path, const char **why)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, TRACE_MODE);
    if (fd < 0) {
        int e = errno;
        *why = e == EEXIST ? "exists already (an earlier process's or run's: not overwritten)"
                           : strerror(e);
        errno = e;
    }
    return fd;
}

/* The name of piece k of this process's trace: the stem itself without
 * rotation, else STEM.partNNNN (docs/recorder.md, "Long runs: rotation"). */
static void piece_path(char *out, size_t cap, unsigned k)
{
    mt_runname n = { .piece = mtr_tr.rot_size || mtr_tr.rot_ms ? k : 0 };
    mt_runname_make(out, cap, mtr_tr.stem, &n);
}

/* Takes fd as the current piece's file and writes its trace info (start:
 * the time it covers from). The writer thread is not started here. wlock
 * held. Returns 0 or -1 (message given, fd closed). */
static int begin_piece(int fd, int64_t start)
{
    fd = high_fd(fd);
    struct stat st;
    fstat(fd, &st);
    mtr_tr.fd = fd;
    mtr_tr.fd_dev = st.st_dev;
    mtr_tr.fd_ino = st.st_ino;
    mtr_tr.off = 0;
    mtr_tr.tail_off = -1;
    mtr_tr.fd_regular = S_ISREG(st.st_mode);

    char exe[PATH_MAX], host[256];
    executable_name(exe, sizeof exe);
    if (gethostname(host, sizeof host) != 0)
        host[0] = '\0';
    host[sizeof host - 1] = '\0';
    char now[sizeof mtr_tr_exec_cmdline];
    if (!mtr_tr.context && !mtr_tr_exec_cmdline[0])
        mtr_tr_read_cmdline(now, sizeof now);   /* (started without the constructor's copy) */
    mt_trace_info info;
    memset(&info, 0, sizeof info);
    info.version = 2;
    info.sample_rate = mtr_tr.rate;
    info.word_size = 8;
    info.executable_name = exe;
    info.host_name = host;
    info.ocaml_runtime_params = mtr_tr.attached ? MT_INFO_ATTACHED : "";
    info.pid = (uint64_t)mtr_tr.pid;
    info.start_time = start;
    info.context = mtr_tr.context ? mtr_tr.context : mtr_tr_exec_cmdline[0] ? mtr_tr_exec_cmdline : now;

    mt_writer_options opts;
    memset(&opts, 0, sizeof opts);
    opts.version = 2;
    opts.resolve = resolve;     /* module table created by the writer thread */
    opts.write = mtr_tr_write_trace;
    char *err = NULL;
    mtr_tr.writer_failed = 0;
    mtr_tr.dirty = 0;
    mtr_tr.last_flush_ms = mtr_tr_mono_ms();
    mtr_tr.w = mt_writer_open_in(&mtr_heap_codec, fd, &info, &opts, &err);
    if (!mtr_tr.w) {
        mtr_tr_message("%s: %s", mtr_tr.path, err ? err : "cannot write trace");
        mtr_heap_free(err);
        close(fd);
        mtr_tr.fd = -1;
        return -1;
    }
    mtr_tr.piece_ms = mtr_tr_mono_ms();
    mtr_tr.piece_off0 = mtr_tr.off;
    return 0;
}

/* attach.c: this recording was started in a running process (format.md). */
void mtr_tracer_set_attached(int on)
{
    __atomic_store_n(&mtr_tr.attached, on, __ATOMIC_RELAXED);   /* the writer thread reads it */
}

/* Open this process's file, write the header, start the writer thread.
 * first: this is the first process of the tree (writes FILE itself).
 * wlock held (or single-threaded start). Returns 0 or -1 (message given),
 * or -2 when the first process's file must be new (mtr_tr.excl_next) and its
 * name is taken (no message: control.c moves on to the next number). */
int mtr_tr_open_trace(int first)
{
    int fd = -1;
    pid_t pid = getpid();
    const char *why = NULL;
    mtr_carry_reset();   /* (a forked child's copy of its parent's blocks) */
    mtr_tr.piece = 1;
    if (first) {
        snprintf(mtr_tr.stem, sizeof mtr_tr.stem, "%s", mtr_tr.base);
        piece_path(mtr_tr.path, sizeof mtr_tr.path, mtr_tr.piece);
        mtr_tr.excl = mtr_tr.excl_next;
        fd = mtr_tr.excl ? open_new(mtr_tr.path, &why) : open_first(mtr_tr.path, &why);
        if (fd < 0 && mtr_tr.excl && errno == EEXIST)
            return -2;
    } else {
        /* O_EXCL: never an existing file, never through a link; so are
         * the later pieces (rotate), so a reused pid never overwrites an
         * earlier process's pieces. */
        mtr_tr.excl = 1;
        for (int k = 0; k < 100 && fd < 0; k++) {
            mt_runname n = { .pid = pid, .again = (unsigned)k };
            mt_runname_make(mtr_tr.stem, sizeof mtr_tr.stem, mtr_tr.base, &n);
            piece_path(mtr_tr.path, sizeof mtr_tr.path, mtr_tr.piece);
            fd = open_new(mtr_tr.path, &why);
            if (fd < 0 && errno != EEXIST)
                break;
        }
    }
    if (fd < 0) {
        mtr_tr_message("%s: cannot create trace: %s", mtr_tr.path, why);
        return -1;
    }
    /* mtr_tr.modules: kept from an earlier recording of this process (on/off
     * control), created by the writer thread otherwise. */
    mtr_tr.pid = pid;
    mtr_queue_reset();
    /* The first piece starts with the process, not its first sample. */
    if (begin_piece(fd, mtr_tr.start_us) != 0)
        return -1;
    __atomic_store_n(&mtr_tr.epoch, mtr_tr.epoch + 1, __ATOMIC_RELAXED);
    /* Beside a regular file only (not beside /dev/null). */
    mtr_rss_open(mtr_tr.path, pid, mtr_tr.start_us, mtr_tr.fd_regular ? mtr_tr.rss_ms : 0);
    __atomic_store_n(&mtr_tr.state, ACTIVE, __ATOMIC_RELEASE);
    if (mtr_tr_start_thread() != 0) {
        mtr_tr_message("%s: cannot start the writer thread; tracing stopped", mtr_tr.path);
        __atomic_store_n(&mtr_tr.state, IDLE, __ATOMIC_RELEASE);
        mt_writer_close(mtr_tr.w);
        mtr_tr.w = NULL;
        close(mtr_tr.fd);
        mtr_tr.fd = -1;
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Rotation (docs/recorder.md, "Long runs: rotation")                      */

/* Writes a live block at the start of the new piece (mtr_carry_each). */
static int carry_one(void *ctx, struct mtr_carried *c)
{
    int64_t now = *(const int64_t *)ctx;
    mt_obj_id id;
    if (mt_writer_put_alloc(mtr_tr.w, now, c->size, c->n_samples, mtr_tr_source(c->source),
                            c->frames, c->nframes, &id) != 0)
        return 1;
    c->piece_id = id;
    return 0;
}

/* The next piece could not be started: say so once, stop sampling; the
 * pieces written so far are complete. wlock held. */
static void rotation_failed(const char *why)
{
    mtr_tr_message("%s: cannot start this piece of the trace: %s; tracing stopped (the earlier "
            "pieces are complete)", mtr_tr.path, why);
    mtr_tr.writer_failed = 1;
    mt_memprof_stop();
    mtr_tr.state = IDLE;
    if (mtr_tr.w) {
        mt_writer_close(mtr_tr.w);
        mtr_tr.w = NULL;
    }
    if (mtr_tr.fd >= 0)
        close(mtr_tr.fd);
    mtr_tr.fd = -1;
    mtr_carry_reset();
}

/* MEMTRACE_KEEP: the piece that falls out of the window goes, with its
 * .rss. A failure is said once; tracing goes on. */
static void drop_old_piece(void)
{
    if (!mtr_tr.keep || mtr_tr.piece <= mtr_tr.keep)
        return;
    char old[PATH_MAX + 8];
    piece_path(old, sizeof old, mtr_tr.piece - mtr_tr.keep);
    if (unlink(old) != 0 && errno != ENOENT && !mtr_tr.delete_warned) {
        mtr_tr.delete_warned = 1;
        mtr_tr_message("%s: cannot delete this old piece: %s; tracing goes on, but old pieces are "
                "no longer deleted reliably", old, strerror(errno));
    }
    mt_runname rss = { .piece = mtr_tr.piece - mtr_tr.keep, .kind = MT_RUNFILE_RSS };
    if (mt_runname_make(old, sizeof old, mtr_tr.stem, &rss) >= 0)
        unlink(old);
}

/* Ends the current piece (complete, with the end mark) and starts the next:
 * its trace info, then every sampled block still live, written again as
 * carried allocations at the piece's start time with their stacks and
 * sample counts, in packets marked as such. Runs in the writer thread (or
 * whoever pumps the queue), wlock held: never in an allocation. */
void mtr_tr_rotate(void)
{
    mtr_tr_write_until(1);
    if (mtr_tr.writer_failed)
        return;
    int rc = mt_writer_close(mtr_tr.w);
    mtr_tr.w = NULL;
    int old = mtr_tr.fd;
    mtr_tr.fd = -1;
    if (rc != 0) {
        close(old);
        rotation_failed("the previous piece could not be finished");
        return;
    }
    int64_t now = mtr_tr_wall_us();
    mtr_tr.piece++;
    piece_path(mtr_tr.path, sizeof mtr_tr.path, mtr_tr.piece);
    const char *why = NULL;
    int fd = mtr_tr.excl ? open_new(mtr_tr.path, &why) : open_first(mtr_tr.path, &why);
    /* The finished piece is closed once the next one is open: the process
     * has its trace open all through a rotation ('memtrace ctl --push'
     * follows the recording by the trace the process has open, and took
     * a moment without one for the recording's end). */
    close(old);
    if (fd < 0) {
        rotation_failed(why);
        return;
    }
    if (begin_piece(fd, now) != 0) {
        rotation_failed("cannot write its header");
        return;
    }
    int crc = mt_writer_set_carried(mtr_tr.w, 1);
    if (crc == 0)
        crc = mtr_carry_each(carry_one, &now);
    if (crc == 0)
        crc = mt_writer_set_carried(mtr_tr.w, 0);
    if (crc != 0) {
        if (crc < 0)
            rotation_failed("out of memory for the table of live blocks");
        else
            mtr_tr_writer_failed();
        return;
    }
    mtr_tr.piece_off0 = mtr_tr.off;
    mtr_tr.tail_off = -1;
    mtr_tr.dirty = 0;
    mtr_rss_open(mtr_tr.path, mtr_tr.pid, now, mtr_tr.fd_regular ? mtr_tr.rss_ms : 0);
    drop_old_piece();
}
