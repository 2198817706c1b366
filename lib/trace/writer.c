/*
 * writer.c - encodes events into memtrace's trace format (v2 by default, or
 * v3), making the same choices as memtrace's own writer so that re-encoding
 * a trace it wrote gives back the same bytes: backtrace cache with two
 * hashes and date-based eviction, prediction runs, common prefixes,
 * move-to-front name tables, packet cuts, location packets and the cache
 * verifier. docs/format.md explains each rule.
 *
 * Events are added one at a time; the writer keeps one packet (32 KiB) in
 * memory and writes it whole, preceded by location packets for the codes
 * that missed the cache while it was filled. Locations are asked from the
 * caller's resolver at that moment.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "buf.h"
#include "check.h"
#include "fdsink.h"
#include "format.h"
#include "mtf.h"
#include "vec.h"
#include "memtrace/trace.h"

/* Packet cutting rules of memtrace's writer. */
#define EVENT_HEADROOM (100 + 4096)   /* flush when less is left in the packet */
#define MAX_PENDING_LOCS 128          /* flush when more codes await locations */
#define MAX_PACKET_SPAN 30000000      /* µs; flush when an event comes later */
#define LOC_PACKET_RESERVE 4096       /* location events go in while more is left */
#define BT_BUDGET 4096                /* bytes of codewords per backtrace */
#define BT_MISS_SIZE 10               /* u16 codeword + u64 code */
#define PREFETCH_FRAMES 64            /* frames whose cache slots are fetched ahead */
#define V3_IDS_PER_CHUNK 10000
#define VERIFY_FIRST 4242
#define VERIFY_STEP 5413
#define MAX_LOCS_PER_CODE 255
#define MAX_LOC_EVENT 4096
#define SHORT_NAME_MAX 1000           /* bytes of a name cut to fit an event */

struct mt_writer {
    int fd;
    const mt_alloc *al;         /* where its memory comes from (NULL: malloc) */
    mt_writer_options opts;
    unsigned version;
    size_t hdr_size;
    uint64_t pid;               /* written in every packet header */
    pid_t creator;              /* process that opened the writer */
    int failed;
    int finished;               /* mt_writer_finish has written the last packet */
    int end_marked;             /* the last packet written carries the end mark
                                 * and nothing was added since */
    uint32_t next_flush_field;  /* flush_duration of the next events packet */
    int carried;                /* events go into carried packets (set_carried) */
    char err[256];

    /* Current events packet. */
    uint8_t buf[MT_MAX_PACKET];
    size_t len;
    int64_t pkt_start, pkt_end;
    uint64_t pkt_first_id;
    uint64_t next_id;
    uint64_t chunk_end;         /* v3: first id past the current id chunk (v2: none) */
    size_t len_limit;           /* cut the packet before the next event when len
                                 * exceeds this: 0 when another rule says "cut"
                                 * (see begin_event) */
    unsigned verify_ix;

    /* A chain of locations shortened to fit one location event. */
    mt_location short_locs[MAX_LOCS_PER_CODE];
    char short_str[4][SHORT_NAME_MAX + 4];

    /* Backtrace cache: one 16-byte slot per bucket, so that a probe brings
     * the code, its date and its prediction in one cache line. */
    struct wslot {
        uint64_t code;
        uint32_t date_lo;  /* date: id of the allocation that last used */
        uint16_t date_hi;  /*   the slot, 48 bits (2.8e14 allocations) */
        uint16_t next;     /* predicted next bucket */
    } __attribute__((aligned(16))) cache[MT_CACHE_SIZE];

    /* Previous allocation's complete backtrace, caller first. */
    mt_location_code *prev;
    size_t prev_len, prev_cap;

    /* Codes that missed the cache in this packet and need location events. */
    mt_location_code *pending;
    size_t npending, pending_cap;

    /* Name tables for location events. */
    mt_mtf mtf;
    uint8_t locbuf[MT_MAX_PACKET];
};

static int wfail(mt_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int wfail(mt_writer *w, const char *fmt, ...)
{
    if (!w->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->err, sizeof w->err, fmt, ap);
        va_end(ap);
        w->failed = 1;
    }
    return -1;
}

