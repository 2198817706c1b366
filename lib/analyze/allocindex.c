/*
 * allocindex.c - the allocation index of a trace (see memtrace/stream.h):
 * every allocation of a folded read, in the order the read folded them,
 * with what a filter and the folded sums need of it (call-path node of the
 * unfiltered model's trie, times, size, samples, source). Folding the
 * index again with a filter gives the same model as reading the trace
 * again with that filter, without decoding the trace.
 *
 * File: a header of HDR_BYTES (below), then the records, each a flags byte
 * and LEB128 varints:
 *
 *   flags     bits 0-1 source, 2 carried, 3 never collected, 4 promoted,
 *             5-6 leak verdict (MT_VERDICT_*), 7 domain other than the first
 *   node      trie node of the allocation's stack
 *   seq       zigzag(seq - previous record's seq)
 *   t         collected: zigzag(collect - previous t), then collect - time;
 *             never collected: zigzag(time - previous t)
 *             (t: the previous record's collect, or time if never collected)
 *   size, n_samples
 *   promote   promoted only: zigzag(promote - time)
 *   domain    bit 7 only: the OCaml 5 domain's index in the model (mt_alloc.domain)
 *
 * Differences are taken modulo 2^64, so any times round-trip. About 10-14
 * bytes an allocation. The records are hashed in blocks of HASH_BLOCK
 * bytes; the header holds that hash, the counts and the identity of the
 * trace and of the model's trie, and a hash of itself. Nothing in an index
 * file is trusted: every node and count is checked as it is decoded, and a
 * fold from a file that does not end where and as its header says fails.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memtrace/stream.h"
#include "model.h"
#include "table.h"

#define HDR_BYTES 128
#define HASH_BLOCK ((size_t)1 << 20)   /* records hashed in blocks this big */
#define MAX_REC 80                     /* longest record: 1 + 7 varints of 10 bytes + 2 */
#define ID_SAMPLE ((size_t)1 << 16)    /* trace bytes hashed at each end */
static const char magic[8] = {'M', 'T', 'A', 'L', 'L', 'I', 'X', '\n'};

enum { F_CARRIED = 4, F_NEVER = 8, F_PROMOTED = 16, F_VERDICT_SHIFT = 5, F_DOMAIN = 128,
       F_KNOWN = 255 };

/* The header, as stored (native byte order: the magic's check word says
 * which one wrote it). */
struct header {
    char magic[8];
    uint32_t version, header_bytes;
    uint64_t order;                    /* ORDER_CHECK */
    uint64_t trace_size, trace_hash;
    int64_t trace_mtime_sec, trace_mtime_nsec;
    uint64_t n_records, n_allocs, n_nodes, trie_hash;
    uint64_t data_bytes, data_hash;
    uint64_t header_hash;              /* of every byte before it */
};
#define ORDER_CHECK 0x0102030405060708ULL
_Static_assert(sizeof(struct header) <= HDR_BYTES, "header fits");

/* ------------------------------------------------------------------ */
/* Hashes. Written here rather than taken from a library: the files last
 * across runs, so the function must never change with a library's version
 * or the process's seed (the engine's table hashes are seeded). */

#define mix mt_mix64

/* Four lanes over 8-byte words (independent multiplies: several bytes a
 * cycle), the tail zero-padded. */
static uint64_t hash_bytes(const void *p, size_t n, uint64_t seed)
{
    const unsigned char *s = p;
    uint64_t h[4] = {seed, seed ^ 0x9E3779B97F4A7C15ULL, seed + 1, seed - 1};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++) {
            uint64_t w;
            memcpy(&w, s + i + 8 * k, 8);
            h[k] = (h[k] ^ w) * 0x100000001b3ULL + (h[k] >> 29);
        }
    unsigned char tail[32] = {0};
    memcpy(tail, s + i, n - i);
    for (int k = 0; k < 4; k++) {
        uint64_t w;
        memcpy(&w, tail + 8 * k, 8);
        h[k] = (h[k] ^ w) * 0x100000001b3ULL + (h[k] >> 29);
    }
    return mix(h[0] ^ mix(h[1] ^ mix(h[2] ^ mix(h[3] ^ n))));
}

/* The data's hash: each HASH_BLOCK of it hashed, chained. */
static inline uint64_t chain(uint64_t h, const void *block, size_t n)
{
    return mix(h ^ hash_bytes(block, n, h));
}

