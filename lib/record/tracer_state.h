/*
 * tracer_state.h - what the tracer's files share (tracer.c: start, stop and
 * the process's life; tracer_write.c: the writer thread; tracer_file.c:
 * the trace's files, pieces and rotation; tracer_sample.c: the sampler's
 * callbacks on the program's threads): the one state, mtr_tr, and the
 * functions one file gives another. Internal to those files.
 *
 * mtr_tr.wlock is held by whoever writes: the writer thread's turns, a
 * start, a stop, a flush before exec, a scan. state, thread_alive and
 * epoch are also read without it (atomics) by the callbacks.
 */
#ifndef MT_RECORD_TRACER_STATE_H
#define MT_RECORD_TRACER_STATE_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "memtrace/record.h"
#include "memtrace/trace.h"
#include "modules.h"
#include "queue.h"
#include "recconf.h"
#include "thread.h"
#include "tracer.h"

#define MAX_FRAMES MT_RECCONF_DEPTH_MAX

/* The frame that ends (outermost) a stack cut at the depth limit: a code no
 * return address can have, resolved to the location "[truncated]". */
#define TRUNCATED_CODE ((uintptr_t)MT_CODE_TRUNCATED)

enum { IDLE, ACTIVE, CHILD_PENDING, CLOSING };

struct mtr_tracer {
    int state;
    pid_t pid;                  /* process the open trace belongs to */
    char base[PATH_MAX - 64];   /* FILE as the user gave it */
    char path[PATH_MAX];        /* the file this process writes */
    char stem[PATH_MAX - 32];   /* path without rotation's piece suffix */
    double rate;
    size_t depth;
    int follow;
    int flush_ms;
    int rss_ms;                 /* resident-memory interval (rss.h); -1: none, 0: default */
    char *context;              /* NULL: the command line */
    int64_t start_us;           /* when this process's recording started */
    int fd;
    int64_t off;                /* bytes written to fd */
    int64_t tail_off;           /* offset of a time-only last packet, or -1 */
    dev_t fd_dev;               /* what fd must still be before each write */
    ino_t fd_ino;
    mt_writer *w;
    mtr_modules *modules;
    int thread_alive;
    int writer_failed;
    int64_t last_flush_ms;
    int dirty;
    uint64_t bt[MAX_FRAMES + 1];   /* + the [truncated] frame */
    pthread_mutex_t wlock;      /* whoever holds it owns w, fd, sym */
    int atexit_done;
    int leaks;                  /* MEMTRACE_LEAKS: the leak scan at exit (leaks.h) */
    unsigned epoch;             /* recordings opened by this process, mod 2^16 */
    unsigned writer_epoch;      /* the recording the running writer thread serves */
    int fd_regular;             /* fd is a regular file (not /dev/null) */
    /* Rotation (MEMTRACE_ROTATE_SIZE, _TIME, MEMTRACE_KEEP); 0: off */
    int64_t rot_size;           /* bytes per piece, after its carried blocks */
    int64_t rot_ms;             /* milliseconds per piece */
    unsigned keep;              /* pieces kept (0: all) */
    unsigned piece;             /* number of the piece being written, from 1 */
    int64_t piece_ms;           /* when it started (monotonic) */
    int64_t piece_off0;         /* its size after its carried blocks */
    int delete_warned;
    int excl;                   /* every piece of stem is created exclusively */
    int excl_next;              /* the next start's FILE too (control.c's FILE-NNNN) */
    int attached;               /* mtr_tracer_set_attached */
};
extern struct mtr_tracer mtr_tr MT_HIDDEN;

static inline int64_t mtr_tr_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The clock of event times (queue.c): µs since the epoch. */
static inline int64_t mtr_tr_wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline int mtr_tr_rotating(void)
{
    return mtr_tr.rot_size || mtr_tr.rot_ms;
}

/* The allocation source written for a record: malloc blocks are External,
 * as in every C trace; anonymous mappings are Major (docs/format.md,
 * "Allocation sources in C traces"). */
static inline mt_source mtr_tr_source(int rec_source)
{
    return rec_source == MT_REC_SOURCE_MMAP ? MT_SOURCE_MAJOR : MT_SOURCE_EXTERNAL;
}

/* tracer.c: one line on stderr, "memtrace: ...", if fd 2 is still what it
 * was at start-up. */
MT_HIDDEN void mtr_tr_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* tracer_write.c: */
/* The trace writer's mt_write_fn: write(2), after checking that the
 * descriptor still refers to the trace. */
MT_HIDDEN int mtr_tr_write_trace(void *ctx, const void *buf, size_t len);
/* wlock held: */
/* mt_queue_drain's callback: one queued record into the trace. */
MT_HIDDEN void mtr_tr_put_record(void *ctx, const struct mtr_rec *r);
/* The current packet out with the end time raised to now (end: marked as
 * the end of the recording). */
MT_HIDDEN void mtr_tr_write_until(int end);
/* Drain the queue, flush if due (or force), rotate at the piece's bound. */
MT_HIDDEN void mtr_tr_pump(int force);
/* The writer failed: said once, sampling stops, the program goes on. */
MT_HIDDEN void mtr_tr_writer_failed(void);
/* The writer thread of this recording: 0 or -1. */
MT_HIDDEN int mtr_tr_start_thread(void);

/* tracer_file.c: */
/* Open this process's file, write the header, start the writer thread
 * (first: the first process of the tree, which writes FILE itself). wlock
 * held. 0; -1 (message given); -2 when FILE must be new and is taken. */
MT_HIDDEN int mtr_tr_open_trace(int first);
/* End the current piece and start the next (rotation). wlock held. */
MT_HIDDEN void mtr_tr_rotate(void);
/* The command line, arguments joined by spaces, into buf (cap > 0). */
MT_HIDDEN void mtr_tr_read_cmdline(char *buf, size_t cap);
/* The command line as executed, read by the constructor before main. */
extern char mtr_tr_exec_cmdline[4096] MT_HIDDEN;

/* tracer_sample.c: the sampler's callbacks (mt_tracker), on the program's
 * threads with sampling disabled. */
MT_HIDDEN void *mtr_tr_on_alloc(void *ctx, const mt_allocation *a);
MT_HIDDEN void mtr_tr_on_free(void *ctx, void *token);

#endif
