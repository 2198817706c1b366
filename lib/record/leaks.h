/*
 * leaks.h - the leak scan: which sampled blocks still live when the program
 * exits nothing reachable points into (MEMTRACE_LEAKS=1, `memtrace run
 * --leaks`; docs/leaks.md). It runs in the exit path, inside the process,
 * with the program's other threads stopped, and writes its verdicts to
 * TRACE.leaks beside the trace (docs/format.md, "Leak verdicts").
 *
 * The files: leaks.c (when, which blocks, the verdict file), leakptrace.c
 * and leakstop.c (stopping the other threads and saving their registers:
 * with ptrace from a helper process, else with signals), leakproc.c (the
 * mappings and threads, read from /proc without the program's allocator,
 * and the scan's own memory), leakscan.c (the marking). Nothing here calls
 * the program's allocator or takes a lock the program might hold.
 */
#ifndef MT_RECORD_LEAKS_H
#define MT_RECORD_LEAKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "thread.h"

#define MT_NO_ASAN __attribute__((no_sanitize("address")))

/* A thread of the recorder's own (writer, control) says so when it starts:
 * it is never stopped and its stack is not the program's. */
MT_HIDDEN void mtr_leaks_own_thread(void);
/* Around creating such a thread: +1 before pthread_create, -1 if it failed
 * (the thread itself takes its 1 back when it says it is ours). Until then
 * a new thread blocks every signal, as the recorder's do: the scan waits
 * for it to say whose it is. */
MT_HIDDEN void mtr_leaks_own_thread_coming(int delta);
MT_HIDDEN int mtr_lk_own_threads_coming(void);
/* fork: the child has none of its parent's threads. */
MT_HIDDEN void mtr_leaks_fork_child(void);
/* The scan, on the exiting thread (or the control thread, on request),
 * the trace's writer lock held: verdicts for the sampled blocks of the
 * recording `epoch` (the top bits of their tokens), written to
 * TRACE_PATH.leaks (replacing an earlier scan's). Never fails the program:
 * a scan that cannot be done says why on stderr and writes nothing (-1);
 * 0 once the verdicts are written. */
MT_HIDDEN int mtr_leaks_scan(const char *trace_path, int64_t pid, int64_t start_us,
                             uint64_t epoch);
/* Why the last scan wrote no verdicts, in one line without the trailing
 * "no leak verdicts"; "" after a scan that wrote them. */
MT_HIDDEN const char *mtr_leaks_why(void);
/* A scan gives no verdicts: why (printf-like), on stderr ("--leaks: WHY:
 * no leak verdicts") and for mtr_leaks_why. */