static int write_all(mt_writer *w, const void *data, size_t len)
{
    if (w->opts.write) {
        if (w->opts.write(w->opts.write_ctx, data, len) < 0)
            return wfail(w, "write failed: %s", strerror(errno));
        return 0;
    }
    if (mt_write_full(w->fd, data, len, NULL) < 0)
        return wfail(w, "write failed: %s", strerror(errno));
    return 0;
}

/* ------------------------------------------------------------ headers */

/* Fills a packet header at p. verify_ix = MT_NO_VERIFY writes "no check". */
static void put_header(mt_writer *w, uint8_t *p, size_t size, int64_t begin, int64_t end,
                       unsigned verify_ix, uint64_t id_begin, uint64_t id_end)
{
    mt_put32(p + MT_HDR_MAGIC, MT_MAGIC);
    mt_put32(p + MT_HDR_SIZE_BITS, (uint32_t)(size * 8));
    mt_put64(p + MT_HDR_TIME_BEGIN, (uint64_t)begin);
    mt_put64(p + MT_HDR_TIME_END, (uint64_t)end);
    mt_put32(p + MT_HDR_FLUSH, 0);
    mt_put16(p + MT_HDR_VERSION, (uint16_t)w->version);
    mt_put64(p + MT_HDR_PID, w->pid);
    size_t s = 0;
    if (w->version >= 3) {
        mt_put16(p + MT_HDR_DOMAIN, (uint16_t)w->opts.domain);
        s = 2;
    }
    if (verify_ix == MT_NO_VERIFY) {
        mt_put16(p + MT_HDR_VERIFY_IX + s, MT_NO_VERIFY);
        mt_put16(p + MT_HDR_VERIFY_PRED + s, 0);
        mt_put64(p + MT_HDR_VERIFY_VAL + s, 0);
    } else {
        mt_put16(p + MT_HDR_VERIFY_IX + s, (uint16_t)verify_ix);
        mt_put16(p + MT_HDR_VERIFY_PRED + s, w->cache[verify_ix].next);
        mt_put64(p + MT_HDR_VERIFY_VAL + s, w->cache[verify_ix].code);
    }
    mt_put64(p + MT_HDR_ID_BEGIN + s, id_begin);
    mt_put64(p + MT_HDR_ID_END + s, id_end);
}

static inline uint32_t event_header(unsigned code, int64_t time)
{
    return ((uint32_t)code << MT_TIME_BITS) | ((uint32_t)time & MT_TIME_MASK);
}

/* Starts an events packet at pkt_start: the verifier is recorded now, i.e.
 * it describes the cache as left by all earlier packets. */
static void start_packet(mt_writer *w, int verify)
{
    unsigned ix = MT_NO_VERIFY;
    if (verify) {
        ix = w->verify_ix;
        w->verify_ix = (w->verify_ix + VERIFY_STEP) % MT_CACHE_SIZE;
    }
    put_header(w, w->buf, 0, 0, 0, ix, 0, 0);
    w->len = w->hdr_size;
    w->pkt_first_id = w->next_id;
}

/* ------------------------------------------------------ location events */

static size_t put_string(uint8_t *p, const char *s)
{
    size_t n = strlen(s) + 1;
    memcpy(p, s, n);
    return n;
}

static uint32_t clamp(uint32_t v, uint32_t max)
{
    return v > max ? max : v;
}

static size_t loc_size(const mt_location *l)
{
    return 6 + strlen(l->filename ? l->filename : "") + 1 +
           strlen(l->defname ? l->defname : "") + 1;
}

/* s cut to SHORT_NAME_MAX bytes (not inside a UTF-8 sequence) + "...". */
static const char *cut_name(char *buf, const char *s)
{
    if (!s || strlen(s) <= SHORT_NAME_MAX)
        return s;
    size_t k = SHORT_NAME_MAX - 3;
    while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80)
        k--;
    memcpy(buf, s, k);
    memcpy(buf + k, "...", 4);
    return buf;
}

/* A chain (outermost first) that does not fit one location event (255
 * locations, MAX_LOC_EVENT bytes) keeps its outermost location (the
 * function the code lies in, which links it to its caller) and as many of
 * the innermost ones as fit (the allocation's own function and line);
 * inlined frames in between are dropped, and names longer than
 * SHORT_NAME_MAX are cut when even two do not fit. memtrace's own writer
 * gives such codes a single "??" location instead. Returns the count and
 * points *locs at the chain to write. */
