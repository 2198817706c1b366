/*
 * profile_read.h - a pprof profile (profile.proto, gzipped or not) decoded
 * into flat tables: what profile.c turns into a folded model. Internal to
 * lib/analyze (it needs zlib, which the codec in lib/trace, linked into
 * the recorder, does not take).
 *
 * Every index the tables hold was checked when decoding: string indexes
 * are within str, sample location ids name a location, line function ids
 * name a function (or are 0: no function). Memory is bounded by the input:
 * at most MTP_MAX_BYTES of (inflated) protobuf, and each table entry comes
 * from at least one byte of it; and by what a profile can mean: a stack
 * repeated by many samples is kept once, a sample's stack holds at most
 * MTP_MAX_DEPTH locations and the distinct stacks MTP_MAX_REFS together.
 */
#ifndef MTA_PROFILE_READ_H
#define MTA_PROFILE_READ_H

#include <stddef.h>
#include <stdint.h>

/* The most bytes a profile may hold once inflated: a bigger one (or a
 * gzip bomb) is refused. */
#define MTP_MAX_BYTES ((size_t)64 << 20)
/* The most locations in one sample's stack: far deeper than any profiler
 * writes (Go keeps 128 frames at most, memtrace's recorder 1024). */
#define MTP_MAX_DEPTH 4096
/* The most values in one sample (one per sample type: a memory profile
 * has four). */
#define MTP_MAX_VALUES 256
/* The most location references the distinct stacks hold together (a
 * stack that samples repeat counts once): a few hundred thousand deep
 * stacks, the memory of the decoded tables below 100 MiB. */
#define MTP_MAX_REFS ((size_t)1 << 22)
/* The most frames the distinct stacks may hold together (locations times
 * their lines), which bounds the trie's nodes: a small profile whose
 * samples repeat a location of many lines would otherwise make a trie far
 * bigger than itself. */
#define MTP_MAX_FRAMES(bytes) ((uint64_t)(bytes) * 4 + ((uint64_t)1 << 20) < ((uint64_t)1 << 22) \
                                   ? (uint64_t)(bytes) * 4 + ((uint64_t)1 << 20) : ((uint64_t)1 << 22))
/* The most nodes the stacks' trie may take (its memory about 140 bytes a
 * node): stacks that share their outer frames share nodes, as real ones
 * do; distinct deep stacks from their root would pass it. */
#define MTP_MAX_NODES ((size_t)1 << 21)

typedef struct mtp_vtype { uint64_t type, unit; } mtp_vtype;          /* string indexes */
typedef struct mtp_line { uint64_t func; int64_t line; } mtp_line;     /* func: index + 1, 0 none */
typedef struct mtp_loc {
    uint64_t id, address;
    uint64_t mapping;        /* index + 1 into maps, 0: none */
    size_t line0, n_lines;   /* lines[line0 ..], innermost first */
} mtp_loc;
typedef struct mtp_func { uint64_t id, name, system_name, filename; } mtp_func;
typedef struct mtp_map { uint64_t id, filename; } mtp_map;
typedef struct mtp_sample {
    uint32_t loc0, n_locs;   /* loc_idx[loc0 ..]: leaf first; samples with the same
                              * stack share one loc0 */
    uint32_t val0, n_vals;   /* values[val0 ..] (4 bytes each: MTP_MAX_BYTES bounds them) */
} mtp_sample;

typedef struct mt_profile {
    char **str;              /* the string table, NUL-terminated copies */
    size_t n_str;
    mtp_vtype *types;        /* sample_type */
    size_t n_types;
    mtp_sample *samples;
    size_t n_samples;
    uint32_t *loc_idx;       /* indexes into locs, per sample */
    size_t n_loc_idx;
    int64_t *values;
    size_t n_values;
    mtp_loc *locs;
    size_t n_locs;
    mtp_line *lines;
    size_t n_lines;
    mtp_func *funcs;
    size_t n_funcs;
    mtp_map *maps;
    size_t n_maps;
    uint64_t *comments;      /* string indexes */
    size_t n_comments;
    mtp_vtype period_type;   /* {0, 0}: none */
    int64_t period;          /* 0: not stated */
    int64_t time_nanos, duration_nanos;
    uint64_t default_type;   /* string index, 0: none */
    int gzipped;
    size_t bytes;            /* of protobuf (inflated) */
    /* private */
    char *arena;
} mt_profile;

/* Does the file look like a pprof profile (gzip data, or protobuf whose
 * first field fits profile.proto) rather than a trace? 1 yes, 0 no (or
 * unreadable: the trace reader then says why). */
int mtp_sniff(const char *path);
/* Same for bytes in memory (the first few are enough). */
int mtp_sniff_bytes(const uint8_t *p, size_t n);
/* Decodes a profile. On failure NULL and *err a malloc'd "offset N: why"
 * (NULL when out of memory). */
mt_profile *mtp_decode(const uint8_t *data, size_t len, char **err);
/* Reads and decodes the file; *err is "PATH: ...". */
mt_profile *mtp_read(const char *path, char **err);
void mtp_free(mt_profile *p);

#endif
