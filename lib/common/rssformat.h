/*
 * rssformat.h - the TRACE.rss format, written by the recorder
 * (lib/record/rss.c) and read by the analysis layer (lib/analyze/rss.c):
 * its header, its sample lines and its ledger lines, each formatted and
 * parsed here and nowhere else (docs/format.md, "Resident memory").
 *
 *   memtrace-rss VERSION PID START_US     (VERSION 1 or 2; 2 is written)
 *   TIME_US RSS HEAP MAPPED PEAK          (numbers or "-"; both versions)
 *   L TIME_US KEY=VALUE ...               (version 2: one ledger reading)
 *
 * The formatting side uses only snprintf into the caller's buffer: the
 * recorder calls it on its writer thread without touching the program's
 * heap.
 */
#ifndef MT_COMMON_RSSFORMAT_H
#define MT_COMMON_RSSFORMAT_H

#include <stddef.h>
#include <stdint.h>

#define MT_RSSF_VERSION 2
#define MT_RSSF_MAX_LINE 1024

/* One ledger reading: bytes (threads: a count; cost_us: µs), -1 when not
 * taken. What each is: docs/rss.md. */
typedef struct mt_rssf_ledger {
    int64_t time_us;     /* µs since the epoch */
    int64_t rss, pss, swap;          /* smaps totals */
    int64_t anon;        /* private anonymous and [heap], not stacks, not own */
    int64_t brk;         /* of which the [heap] segment */
    int64_t stack;       /* main and thread stacks */
    int64_t threads;     /* threads of the process */
    int64_t mod;         /* loaded modules' code and data (with their bss) */
    int64_t file;        /* other file-backed maps */
    int64_t shm;         /* shared memory: shared anonymous, /dev/shm, memfd, SysV */
    int64_t own;         /* the recorder's own anonymous memory, resident */
    int64_t a_inuse;     /* the allocator: bytes in blocks in use */
    int64_t a_free;      /* free but resident (an upper bound for glibc) */
    int64_t a_meta;      /* its metadata */
    int64_t a_retained;  /* mapped, not resident (not part of RSS) */
    int64_t a_commit;    /* committed: in use, free and metadata (mimalloc) */
    int64_t cost_us;     /* what taking this reading cost (wall µs) */
    char alloc[16];      /* "glibc", "jemalloc", "tcmalloc", "mimalloc" or "" */
} mt_rssf_ledger;

/* Every field at -1 (not taken), no allocator. */
void mt_rssf_ledger_clear(mt_rssf_ledger *l);

/* The header line (with its newline) into buf; its length, or -1. */
int mt_rssf_header(char *buf, size_t cap, long pid, long long start_us);
/* Reads a header line: version (1 or 2), pid, start. 0, or -1 with *why. */
int mt_rssf_parse_header(const char *line, int *version, unsigned long long *pid,
                         long long *start, const char **why);

/* A sample line (fields < 0 are written "-"); its length, or -1. */
int mt_rssf_sample(char *buf, size_t cap, long long time_us, long long rss, long long heap,
                   long long mapped, long long peak);
/* Reads a sample line's five fields into v (-1 for "-"); further fields
 * are ignored. 0, or -1 with *why. */
int mt_rssf_parse_sample(const char *line, int64_t v[5], const char **why);

/* A ledger line (fields < 0 left out); its length, or -1. */
int mt_rssf_ledger_line(char *buf, size_t cap, const mt_rssf_ledger *l);
/* 1 if line is a ledger line ("L "). */
int mt_rssf_is_ledger(const char *line);
/* Reads a ledger line; unknown keys are skipped (room for later ones).
 * 0, or -1 with *why. */
int mt_rssf_parse_ledger(const char *line, mt_rssf_ledger *l, const char **why);

#endif