static size_t fit_chain(mt_writer *w, const mt_location **locs, size_t n)
{
    const mt_location *in = *locs;
    size_t total = 9;
    for (size_t i = 0; i < n && total <= MAX_LOC_EVENT; i++)
        total += loc_size(&in[i]);
    if (n <= MAX_LOCS_PER_CODE && total <= MAX_LOC_EVENT)
        return n;
    mt_location *out = w->short_locs;
    size_t used = 9 + loc_size(&in[n - 1]) + (n > 1 ? loc_size(&in[0]) : 0);
    if (used > MAX_LOC_EVENT) {
        /* Names too long even for the two ends: cut them. */
        out[0] = in[0];
        out[0].filename = cut_name(w->short_str[0], in[0].filename);
        out[0].defname = cut_name(w->short_str[1], in[0].defname);
        if (n == 1)
            return *locs = out, 1;
        out[1] = in[n - 1];
        out[1].filename = cut_name(w->short_str[2], in[n - 1].filename);
        out[1].defname = cut_name(w->short_str[3], in[n - 1].defname);
        return *locs = out, 2;
    }
    /* Innermost locations, from the inside out, while they fit. */
    size_t first = n - 1;   /* in[first .. n-1] are kept */
    while (first > 1 && n - first + 1 < MAX_LOCS_PER_CODE &&
           used + loc_size(&in[first - 1]) <= MAX_LOC_EVENT) {
        used += loc_size(&in[first - 1]);
        first--;
    }
    out[0] = in[0];
    size_t k = 1;
    for (size_t i = first; i < n; i++)
        out[k++] = in[i];
    *locs = out;
    return k;
}

/* Appends the location event of code at p (room for MAX_LOC_EVENT + 4
 * bytes guaranteed); returns its size or 0 on failure. */
static size_t put_location_event(mt_writer *w, uint8_t *p, mt_location_code code)
{
    const mt_location *locs = NULL;
    size_t n = 0;
    if (!w->opts.resolve || w->opts.resolve(w->opts.resolve_ctx, code, &locs, &n) < 0 || !locs)
        n = 0;
    if (n > 0)
        n = fit_chain(w, &locs, n);
    MT_ASSERT(n <= MAX_LOCS_PER_CODE);   /* the count is one byte */
    size_t off = 0;
    mt_put32(p, event_header(MT_EV_LOCATION, w->pkt_start));
    mt_put64(p + 4, code);
    p[12] = (uint8_t)n;
    off = 13;
    for (size_t i = 0; i < n; i++) {
        const char *file = locs[i].filename ? locs[i].filename : "";
        const char *def = locs[i].defname ? locs[i].defname : "";
        unsigned fcode, dcode;
        if (mt_mtf_encode(&w->mtf, file, def, &fcode, &dcode) < 0)
            return wfail(w, "out of memory"), 0;
        uint64_t bits = (uint64_t)clamp(locs[i].line, MT_LOC_LINE_MAX) |
                        (uint64_t)clamp(locs[i].start_char, MT_LOC_START_MAX) << 20 |
                        (uint64_t)clamp(locs[i].end_char, MT_LOC_END_MAX) << 28 |
                        (uint64_t)fcode << 38 | (uint64_t)dcode << 43;
        mt_put32(p + off, (uint32_t)bits);
        mt_put16(p + off + 4, (uint16_t)(bits >> 32));
        off += 6;
        if (fcode == MT_MTF_LITERAL)
            off += put_string(p + off, file);
        if (dcode == MT_MTF_LITERAL)
            off += put_string(p + off, def);
    }
    return off;
}

/* ------------------------------------------------------------- flushing */