int mt_alloc_index_trace_id(const char *trace, mt_alloc_index_id *id)
{
    memset(id, 0, sizeof *id);
    int fd = open(trace, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    unsigned char *buf = malloc(ID_SAMPLE);
    int rc = -1;
    if (buf && fstat(fd, &st) == 0) {
        id->size = (uint64_t)st.st_size;
        id->mtime_sec = st.st_mtim.tv_sec;
        id->mtime_nsec = st.st_mtim.tv_nsec;
        ssize_t a = pread(fd, buf, ID_SAMPLE, 0);
        uint64_t h = a >= 0 ? hash_bytes(buf, (size_t)a, id->size) : 0;
        off_t at = st.st_size > (off_t)ID_SAMPLE ? st.st_size - (off_t)ID_SAMPLE : 0;
        ssize_t b = a >= 0 ? pread(fd, buf, ID_SAMPLE, at) : -1;
        if (b >= 0) {
            id->hash = mix(h ^ hash_bytes(buf, (size_t)b, h));
            rc = 0;
        }
    }
    free(buf);
    close(fd);
    return rc;
}

/* The trie as numbered: an index is only good for the model whose node
 * numbers it holds. */
static uint64_t trie_hash(const mt_model *m)
{
    uint64_t h = mix(m->stacks.nodes.n ^ (m->stacks.frames.n << 32) ^ m->stacks.funcs.n);
    for (size_t i = 0; i < m->stacks.nodes.n; i++)
        h = mix(h ^ ((uint64_t)m->stacks.nodes.v[i].parent << 32 | m->stacks.nodes.v[i].frame)) + i;
    return h;
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */

struct mt_alloc_index_writer {
    int fd;
    unsigned char *buf;          /* HASH_BLOCK bytes: written when full */
    size_t fill;
    uint64_t data_bytes, data_hash, n;
    uint64_t prev_seq;
    mt_timedelta prev_t;
    int failed;                  /* a write failed: finish says so */
};

static inline unsigned char *put_var(unsigned char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}

static inline uint64_t zigzag(uint64_t d)
{
    return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

static inline uint64_t unzigzag(uint64_t z)
{
    return (z >> 1) ^ (uint64_t)-(int64_t)(z & 1);
}

static int write_all(int fd, const void *p, size_t n, off_t at)
{
    const char *s = p;
    while (n) {
        ssize_t w = pwrite(fd, s, n, at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
        at += w;
    }
    return 0;
}

static int flush_block(mt_alloc_index_writer *w)
{
    if (!w->fill)
        return 0;
    w->data_hash = chain(w->data_hash, w->buf, w->fill);
    if (!w->failed && write_all(w->fd, w->buf, w->fill, (off_t)(HDR_BYTES + w->data_bytes)) < 0)
        w->failed = 1;
    w->data_bytes += w->fill;
    w->fill = 0;
    return w->failed ? -1 : 0;
}

mt_alloc_index_writer *mt_alloc_index_writer_new(int fd)
{
    mt_alloc_index_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->buf = malloc(HASH_BLOCK))) {
        free(w);
        return NULL;
    }
    w->fd = fd;
    /* a zero header until the end: a file cut short has no magic */
    static const unsigned char zero[HDR_BYTES];
    if (write_all(fd, zero, sizeof zero, 0) < 0)
        w->failed = 1;
    return w;
}

int mt_alloc_index_writer_add(mt_alloc_index_writer *w, const mt_alloc *a, uint64_t seq)
{
    unsigned char rec[MAX_REC], *p = rec;
    int never = a->collect == MT_TIME_NEVER;
    int promoted = a->promote != MT_TIME_NEVER;
    *p++ = (unsigned char)((a->source & 3) | (a->carried ? F_CARRIED : 0) | (never ? F_NEVER : 0) |
                           (promoted ? F_PROMOTED : 0) | ((a->verdict & 3) << F_VERDICT_SHIFT) |
                           (a->domain ? F_DOMAIN : 0));
    p = put_var(p, a->stack);
    p = put_var(p, zigzag(seq - w->prev_seq));
    w->prev_seq = seq;
    if (never) {
        p = put_var(p, zigzag((uint64_t)a->time - (uint64_t)w->prev_t));
        w->prev_t = a->time;
    } else {
        p = put_var(p, zigzag((uint64_t)a->collect - (uint64_t)w->prev_t));
        p = put_var(p, (uint64_t)a->collect - (uint64_t)a->time);
        w->prev_t = a->collect;
    }
    p = put_var(p, a->size);
    p = put_var(p, a->n_samples);
    if (promoted)
        p = put_var(p, zigzag((uint64_t)a->promote - (uint64_t)a->time));
    if (a->domain)
        p = put_var(p, a->domain);
    size_t len = (size_t)(p - rec), room = HASH_BLOCK - w->fill;
    w->n++;
    if (len < room) {
        memcpy(w->buf + w->fill, rec, len);
        w->fill += len;
        return 0;
    }
    /* blocks are exactly HASH_BLOCK bytes, records straddle them */
    memcpy(w->buf + w->fill, rec, room);
    w->fill = HASH_BLOCK;
    int rc = flush_block(w);
    memcpy(w->buf, rec + room, len - room);
    w->fill = len - room;
    return rc;
}

static void header_hash(struct header *h)
{
    h->header_hash = hash_bytes(h, offsetof(struct header, header_hash), 0x6d74616c6c6978ULL);
}

int mt_alloc_index_writer_finish(mt_alloc_index_writer *w, const mt_model *m,
                                 const mt_alloc_index_id *id)
{
    int rc = flush_block(w);
    if (rc == 0 && (!m->fold || w->n != m->fold->n_allocs_read))
        rc = -1;   /* not every allocation of the read went in */
    if (rc == 0) {
        struct header h;
        memset(&h, 0, sizeof h);
        memcpy(h.magic, magic, sizeof magic);
        h.version = MT_ALLOC_INDEX_VERSION;
        h.header_bytes = HDR_BYTES;
        h.order = ORDER_CHECK;
        h.trace_size = id->size;
        h.trace_hash = id->hash;
        h.trace_mtime_sec = id->mtime_sec;
        h.trace_mtime_nsec = id->mtime_nsec;
        h.n_records = w->n;
        h.n_allocs = m->fold->n_allocs_read;
        h.n_nodes = m->stacks.nodes.n;
        h.trie_hash = trie_hash(m);
        h.data_bytes = w->data_bytes;
        h.data_hash = w->data_hash;
        header_hash(&h);
        unsigned char raw[HDR_BYTES] = {0};
        memcpy(raw, &h, sizeof h);
        rc = write_all(w->fd, raw, sizeof raw, 0);
    }
    mt_alloc_index_writer_abort(w);
    return rc;
}

void mt_alloc_index_writer_abort(mt_alloc_index_writer *w)
{
    if (!w)
        return;
    free(w->buf);
    free(w);
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */

struct mt_alloc_index {
    int fd;
    struct header h;
};

static mt_alloc_index *refuse(char **why, const char *msg, int fd)
{
    if (why)
        *why = strdup(msg);
    if (fd >= 0)
        close(fd);
    return NULL;
}

mt_alloc_index *mt_alloc_index_open_fd(int fd, const mt_alloc_index_id *id, char **why)
{
    if (why)
        *why = NULL;
    struct header h;
    struct stat st;
    if (fstat(fd, &st) < 0)
        return refuse(why, "cannot read it", fd);
    ssize_t got = pread(fd, &h, sizeof h, 0);
    if (got != (ssize_t)sizeof h || memcmp(h.magic, magic, sizeof magic))
        return refuse(why, "not an allocation index (or not finished)", fd);
    if (h.version != MT_ALLOC_INDEX_VERSION || h.header_bytes != HDR_BYTES || h.order != ORDER_CHECK)
        return refuse(why, "written by another version of memtrace", fd);
    uint64_t hh = h.header_hash;
    header_hash(&h);
    if (hh != h.header_hash)
        return refuse(why, "damaged header", fd);
    if (h.trace_size != id->size || h.trace_hash != id->hash ||
        h.trace_mtime_sec != id->mtime_sec || h.trace_mtime_nsec != id->mtime_nsec)
        return refuse(why, "made for another version of the trace (size, time or bytes differ)", fd);
    if (h.data_bytes > (uint64_t)st.st_size || (uint64_t)st.st_size - h.data_bytes != HDR_BYTES)
        return refuse(why, "truncated or too long", fd);
    if (h.n_records != h.n_allocs || h.n_records > h.data_bytes || h.n_nodes > UINT32_MAX)
        return refuse(why, "inconsistent counts", fd);
    mt_alloc_index *x = calloc(1, sizeof *x);
    if (!x)
        return refuse(why, "out of memory", fd);
    x->fd = fd;
    x->h = h;
    return x;
}

int mt_alloc_index_matches(const mt_alloc_index *x, const mt_model *m, char **why)
{
    if (why)
        *why = NULL;
    if (!m->fold || x->h.n_allocs != m->fold->n_allocs_read || x->h.n_nodes != m->stacks.nodes.n ||
        x->h.trie_hash != trie_hash(m)) {
        if (why)
            *why = strdup("made from another model of the trace (call-path tree or counts differ)");
        return 0;
    }
    return 1;
}

uint64_t mt_alloc_index_file_bytes(const mt_alloc_index *x)
{
    return HDR_BYTES + x->h.data_bytes;
}

void mt_alloc_index_close(mt_alloc_index *x)
{
    if (!x)
        return;
    close(x->fd);
    free(x);
}

/* The records as read: a window of the file, refilled from pread (not a
 * mapping: a file cut short under the viewer then gives a short read, not
 * a bus error). */
typedef struct rd {
    const mt_alloc_index *x;
    unsigned char *buf;
    size_t cap, pos, len;        /* buf[pos .. len) not decoded yet */
    uint64_t off;                /* data bytes read so far */
    uint64_t hash;
    const char *why;
} rd;

/* At least MAX_REC bytes (or the rest of the data) at buf + pos. */
static int refill(rd *r)
{
    memmove(r->buf, r->buf + r->pos, r->len - r->pos);
    r->len -= r->pos;
    r->pos = 0;
    while (r->len + HASH_BLOCK <= r->cap && r->off < r->x->h.data_bytes) {
        uint64_t left = r->x->h.data_bytes - r->off;
        size_t want = left < HASH_BLOCK ? (size_t)left : HASH_BLOCK, got = 0;
        while (got < want) {
            ssize_t n = pread(r->x->fd, r->buf + r->len + got, want - got,
                              (off_t)(HDR_BYTES + r->off + got));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                r->why = "cut short while read";
                return -1;
            }
            got += (size_t)n;
        }
        r->hash = chain(r->hash, r->buf + r->len, want);
        r->len += want;
        r->off += want;
    }
    return 0;
}

/* A varint at p (before end): the byte after it, or NULL. */
static inline const unsigned char *get_var(const unsigned char *p, const unsigned char *end,
                                           uint64_t *v)
{
    if (__builtin_expect(p < end && *p < 0x80, 1)) {
        *v = *p;
        return p + 1;
    }
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 64 && p < end; shift += 7) {
        unsigned char c = *p++;
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = x;
            return p;
        }
    }
    return NULL;
}