MT_HIDDEN void mtr_leaks_no_verdicts(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- between the leak files ---- */

/* Memory of the scan: raw mmap, remembered so that it is never a root. */
MT_HIDDEN void *mtr_lk_alloc(size_t len);
MT_HIDDEN void mtr_lk_free(void *p, size_t len);
/* Calls fn on each range of the scan's own memory. */
MT_HIDDEN void mtr_lk_own_ranges(void (*fn)(void *ctx, uintptr_t lo, uintptr_t hi), void *ctx);
/* The recorder's own threads: tids and an address on each one's stack. */
MT_HIDDEN size_t mtr_lk_own_threads(pid_t *tids, uintptr_t *stack_addrs, size_t cap);

/* A mapping of /proc/self/maps. */
enum { MTR_LK_PLAIN, MTR_LK_HEAP, MTR_LK_STACK, MTR_LK_SPECIAL, MTR_LK_DEVICE };
struct mtr_lk_map {
    uintptr_t lo, hi;
    unsigned char r, w, anon, kind;
};
struct mtr_lk_maps {
    struct mtr_lk_map *v;
    size_t n, bytes;
};
/* 0, or -1 (errno set). */
MT_HIDDEN int mtr_lk_maps_read(struct mtr_lk_maps *m);
MT_HIDDEN void mtr_lk_maps_free(struct mtr_lk_maps *m);
/* 1 if the process has a userfaultfd open (its pages are not safe to read). */
/* The value of the line "KEY" (with its colon: "SigBlk:") of a /proc
 * status file, blanks skipped, read into buf: 1 and *value, 0 when the
 * file has no such line, -1 when it cannot be read. */
/* A small /proc file into buf (NUL-terminated, at most cap - 1 bytes, one
 * read: allocation-free); its length, or -1. */
MT_HIDDEN ssize_t mtr_proc_read(const char *path, char *buf, size_t cap);
MT_HIDDEN int mtr_lk_status_field(const char *path, const char *key, char *buf, size_t cap,
                                  const char **value);
MT_HIDDEN int mtr_lk_has_userfaultfd(void);
/* The process's threads: up to cap tids. -1 if /proc/self/task is unreadable. */
MT_HIDDEN long mtr_lk_tasks(pid_t *tids, size_t cap);
/* The same from a directory such as /proc/PID/task. */
MT_HIDDEN long mtr_lk_tasks_of(const char *dir, pid_t *tids, size_t cap);

/* A stopped thread: its stack pointer, thread pointer and register words. */
#define MTR_LK_REGWORDS 1024
struct mtr_lk_thread {
    pid_t tid;
    int answered;
    uintptr_t sp, tp;
    size_t nwords;
    uint64_t words[MTR_LK_REGWORDS];
};
struct mtr_lk_threads {
    struct mtr_lk_thread *v;
    size_t n;
};
/* Stop every thread of the process but this one and the recorder's own:
 * with ptrace from a helper process (leakptrace.c), or, where ptrace is
 * not allowed, with a signal each (leakstop.c). 0; -1 if they could not
 * be stopped: why says why (whylen bytes), and every thread is running
 * again. */
MT_HIDDEN int mtr_lk_stop(struct mtr_lk_threads *t, char *why, size_t whylen);
MT_HIDDEN void mtr_lk_resume(struct mtr_lk_threads *t);
/* leakptrace.c: the threads stopped with ptrace, their registers in
 * slots[0, *n). 0; -1 with why (ptrace not allowed, ...): nothing stopped. */
MT_HIDDEN int mtr_lk_stop_ptrace(struct mtr_lk_thread *slots, size_t cap, size_t *n, char *why,
                                 size_t whylen);
MT_HIDDEN void mtr_lk_resume_ptrace(void);

/* A sampled block, and its verdict after the scan. */
enum { MTR_LK_UNKNOWN = 0, MTR_LK_LOST = 1, MTR_LK_REACHABLE = 2 };
struct mtr_lk_block {
    uintptr_t addr;
    uintptr_t end;        /* addr + its usable size (conservative mode) */
    uint64_t qid;         /* its id in the trace */
    uint64_t verdict;
};

struct mtr_lk_input {
    const struct mtr_lk_maps *maps;
    const struct mtr_lk_threads *threads;
    const uint64_t *self_words;    /* the scanning thread's registers */
    size_t self_nwords;
    uintptr_t self_sp, self_tp;
    const uintptr_t *excl;         /* [lo, hi) pairs never scanned (the recorder's own) */
    size_t nexcl;
    int glibc;                     /* the allocator is glibc's malloc */
};
struct mtr_lk_result {
    const char *mode;              /* "heap" (glibc's chunks walked) or "conservative" */
    size_t memory;                 /* bytes the scan mapped at most */
    uint64_t root_bytes, heap_bytes;
};
/* Mark, and set each block's verdict (blocks sorted by address). 0, or -1
 * out of memory (no verdicts). */
MT_HIDDEN int mtr_lk_mark(const struct mtr_lk_input *in, struct mtr_lk_block *b, size_t n,
                          struct mtr_lk_result *res);

/* Heapsort of n records of `words` words by their first word. */
MT_HIDDEN void mtr_lk_sort(uintptr_t *v, size_t n, size_t words);

#endif