static int flush_at(mt_writer *w, int64_t now)
{
    if (w->failed)
        return -1;
    if (w->finished)
        return wfail(w, "event or flush after mt_writer_finish");
    if (getpid() != w->creator)
        return wfail(w, "the process forked: the child does not write to its parent's trace");
    size_t i = 0;
    while (i < w->npending) {
        size_t len = w->hdr_size;
        while (i < w->npending && MT_MAX_PACKET - len > LOC_PACKET_RESERVE) {
            size_t n = put_location_event(w, w->locbuf + len, w->pending[i++]);
            if (n == 0)
                return -1;
            len += n;
        }
        MT_ASSERT(len <= MT_MAX_PACKET);
        put_header(w, w->locbuf, len, w->pkt_start, w->pkt_start, MT_NO_VERIFY,
                   w->pkt_first_id, w->pkt_first_id);
        if (write_all(w, w->locbuf, len) < 0)
            return -1;
    }
    w->npending = 0;
    w->len_limit = w->next_id >= w->chunk_end ? 0 : MT_MAX_PACKET - EVENT_HEADROOM;
    /* Patch the events packet's header: size, times, ids (the verifier was
     * written when the packet started). */
    size_t s = w->version >= 3 ? 2 : 0;
    mt_put32(w->buf + MT_HDR_SIZE_BITS, (uint32_t)(w->len * 8));
    mt_put64(w->buf + MT_HDR_TIME_BEGIN, (uint64_t)w->pkt_start);
    mt_put64(w->buf + MT_HDR_TIME_END, (uint64_t)w->pkt_end);
    mt_put64(w->buf + MT_HDR_ID_BEGIN + s, w->pkt_first_id);
    mt_put64(w->buf + MT_HDR_ID_END + s, w->next_id);
    mt_put32(w->buf + MT_HDR_FLUSH, w->next_flush_field ? w->next_flush_field
                                    : w->carried ? MT_FLUSH_CARRY_MARK : 0);
    w->end_marked = w->next_flush_field == MT_FLUSH_END_MARK;
    w->next_flush_field = 0;
    if (write_all(w, w->buf, w->len) < 0)
        return -1;
    w->pkt_start = w->pkt_end = now;
    start_packet(w, 1);
    return 0;
}

int mt_writer_flush(mt_writer *w)
{
    return flush_at(w, w->pkt_end);
}

int mt_writer_flush_until(mt_writer *w, mt_timestamp now, int end)
{
    if (now > w->pkt_end) {
        if (w->len == w->hdr_size)
            w->pkt_start = now;   /* an empty packet: just a point in time */
        w->pkt_end = now;
    }
    w->next_flush_field = end ? MT_FLUSH_END_MARK : 0;
    return flush_at(w, w->pkt_end);
}

int mt_writer_set_carried(mt_writer *w, int carried)
{
    carried = carried != 0;
    if (carried == w->carried)
        return w->failed ? -1 : 0;
    /* A packet holds carried blocks only, or none. */
    if (w->len > w->hdr_size && flush_at(w, w->pkt_end) < 0)
        return -1;
    w->carried = carried;
    return w->failed ? -1 : 0;
}

/* Cuts the packet if the next event would not fit the rules, then writes
 * the event's header. Returns a pointer to where its payload goes. */
/* The slow side of begin_event, out of line (so that the event functions
 * stay small): writes out the packet and starts the next. 0 or -1. */
static __attribute__((noinline, cold)) int cut_packet(mt_writer *w, int64_t now)
{
    if (w->finished)
        return wfail(w, "event after mt_writer_finish");
    if (flush_at(w, now) < 0)
        return -1;
    if (w->next_id >= w->chunk_end)
        w->chunk_end = w->next_id + V3_IDS_PER_CHUNK;
    w->len_limit = MT_MAX_PACKET - EVENT_HEADROOM;
    return 0;
}

static inline uint8_t *begin_event(mt_writer *w, unsigned code, int64_t now)
{
    MT_ASSERT(w->len >= w->hdr_size && w->len <= MT_MAX_PACKET - 4);
    MT_ASSERT(w->pkt_start <= w->pkt_end);   /* a packet's times never decrease */
    if (now < w->pkt_end)
        now = w->pkt_end; /* times must not decrease: clamp rather than corrupt */
    /* Two tests for all the cutting rules: the packet is full, or its time
     * span would be too long. The other rules (too many codes awaiting
     * locations, the end of a v3 id chunk, writer finished) set len_limit to
     * 0 when they become true. */
    if (__builtin_expect(w->len > w->len_limit ||
                             (uint64_t)now - (uint64_t)w->pkt_start > MAX_PACKET_SPAN,
                         0) &&
        cut_packet(w, now) < 0)
        return NULL;
    w->pkt_end = now;
    uint8_t *p = w->buf + w->len;
    mt_put32(p, event_header(code, now));
    return p + 4;
}