/* A folded model that shares base's trie, names and counts, with its own
 * folded costs (empty). */
static mt_model *clone_of(const mt_model *base)
{
    mt_model *m = malloc(sizeof *m);
    if (!m)
        return NULL;
    /* the lazily built parts of base change under its lock */
    pthread_mutex_lock((pthread_mutex_t *)&base->lock);
    memcpy(m, base, sizeof *m);
    pthread_mutex_unlock((pthread_mutex_t *)&base->lock);
    pthread_mutex_init(&m->lock, NULL);
    /* a folded base has no allocation table; the costs are the clone's */
    m->whole = NULL;
    m->fold = NULL;
    m->shares_stacks = 1;   /* mt_model_free frees the clone's own parts */
    size_t n = m->stacks.nodes.n ? m->stacks.nodes.n : 1;
    if (!(m->fold = mta_folded_new()) || mta_folded_cover(m->fold, n) < 0) {
        mt_model_free(m);
        return NULL;
    }
    return m;
}

mt_model *mt_alloc_index_fold(const mt_alloc_index *x, const mt_model *base,
                              const mt_alloc_index_fold_options *o, char **err)
{
    *err = NULL;
    const char *oom = NULL;
    if (!mt_alloc_index_matches(x, base, NULL)) {
        *err = strdup("allocation index: made from another model of the trace");
        return NULL;
    }
    mt_model *m = clone_of(base);
    rd r = {.x = x, .cap = 4 * HASH_BLOCK + 64 * MAX_REC};
    r.buf = malloc(r.cap);
    if (!m || !r.buf) {
        oom = "out of memory";
        goto fail;
    }
    m->fold->filter = o->filter;
    m->fold->peak = o->peak;
    m->fold->live_at = MT_TIME_END;
    m->fold->on_fold = o->on_fold;
    m->fold->ctx = o->ctx;
    uint64_t prev_seq = 0, n = 0, samples = 0, next_progress = 0;
    uint64_t prev_t = 0, nodes = m->stacks.nodes.n, allocs = x->h.n_allocs;
    /* Records are decoded a batch ahead of folding, their nodes' costs
     * prefetched: the costs of a trace with many call paths are looked up
     * at random, each likely a cache miss. */
    enum { BATCH = 64 };
    mt_alloc batch[BATCH];
    uint64_t seqs[BATCH];
    for (;;) {
        if (r.len - r.pos < BATCH * MAX_REC && r.off < x->h.data_bytes && refill(&r) < 0)
            goto bad;
        if (r.pos == r.len)
            break;
        if (o->progress && r.off - (r.len - r.pos) >= next_progress) {
            uint64_t done = r.off - (r.len - r.pos);
            o->progress(o->progress_ctx, done, x->h.data_bytes);
            next_progress = done + ((uint64_t)4 << 20);
        }
        size_t nb = 0;
        const unsigned char *p = r.buf + r.pos, *end = r.buf + r.len;
        while (nb < BATCH && p < end) {
            unsigned flags = *p++;
            uint64_t node, dseq, dt, life = 0, size, ns, dprom = 0, dom = 0;
            if (flags & ~(unsigned)F_KNOWN || (flags & 3) == 3) {
                r.why = "a record of an unknown kind";
                r.pos = (size_t)(p - r.buf);
                goto bad;
            }
            if (!(p = get_var(p, end, &node)) || !(p = get_var(p, end, &dseq)) ||
                !(p = get_var(p, end, &dt)) ||
                (!(flags & F_NEVER) && !(p = get_var(p, end, &life))) ||
                !(p = get_var(p, end, &size)) || !(p = get_var(p, end, &ns)) ||
                ((flags & F_PROMOTED) && !(p = get_var(p, end, &dprom))) ||
                ((flags & F_DOMAIN) && !(p = get_var(p, end, &dom)))) {
                r.why = "a record runs past the end, or a number too long";
                goto bad;
            }
            mt_alloc *a = &batch[nb];
            prev_seq += unzigzag(dseq);
            prev_t += unzigzag(dt);
            if (flags & F_NEVER) {
                a->time = (mt_timedelta)prev_t;
                a->collect = MT_TIME_NEVER;
            } else {
                a->collect = (mt_timedelta)prev_t;
                a->time = (mt_timedelta)(prev_t - life);
            }
            a->promote = flags & F_PROMOTED ? (mt_timedelta)((uint64_t)a->time + unzigzag(dprom))
                                            : MT_TIME_NEVER;
            a->size = size;
            a->n_samples = ns;
            a->stack = (mt_node_id)node;
            a->source = (uint8_t)(flags & 3);
            a->carried = (flags & F_CARRIED) != 0;
            a->verdict = (uint8_t)((flags >> F_VERDICT_SHIFT) & 3);
            a->domain = (uint8_t)dom;
            /* what the trace's reader guarantees of an allocation */
            if (node >= nodes || prev_seq >= allocs || ns == 0 || ns > MTA_MAX_SAMPLES - samples ||
                dom >= (m->domains.n ? m->domains.n : 1) ||
                (!(flags & F_NEVER) && (life > (uint64_t)INT64_MAX || a->collect < a->time ||
                                        a->collect == MT_TIME_NEVER)) ||
                ++n > x->h.n_records) {
                r.why = "a record out of range";
                r.pos = (size_t)(p - r.buf);
                goto bad;
            }
            samples += ns;
            seqs[nb++] = prev_seq;
            __builtin_prefetch(&m->fold->node_cost[node], 1);
            __builtin_prefetch((const char *)&m->fold->node_cost[node] + sizeof(mt_cost) - 1, 1);
            __builtin_prefetch(&m->fold->node_first[node], 1);
        }
        r.pos = (size_t)(p - r.buf);
        for (size_t i = 0; i < nb; i++)
            if (mta_fold(m, &batch[i], seqs[i]) < 0) {
                if (!m->fold->stopped)
                    oom = "out of memory";
                goto fail;
            }
    }
    if (n != x->h.n_records || r.off != x->h.data_bytes) {
        r.why = "fewer records than its header says";
        goto bad;
    }
    if (r.hash != x->h.data_hash) {
        r.why = "damaged (its hash differs)";
        goto bad;
    }
    free(r.buf);
    return m;
bad:
    if (asprintf(err, "allocation index: %s at byte %llu", r.why,
                 (unsigned long long)(HDR_BYTES + r.off - (r.len - r.pos))) < 0)
        *err = NULL;
fail:
    if (oom && !*err)
        *err = NULL;   /* out of memory: no message */
    else if (!*err)
        *err = strdup("stopped by the caller");
    free(r.buf);
    if (m)
        mt_model_free(m);
    return NULL;
}
