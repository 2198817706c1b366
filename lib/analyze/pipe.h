/*
 * pipe.h - the hand-off between two threads of a read: a small ring of
 * batches (mta_ring), each thread blocking (no spinning) when the ring is
 * full or empty. Its users: the two threads that build a folded model
 * (build.c, scan.c: mta_pipe, whose batches are events), where the reading
 * thread decodes events and finds their stacks (buildpipe.c) and the
 * folding thread meets them with the live blocks (buildfold.c); and the
 * sinks that run on a thread of their own (sinkthread.c: batches of
 * finished allocations). Internal to lib/analyze.
 */
#ifndef MTA_PIPE_H
#define MTA_PIPE_H

#include <pthread.h>

#include "memtrace/analyze.h"
#include "pool.h"

/* One event, as the folding thread needs it: an allocation with its
 * record's fields (its stack already a trie node), a promotion or a
 * collection, or a warning of the reader (MTA_PIPE_WARNING: id is its
 * index in the batch's warnings) to pass on in its place. */
#define MTA_PIPE_WARNING 3
typedef struct mta_pipe_ev {
    mt_timedelta time;
    uint64_t id;
    uint64_t size;
    uint64_t n_samples;
    uint32_t stack;
    uint8_t kind, source, domain;  /* domain: the index in the batch's domain_ids */
    uint8_t carried : 1, verdict : 2;
} mta_pipe_ev;
_Static_assert(sizeof(mta_pipe_ev) <= 40, "an event stays 40 bytes (MTA_PIPE_EVENTS)");

#define MTA_PIPE_EVENTS 2048     /* per batch: 80 KB */
#define MTA_PIPE_BATCHES 8       /* the folded model's ring (half: 4 wake a thread) */

/* How a batch ends the stream: not at all, at the trace's end, with the
 * reader's error (message), or with an error of the stacks' side (why). */
enum { MTA_PIPE_MORE, MTA_PIPE_END, MTA_PIPE_READ_ERROR, MTA_PIPE_ERROR };

typedef struct mta_batch {
    mta_pipe_ev ev[MTA_PIPE_EVENTS];
    size_t n;
    /* The trie nodes, frames and functions made since the previous
     * batch, to append to the model before the events (only when hooks
     * read the model while it is built: mta_pipe.defs). */
    MTA_VEC(mt_node) nodes;
    MTA_VEC(mt_frame) frames;
    MTA_VEC(mt_func) funcs;
    MTA_VEC(char *) warnings;    /* malloc'd; freed when the batch is reused */
    uint16_t domain_ids[MT_MAX_DOMAINS]; /* the reading side's domains (domains.h) */
    unsigned n_domains;
    uint64_t offset;             /* the reader's offset after the batch */
    int status;                  /* MTA_PIPE_* */
    const char *why;             /* MTA_PIPE_ERROR: a static string */
    char *message;               /* MTA_PIPE_READ_ERROR: malloc'd (or taken) */
} mta_batch;

/* The ring: n slots of slot_size bytes each, passed from a producer
 * thread to a consumer thread in order; a waiting thread wakes when half
 * of them are ready for it. The consumer may stop the producer (it
 * failed); the producer says which batch is the last. */
typedef struct mta_ring {
    pthread_mutex_t lock;
    pthread_cond_t filled, emptied;
    char *slots;                 /* n of slot_size bytes, zeroed at first */
    size_t slot_size;
    unsigned n, wake;            /* slots; a waiting thread wakes at this many */
    unsigned head;               /* the oldest full batch */
    unsigned n_full;             /* full batches, the one being consumed included */
    int stop;                    /* the consumer gave up */
    int taking_waits, putting_waits; /* that thread sleeps */
} mta_ring;

/* n slots (at least 2). 0, or -1 when out of memory. */
int mta_ring_init(mta_ring *r, unsigned n, size_t slot_size);
void mta_ring_destroy(mta_ring *r);
/* Slot i (0 .. n - 1), for setting up or freeing their contents. */
void *mta_ring_slot(mta_ring *r, unsigned i);
/* Producer: the slot to fill next (waiting for one), or NULL once stopped. */
void *mta_ring_free_slot(mta_ring *r);
/* Producer: hands the slot it filled over (last: nothing follows). */
void mta_ring_put(mta_ring *r, int last);
/* Consumer: the oldest full slot, waiting for it. */
void *mta_ring_take(mta_ring *r);
/* Consumer: done with the slot mta_ring_take gave. */
void mta_ring_release(mta_ring *r);
/* Consumer: the producer is to stop (mta_ring_free_slot then gives NULL). */
void mta_ring_stop(mta_ring *r);

/* The folded model's ring: the reading thread produces, the folding
 * thread consumes. */
typedef struct mta_pipe {
    mta_ring ring;               /* of mta_batch */
    int defs;                    /* send nodes, frames and functions */
} mta_pipe;

int mta_pipe_init(mta_pipe *p);
void mta_pipe_destroy(mta_pipe *p);
/* Reading thread: the batch to fill (emptied), or NULL once stopped. */
mta_batch *mta_pipe_free_batch(mta_pipe *p);
/* Reading thread: hands the batch it filled over (last: the stream's end). */
void mta_pipe_put(mta_pipe *p, int last);
/* Folding thread: the oldest full batch, waiting for it. */
mta_batch *mta_pipe_take(mta_pipe *p);
/* Folding thread: done with the batch mta_pipe_take gave. */
void mta_pipe_release(mta_pipe *p);
/* Folding thread: the reading thread is to stop (then join it). */
void mta_pipe_stop(mta_pipe *p);
/* Starts the reading thread with every signal blocked (the caller's
 * handlers run on the threads the caller knows); pthread_create's result. */
int mta_pipe_start(pthread_t *th, void *(*fn)(void *), void *arg);

#endif