/* ----------------------------------------------------------- backtraces */

static int add_pending(mt_writer *w, mt_location_code code)
{
    if (MT_VEC_ROOM_IN(mt_al_re(w->al), w->pending, w->npending, w->pending_cap, 256) < 0)
        return wfail(w, "out of memory");
    w->pending[w->npending++] = code;
    if (w->npending > MAX_PENDING_LOCS)
        w->len_limit = 0; /* cut before the next event */
    return 0;
}

static inline uint8_t *put_run(uint8_t *p, unsigned bucket, unsigned k)
{
    if (k < 2) {
        mt_put16(p, (uint16_t)(bucket << 2 | k));
        return p + 2;
    }
    mt_put16(p, (uint16_t)(bucket << 2 | 2));
    p[2] = (uint8_t)k;
    return p + 3;
}

/* The two cache slots a code may live in (64-bit products wrap like
 * OCaml's 63-bit ones in the bits kept). */
static inline unsigned hash1(uint64_t c)
{
    return (unsigned)((c * 0x4983723u) >> 11) & (MT_CACHE_SIZE - 1);
}

static inline unsigned hash2(uint64_t c)
{
    return (unsigned)((c * 0xFDEA731u) >> 21) & (MT_CACHE_SIZE - 1);
}

static inline uint64_t slot_date(const struct wslot *s)
{
    return (uint64_t)s->date_hi << 32 | s->date_lo;
}

static inline void set_date(struct wslot *s, uint64_t id)
{
    s->date_lo = (uint32_t)id;
    s->date_hi = (uint16_t)(id >> 32);
}

/* Encodes frames bt[from..n) (outermost first) at p; returns the end and
 * stores the number of codewords. Misses are queued for location events. */
static uint8_t *encode_backtrace(mt_writer *w, uint8_t *p, const mt_location_code *bt,
                                 size_t from, size_t n, uint64_t id, unsigned *ncodes)
{
    uint8_t *const start = p;
    const size_t limit = BT_BUDGET - BT_MISS_SIZE;
    struct wslot *cache = w->cache;
    unsigned predictor = 0, count = 0;
    size_t i = from;
    /* Both slots of every frame (the first PREFETCH_FRAMES) asked of memory
     * at once: the table is 256 KiB and cold when the recorder's writer
     * thread wakes, and the walk below would otherwise wait for each slot
     * in turn. Only a hint: what is encoded does not change. */
    for (size_t k = from; k < n && k < from + PREFETCH_FRAMES; k++) {
        __builtin_prefetch(&cache[hash1(bt[k])]);
        __builtin_prefetch(&cache[hash2(bt[k])]);
    }
    while (i < n) {
        /* No prediction pending. */
        if ((size_t)(p - start) > limit)
            break;
        uint64_t c = bt[i];
        unsigned h1 = hash1(c), h2 = hash2(c);
        /* Which of the two slots holds c, chosen without a branch (the
         * choice is a coin toss to the branch predictor). */
        unsigned in1 = cache[h1].code == c;
        unsigned h = h2 ^ ((h1 ^ h2) & (0u - in1));
        if (__builtin_expect(cache[h].code != c, 0)) {
            unsigned b = slot_date(&cache[h1]) < slot_date(&cache[h2]) ? h1 : h2;
            cache[b].code = c;
            set_date(&cache[b], id);
            cache[predictor].next = (uint16_t)b;
            mt_put16(p, (uint16_t)(b << 2 | 3));
            mt_put64(p + 2, c);
            p += BT_MISS_SIZE;
            count++;
            if (add_pending(w, c) < 0)
                return NULL;
            predictor = b;
            i++;
            continue;
        }
        /* Hit at h: start a prediction run; predicted frames cost nothing
         * until the run ends, is full (255), or the budget is reached. */
        i++;
        unsigned last;
        for (;;) {
            set_date(&cache[h], id);
            cache[predictor].next = (uint16_t)h;
            count++;
            unsigned run = h, k = 0;
            int full = 0;
            last = h;
            /* p stays put during the run: the budget is tested once. */
            int room = (size_t)(p - start) + 2 <= limit;
            while (room) {
                unsigned nb = cache[last].next;
                /* The run goes on if there is a frame i and it is the
                 * predicted one: one branch for both (j = i, or the last
                 * frame when i == n, for a harmless load). */
                size_t at_end = i == n, j = i - at_end;
                if (((cache[nb].code ^ bt[j]) | at_end) != 0)
                    break;
                i++;
                if (k == 255) {
                    /* The predicted frame becomes the hit of a new run. */
                    full = 1;
                    predictor = last;
                    h = nb;
                    break;
                }
                k++;
                last = nb;
            }
            p = put_run(p, run, k);
            if (!full)
                break;
        }
        predictor = last;
    }
    *ncodes = count;
    return p;
}

