/*
 * memtrace/record.h - the recorder: statistical sampling of malloc inside a
 * running C or C++ program, and the tracer that writes memtrace traces.
 *
 * Two layers, as in OCaml:
 *
 *  1. The sampler (the C counterpart of OCaml's Gc.Memprof). Every
 *     allocated byte is sampled with probability `rate`, independently of
 *     the others (mean interval 1/rate bytes; a block of s bytes holds
 *     Binomial(s, rate) sample points; at rate 1 every byte). A sampled
 *     block is reported to the tracker's alloc callback with n_samples (the
 *     number of sample points that fell in it, >= 1), its requested size and
 *     its call stack; if the callback returns a non-NULL token the block is
 *     tracked and the free callback receives that token when the block is
 *     freed (or reallocated). Sampling is disabled on a thread while one of
 *     its callbacks runs, so callbacks may allocate freely.
 *
 *  2. The tracer: a tracker that writes a memtrace trace (format v2,
 *     word_size 8 so lengths are bytes, source External) from a background
 *     thread, describing return addresses as raw module-relative frames
 *     ("module+0xoffset") off the allocation path; `memtrace symbolize`
 *     (<memtrace/symbolize.h>) names them later, outside the process.
 *
 * Everything here lives in libmemtrace.so / libmemtrace.a. The library
 * replaces malloc, calloc, realloc, reallocarray, free, posix_memalign,
 * aligned_alloc, memalign, valloc, pvalloc, free_sized and
 * free_aligned_sized (and C++'s operator new/delete, which it routes to
 * them; malloc_usable_size stays the allocator's), and samples the
 * program's own anonymous mmap/munmap/mremap on the same byte count. docs/recorder.md
 * explains how to start it and what it covers.
 *
 * Units: sizes and rates are in bytes (a rate is a probability per byte);
 * call stacks are return addresses.
 * Lifetimes: an mt_allocation and its call stack are valid during the
 * alloc callback only; a token is the tracker's until its free callback.
 * Thread safety: mt_memprof_start, _stop and _running may be called from
 * any thread (they are serialized); the callbacks run on the program's
 * allocating threads, concurrently. memtrace_start_tracing and
 * memtrace_stop_tracing are called from one thread at a time (the
 * program's other threads may go on allocating meanwhile).
 *
 * Stability: everything here is stable (no experimental part yet; one
 * would be left out by defining MEMTRACE_STABLE_ONLY, as in trace.h).
 */
#ifndef MEMTRACE_RECORD_H
#define MEMTRACE_RECORD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Sampler                                                                   */

/* Which entry point made a sampled block. */
typedef enum mt_alloc_kind {
    MT_ALLOC_MALLOC = 0,
    MT_ALLOC_CALLOC = 1,
    MT_ALLOC_REALLOC = 2,   /* the new block of a realloc/reallocarray */
    MT_ALLOC_ALIGNED = 3,   /* posix_memalign, aligned_alloc, memalign, valloc, pvalloc */
    MT_ALLOC_MMAP = 4,      /* bytes of an anonymous mmap made by the program (not by malloc) */
    MT_ALLOC_MREMAP = 5     /* bytes an mremap added to an anonymous mapping */
} mt_alloc_kind;

/* What the alloc callback learns about a sampled block. Valid only during
 * the callback. */
typedef struct mt_allocation {
    uint64_t n_samples;             /* sample points that fell in the block, >= 1 */
    size_t size;                    /* requested bytes (n*m for calloc) */
    mt_alloc_kind kind;
    void *ptr;                      /* the block handed to the program; for MT_ALLOC_MMAP and
                                       MT_ALLOC_MREMAP the sampled byte (each sample point of a
                                       mapping is reported on its own, n_samples 1, size the
                                       mapping's length) */
    const uintptr_t *callstack;     /* return addresses, innermost first */
    size_t callstack_length;
    int callstack_truncated;        /* nonzero if the stack was deeper than allowed */
} mt_allocation;

/* Callbacks. alloc returns a token to keep tracking the block (passed to
 * free later) or NULL to stop tracking it. Both run on the allocating /
 * freeing thread with sampling disabled for that thread; with several
 * threads they may run concurrently and must be thread-safe. They must not
 * longjmp out or exit the thread. */
typedef struct mt_tracker {
    void *(*alloc)(void *ctx, const mt_allocation *a);
    void (*free)(void *ctx, void *token);
    void *ctx;
} mt_tracker;

/* Start sampling with `rate` (probability per byte, 0 < rate <= 1) and at
 * most `callstack_size` frames per stack (0 = default, 128; capped at 1024).
 * Returns 0, or -1 if sampling is already active or the rate or the
 * tracker is invalid. */
int mt_memprof_start(double rate, size_t callstack_size, const mt_tracker *tracker);

/* Stop sampling. Blocks tracked so far are forgotten: their free callback
 * is never called. Returns 0, or -1 if sampling was not active. */
int mt_memprof_stop(void);

/* Nonzero while sampling is active. */
int mt_memprof_running(void);

/* The cost of telling sampled blocks apart on free(), since the process
 * started: *lookups = frees (and reallocs) that searched the table of
 * sampled blocks because the filter could not rule them out; *found = those
 * that were a sampled block. lookups - found are the filter's false
 * positives (neighbours of a sampled block). Racy snapshot; any thread. */
void mt_memprof_free_stats(uint64_t *lookups, uint64_t *found);

/* Frees (and reallocs) since the process started that found their
 * granule's bit set in the filter in front of the table (a bit per 1 KiB): the lookups above and the
 * neighbours of sampled blocks that their line's bit turned away. Each
 * thread counts its own and adds them in at its next table lookup and at
 * its call of this function: the calling thread's count is whole, another
 * thread's as of its last lookup or call (a thread that calls it last
 * thing has its count whole). Racy snapshot; any thread. */
uint64_t mt_memprof_free_marked(void);

/* ------------------------------------------------------------------------ */
/* Tracer                                                                    */

/* Default sampling rate: one sample point per 512 KiB on average. */
#define MEMTRACE_DEFAULT_RATE (1.0 / 524288.0)

/* If the environment variable MEMTRACE names a file, start tracing into it
 * with rate MEMTRACE_RATE (probability per byte; default
 * MEMTRACE_DEFAULT_RATE). Returns 1 if tracing started, 0 if not requested,
 * -1 on error (a message is printed on stderr). libmemtrace.so calls this
 * itself when it is preloaded. */
int memtrace_trace_if_requested(void);

/* Trace into `filename` with the given rate (probability per byte; <= 0
 * means the default). context (may be NULL: the command line is used) is
 * stored in the trace's header. Returns 0, or -1 with a message on stderr
 * (tracing already active, file cannot be created, bad rate). */
int memtrace_start_tracing(const char *filename, double rate, const char *context);

/* Stop sampling, write out everything and close the trace. Returns 0, or -1
 * if no trace was active or writing failed. Called automatically at exit. */
int memtrace_stop_tracing(void);

#ifdef __cplusplus
}
#endif
#endif