/* --------------------------------------------------------------- events */

/* put_alloc with a guess at the common prefix (e.g. the one a reader
 * decoded): checked with one memcmp, it saves comparing frame by frame.
 * A wrong guess costs only the memcmp. */
static int put_alloc(mt_writer *w, mt_timestamp now, uint64_t length, uint64_t n_samples,
                     mt_source source, const mt_location_code *bt, size_t n, size_t guess,
                     int trusted, mt_obj_id *id)
{
    if (w->failed)
        return -1;
    if ((unsigned)source > MT_SOURCE_EXTERNAL)
        return wfail(w, "bad allocation source %d", (int)source);
    size_t m = n < w->prev_len ? n : w->prev_len;
    size_t cp = 0;
    const mt_location_code *prev = w->prev;
    if (guess > m)
        guess = m;
    if (guess > 0 && (trusted || memcmp(bt, prev, guess * sizeof *bt) == 0))
        cp = guess;
    /* Does the prefix go on past the guess? Usually not (a reader's prefix
     * is the longest one): one test, without a branch on cp < m. */
    if (m > 0) {
        size_t more = cp < m, j = cp & (0 - more); /* j = more ? cp : 0 */
        if (__builtin_expect(((bt[j] ^ prev[j]) | (more ^ 1)) == 0, 0)) {
            /* Four frames at a time while they all match. */
            while (cp + 4 <= m &&
                   ((bt[cp] ^ prev[cp]) | (bt[cp + 1] ^ prev[cp + 1]) |
                    (bt[cp + 2] ^ prev[cp + 2]) | (bt[cp + 3] ^ prev[cp + 3])) == 0)
                cp += 4;
            while (cp < m && bt[cp] == prev[cp])
                cp++;
        }
    }
    int is_short = length >= 1 && length <= 16 && source == MT_SOURCE_MINOR &&
                   n_samples == 1 && n - cp <= 255;
    uint8_t *p = begin_event(w, is_short ? MT_EV_SHORT_ALLOC + (unsigned)length : MT_EV_ALLOC,
                             now);
    if (!p)
        return -1;
    uint64_t aid = w->next_id;
    uint8_t *count_at;
    if (is_short) {
        p += mt_put_vint(p, cp);
        count_at = p;
        p += 1;
    } else {
        p += mt_put_vint(p, length);
        p += mt_put_vint(p, n_samples);
        *p++ = (uint8_t)source;
        p += mt_put_vint(p, cp);
        count_at = p;
        p += 2;
    }
    unsigned ncodes = 0;
    p = encode_backtrace(w, p, bt, cp, n, aid, &ncodes);
    if (!p)
        return -1;
    MT_ASSERT(cp <= n && ncodes <= (is_short ? 255u : 0xffffu));
    if (is_short)
        *count_at = (uint8_t)ncodes;
    else
        mt_put16(count_at, (uint16_t)ncodes);
    w->len = (size_t)(p - w->buf);
    MT_ASSERT(w->len <= MT_MAX_PACKET);   /* the headroom held the event */
    if (++w->next_id >= w->chunk_end)
        w->len_limit = 0; /* v3: the next event starts a new id chunk */
    /* Remember the whole stack, even the part the budget left out. */
    if (n > w->prev_cap) {
        size_t cap = w->prev_cap ? w->prev_cap : 64;
        while (cap < n)
            cap *= 2;
        mt_location_code *grown = mt_al_realloc(w->al, w->prev, cap * sizeof *grown);
        if (!grown)
            return wfail(w, "out of memory");
        w->prev = grown;
        w->prev_cap = cap;
    }
    if (n > cp) {
        /* Usually a few frames: the first four are copied without a loop
         * (indices clamped to the last frame) rather than with memcpy, whose
         * size dispatch the branch predictor keeps missing. */
        mt_location_code *to = w->prev;
        size_t last = n - 1;
#define COPY_CLAMPED(j)                                  \
    do {                                                 \
        size_t k_ = (j) < last ? (j) : last;             \
        to[k_] = bt[k_];                                 \
    } while (0)
        COPY_CLAMPED(cp);
        COPY_CLAMPED(cp + 1);
        COPY_CLAMPED(cp + 2);
        COPY_CLAMPED(cp + 3);
#undef COPY_CLAMPED
        for (size_t j = cp + 4; j < n; j++)
            to[j] = bt[j];
    }
    w->prev_len = n;
    if (id)
        *id = aid;
    return 0;
}

int mt_writer_put_alloc(mt_writer *w, mt_timestamp now, uint64_t length, uint64_t n_samples,
                        mt_source source, const mt_location_code *backtrace,
                        size_t backtrace_length, mt_obj_id *id)
{
    return put_alloc(w, now, length, n_samples, source, backtrace, backtrace_length, 0, 0, id);
}

int mt_writer_put_alloc_shared(mt_writer *w, mt_timestamp now, uint64_t length,
                               uint64_t n_samples, mt_source source,
                               const mt_location_code *backtrace, size_t backtrace_length,
                               size_t shared, mt_obj_id *id)
{
    return put_alloc(w, now, length, n_samples, source, backtrace, backtrace_length, shared, 1,
                     id);
}

static int put_ref(mt_writer *w, unsigned code, mt_timestamp now, mt_obj_id id)
{
    if (w->failed)
        return -1;
    if (id >= w->next_id && (code == MT_EV_PROMOTE || w->version < 3))
        return wfail(w, "%s of object %llu, which is not allocated yet (next id %llu)",
                     code == MT_EV_PROMOTE ? "promotion" : "collection",
                     (unsigned long long)id, (unsigned long long)w->next_id);
    uint8_t *p = begin_event(w, code, now);
    if (!p)
        return -1;
    /* Delta to the most recent allocation; negative (v3) wraps to tag 255. */
    p += mt_put_vint(p, w->next_id - 1 - id);
    w->len = (size_t)(p - w->buf);
    MT_ASSERT(w->len <= MT_MAX_PACKET);
    return 0;
}

int mt_writer_put_promote(mt_writer *w, mt_timestamp now, mt_obj_id id)
{
    return put_ref(w, MT_EV_PROMOTE, now, id);
}

int mt_writer_put_collect(mt_writer *w, mt_timestamp now, mt_obj_id id)
{
    return put_ref(w, MT_EV_COLLECT, now, id);
}

int mt_writer_put_event(mt_writer *w, mt_timestamp start_time, const mt_event *ev)
{
    if (w->failed)
        return -1;
    mt_timestamp now = (int64_t)((uint64_t)start_time + (uint64_t)ev->time);
    switch (ev->kind) {
    case MT_EVENT_ALLOC:
        if (ev->id != w->next_id)
            return wfail(w, "allocation id %llu does not follow on from the writer's %llu",
                         (unsigned long long)ev->id, (unsigned long long)w->next_id);
        if (mt_writer_set_carried(w, ev->carried) < 0)
            return -1;
        return put_alloc(w, now, ev->length, ev->n_samples, ev->source, ev->backtrace,
                         ev->backtrace_length, ev->common_prefix, 0, NULL);
    case MT_EVENT_PROMOTE:
        return mt_writer_put_promote(w, now, ev->id);
    case MT_EVENT_COLLECT:
        return mt_writer_put_collect(w, now, ev->id);
    }
    return wfail(w, "bad event kind %d", (int)ev->kind);
}

/* --------------------------------------------------------- open / close */

static int write_info_packet(mt_writer *w, const mt_trace_info *info)
{
    const char *strs[4] = {info->executable_name, info->host_name,
                           info->ocaml_runtime_params, info->context};
    size_t size = w->hdr_size + 4 + 8 + 1 + 8;
    for (int i = 0; i < 4; i++)
        size += (strs[i] ? strlen(strs[i]) : 0) + 1;
    if (size > UINT32_MAX / 8)
        return wfail(w, "trace-info strings too long");
    uint8_t *pkt = mt_al_realloc(w->al, NULL, size);
    if (!pkt)
        return wfail(w, "out of memory");
    uint8_t *p = pkt + w->hdr_size;
    mt_put32(p, event_header(MT_EV_INFO, info->start_time));
    p += 4;
    uint64_t rate_bits;
    memcpy(&rate_bits, &info->sample_rate, sizeof rate_bits);
    mt_put64(p, rate_bits);
    p[8] = (uint8_t)info->word_size;
    p += 9;
    for (int i = 0; i < 3; i++)
        p += put_string(p, strs[i] ? strs[i] : "");
    mt_put64(p, info->pid);
    p += 8;
    p += put_string(p, strs[3] ? strs[3] : ""); /* version >= 2: context */
    size = (size_t)(p - pkt);
    put_header(w, pkt, size, info->start_time, info->start_time, MT_NO_VERIFY, 0, 0);
    int rc = write_all(w, pkt, size);
    mt_al_free(w->al, pkt);
    return rc;
}

mt_writer *mt_writer_open(int fd, const mt_trace_info *info, const mt_writer_options *opts,
                          char **error)
{
    return mt_writer_open_in(NULL, fd, info, opts, error);
}

mt_writer *mt_writer_open_in(const mt_alloc *al, int fd, const mt_trace_info *info,
                             const mt_writer_options *opts, char **error)
{
    const char *why = NULL;
    mt_writer *w = mt_al_zalloc(al, sizeof *w);
    if (!w) {
        why = "out of memory";
        goto fail;
    }
    w->al = al;
    w->mtf.al = al;
    w->fd = fd;
    if (opts)
        w->opts = *opts;
    w->version = w->opts.version ? (unsigned)w->opts.version : 2;
    if (w->version != 2 && w->version != 3) {
        why = "the writer writes format versions 2 and 3 only";
        goto fail;
    }
    if (w->version < 3 && w->opts.domain != 0) {
        why = "domains need format version 3";
        goto fail;
    }
    if (w->opts.domain > 0xFFFF) {
        why = "domain number above 65535";
        goto fail;
    }
    w->hdr_size = w->version >= 3 ? MT_HDR_SIZE_V3 : MT_HDR_SIZE_V2;
    w->pid = info->pid;
    w->creator = getpid();
    w->verify_ix = VERIFY_FIRST;
    if (write_info_packet(w, info) < 0) {
        if (error)
            *error = mt_al_strdup(al, w->err);
        mt_writer_close(w);
        return NULL;
    }
    w->pkt_start = w->pkt_end = info->start_time;
    w->next_id = 0;
    w->chunk_end = w->version >= 3 ? V3_IDS_PER_CHUNK : UINT64_MAX;
    w->len_limit = MT_MAX_PACKET - EVENT_HEADROOM;
    start_packet(w, 0);
    return w;
fail:
    if (error)
        *error = mt_al_strdup(al, why);
    mt_al_free(al, w);
    return NULL;
}

int mt_writer_close(mt_writer *w)
{
    if (!w)
        return -1;
    int rc = mt_writer_finish(w);
    const mt_alloc *al = w->al;
    mt_al_free(al, w->prev);
    mt_al_free(al, w->pending);
    mt_mtf_free(&w->mtf);
    mt_al_free(al, w);
    return rc;
}

int mt_writer_finish(mt_writer *w)
{
    if (w->failed)
        return -1;
    if (w->finished)
        return 0;
    /* After an end mark with nothing since, the marked packet stays last. */
    int rc = w->end_marked && w->len == w->hdr_size ? 0 : flush_at(w, w->pkt_end);
    w->finished = 1;
    w->len_limit = 0;
    return rc;
}

const char *mt_writer_error(const mt_writer *w)
{
    return w->failed ? w->err : NULL;
}

mt_obj_id mt_writer_next_id(const mt_writer *w)
{
    return w->next_id;
}
