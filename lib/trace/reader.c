/*
 * reader.c - decodes a memtrace trace (format v1, v2, v3) one event at a
 * time: packet headers, the trace-info packet, location events (into the
 * location table), allocations with their cached/predicted backtraces,
 * promotions and collections. docs/format.md describes the bytes.
 * Raw frames of a new code go through the process's namer, when the
 * caller set one (mt_reader_set_namer: the CLI names them from the
 * binaries on this machine), before the code is stored.
 *
 * Memory is bounded by the location table and the per-domain caches: the
 * input is consumed packet by packet (input.c) and events are decoded in
 * place into reused buffers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "format.h"
#include "hash.h"
#include "input.h"
#include "loctab.h"
#include "mtf.h"
#include "rawframe.h"
#include "verdicts.h"
#include "warn.h"
#include "memtrace/trace.h"

/* Limits that keep hostile input from costing unbounded memory. Real
 * traces stay far below them (OCaml 5 allows 128 domains; a backtrace of a
 * million frames means a stack of tens of megabytes). */
#define MAX_DOMAINS 256
#define MAX_BACKTRACE (1u << 22)

/* Decoder state kept per writer, i.e. per domain in v3 traces. */
typedef struct rdomain {
    unsigned id;
    uint64_t cache[MT_CACHE_SIZE];   /* bucket -> code */
    uint16_t pred[MT_CACHE_SIZE];    /* bucket -> predicted next bucket */
    mt_location_code *bt;            /* previous backtrace, caller first */
    size_t bt_len, bt_cap;
    int64_t last_time;               /* absolute time of the last event */
    uint64_t ids_end;                /* v3: the end id of its last packet with allocations */
    mt_mtf mtf;
} rdomain;

struct mt_reader {
    char *name;
    mt_input in;
    int fd_owned;
    uint64_t size;
    mt_reader_options opts;
    mt_name_fn namer;                /* names for raw frames, or NULL */
    void *namer_ctx;
    mt_trace_info info;
    size_t hdr_size;

    mt_loctab locs;
    rdomain *doms[MAX_DOMAINS];
    unsigned ndoms;
    rdomain *dom;                    /* domain of the current packet */

    /* Current packet. */
    const uint8_t *pkt;              /* its first byte (header) */
    const uint8_t *p, *end;          /* unread content */
    uint64_t pkt_off;                /* file offset of pkt */
    int64_t pkt_begin, pkt_end;
    uint64_t pkt_span;               /* pkt_end - pkt_begin */
    uint64_t next_id, id_end;
    int in_packet;

    uint64_t expected_id;            /* v1/v2: ids run on across packets */
    int64_t last_end;                /* latest packet end time, absolute */
    int end_marked;                  /* the last packet carries the end mark */
    int carried;                     /* the packet holds carried blocks */
    mtt_verdicts *verdicts;          /* TRACE.leaks, or NULL */
    int done, failed;
    char err[512];
};

/* ------------------------------------------------------------------ errors */

static int fail_at(mt_reader *r, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_at(mt_reader *r, uint64_t off, const char *fmt, ...)
{
    if (r->failed)
        return -1;
    int n = snprintf(r->err, sizeof r->err, "%s: offset %llu: ", r->name,
                     (unsigned long long)off);
    if (n < 0 || (size_t)n >= sizeof r->err)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
    va_end(ap);
    r->failed = 1;
    r->p = r->end = NULL; /* mt_reader_next stops at once from now on */
    return -1;
}

static void warn_at(mt_reader *r, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void warn_at(mt_reader *r, uint64_t off, const char *fmt, ...)
{
    char msg[512];
    int n = snprintf(msg, sizeof msg, "%s: offset %llu: ", r->name, (unsigned long long)off);
    if (n < 0 || (size_t)n >= sizeof msg)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    mt_warn(r->opts.on_warning, r->opts.warning_ctx, msg);
}

/* Offset in the file of a pointer into the current packet. */
static uint64_t off_of(const mt_reader *r, const uint8_t *p)
{
    return r->pkt_off + (uint64_t)(p - r->pkt);
}

static int underflow(mt_reader *r, const uint8_t *p, const char *what)
{
    return fail_at(r, off_of(r, p), "%s runs past the end of its packet", what);
}

/* Backtrace of events that have none. */
static const mt_location_code no_frames[1];

/* ----------------------------------------------------------------- domains */

static rdomain *get_domain(mt_reader *r, unsigned id)
{
    if (r->dom && r->dom->id == id)
        return r->dom;
    for (unsigned i = 0; i < r->ndoms; i++)
        if (r->doms[i]->id == id)
            return r->doms[i];
    if (r->ndoms == MAX_DOMAINS)
        return NULL;
    rdomain *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->id = id;
    d->last_time = r->info.start_time;
    r->doms[r->ndoms++] = d;
    return d;
}

static int grow_backtrace(mt_reader *r, rdomain *d, size_t need, const uint8_t *at)
{
    if (need > MAX_BACKTRACE)
        return fail_at(r, off_of(r, at), "backtrace longer than %u frames", MAX_BACKTRACE);
    size_t cap = d->bt_cap ? d->bt_cap : 256;
    while (cap < need)
        cap *= 2;
    mt_location_code *bt = realloc(d->bt, cap * sizeof *bt);
    if (!bt)
        return fail_at(r, off_of(r, at), "out of memory for a backtrace");
    d->bt = bt;
    d->bt_cap = cap;
    return 0;
}

/* -------------------------------------------------------------- primitives */

static int get_string(mt_reader *r, const uint8_t **pp, const char **s, size_t *len,
                      const char *what)
{
    const uint8_t *p = *pp;
    const uint8_t *nul = memchr(p, 0, (size_t)(r->end - p));
    if (!nul)
        return underflow(r, p, what);
    *s = (const char *)p;
    *len = (size_t)(nul - p);
    *pp = nul + 1;
    return 0;
}

static int get_interned(mt_reader *r, const uint8_t **pp, const char **out, const char *what)
{
    const char *s = NULL;
    size_t len = 0;
    if (get_string(r, pp, &s, &len, what) < 0)
        return -1;
    *out = mt_strtab_intern(&r->locs.strings, s, len);
    if (!*out)
        return fail_at(r, off_of(r, *pp), "out of memory");
    return 0;
}

static inline int get_vint(mt_reader *r, const uint8_t **pp, int64_t *v, const char *what)
{
    const uint8_t *p = *pp;
    if (p >= r->end || (size_t)(r->end - p) < mt_vint_size(*p))
        return underflow(r, p, what);
    *v = mt_get_vint(p);
    *pp = p + mt_vint_size(*p);
    return 0;
}

/* ------------------------------------------------------------ packet header */

typedef struct header {
    uint64_t size;       /* bytes, header included */
    int64_t begin, end;
    uint32_t flush;      /* flush_duration: our writer's end mark, or 0 */
    unsigned version, domain;
    uint64_t pid;
    unsigned verify_ix, verify_pred;
    uint64_t verify_val;
    uint64_t id_begin, id_end;
} header;

/* Reads the header at the input position. Returns 1 with *h set and the
 * whole packet available at r->in.data + r->in.pos, 0 at a clean end of
 * file (or a skipped truncated last packet), -1 on error. */
static int read_packet(mt_reader *r, header *h, int first)
{
    mt_input *in = &r->in;
    uint64_t off = mt_input_offset(in);
    size_t have = mt_input_fill(in, MT_HDR_SIZE_V3);
    if (in->error)
        return fail_at(r, off, "read error: %s", strerror(in->error));
    if (have == 0) {
        if (first)
            return fail_at(r, off, "empty file: no trace-info packet");
        return 0;
    }
    const uint8_t *p = in->data + in->pos;
    if (have >= 4 && mt_get32(p) != MT_MAGIC)
        return fail_at(r, off, "bad magic 0x%08x (expected 0x%08x): not a memtrace trace",
                       mt_get32(p), MT_MAGIC);
    if (have >= MT_HDR_VERSION + 2) {
        h->version = mt_get16(p + MT_HDR_VERSION);
        if (h->version < 1 || h->version > MT_MAX_VERSION)
            return fail_at(r, off + MT_HDR_VERSION,
                           "unsupported format version %u (this reader knows 1 to %d)",
                           h->version, MT_MAX_VERSION);
        if (!first && h->version != (unsigned)r->info.version)
            return fail_at(r, off + MT_HDR_VERSION,
                           "packet of format version %u in a version %d trace", h->version,
                           r->info.version);
    }
    size_t hs = have >= MT_HDR_VERSION + 2 && h->version >= 3 ? MT_HDR_SIZE_V3 : MT_HDR_SIZE_V2;
    if (have < hs) {
        if (first)
            return fail_at(r, off, "truncated packet header (%zu of %zu bytes)", have, hs);
        warn_at(r, off, "skipping truncated packet header at end of file (%zu of %zu bytes)",
                have, hs);
        in->pos += have;
        return 0;
    }
    uint32_t bits = mt_get32(p + MT_HDR_SIZE_BITS);
    if (bits % 8 != 0)
        return fail_at(r, off + MT_HDR_SIZE_BITS, "packet size %u bits is not whole bytes", bits);
    h->size = bits / 8;
    if (h->size < hs)
        return fail_at(r, off + MT_HDR_SIZE_BITS,
                       "packet size %llu bytes is smaller than its %zu-byte header",
                       (unsigned long long)h->size, hs);
    h->begin = (int64_t)mt_get64(p + MT_HDR_TIME_BEGIN);
    h->end = (int64_t)mt_get64(p + MT_HDR_TIME_END);
    h->flush = mt_get32(p + MT_HDR_FLUSH);
    h->pid = mt_get64(p + MT_HDR_PID);
    size_t shift = 0;
    h->domain = 0;
    if (h->version >= 3) {
        h->domain = mt_get16(p + MT_HDR_DOMAIN);
        shift = 2;
    }
    h->verify_ix = mt_get16(p + MT_HDR_VERIFY_IX + shift);
    h->verify_pred = mt_get16(p + MT_HDR_VERIFY_PRED + shift);
    h->verify_val = mt_get64(p + MT_HDR_VERIFY_VAL + shift) & MT_CODE_MASK;
    h->id_begin = mt_get64(p + MT_HDR_ID_BEGIN + shift);
    h->id_end = mt_get64(p + MT_HDR_ID_END + shift);
    if (h->begin > h->end)
        return fail_at(r, off + MT_HDR_TIME_BEGIN,
                       "packet begins at %lld us, after its end %lld us", (long long)h->begin,
                       (long long)h->end);
    if (h->id_begin > h->id_end)
        return fail_at(r, off + MT_HDR_ID_BEGIN + shift,
                       "packet's first allocation id %llu is after its end id %llu",
                       (unsigned long long)h->id_begin, (unsigned long long)h->id_end);
    have = mt_input_fill(in, h->size);
    if (in->error)
        return fail_at(r, off, "read error: %s", strerror(in->error));
    if (have < h->size) {
        if (first)
            return fail_at(r, off, "truncated trace-info packet (%zu of %llu bytes)", have,
                           (unsigned long long)h->size);
        warn_at(r, off, "skipping truncated packet at end of file (%zu of %llu bytes)", have,
                (unsigned long long)h->size);
        in->pos += have;
        return 0;
    }
    r->pkt = in->data + in->pos;
    r->pkt_off = off;
    r->p = r->pkt + hs;
    r->end = r->pkt + h->size;
    r->pkt_begin = h->begin;
    r->pkt_end = h->end;
    r->pkt_span = (uint64_t)h->end - (uint64_t)h->begin;
    in->pos += h->size;
    return 1;
}

/* --------------------------------------------------------------- trace info */

static inline int event_time(mt_reader *r, uint32_t hdr, const uint8_t *at, int64_t *t)
{
    /* Unsigned arithmetic: hostile headers must not overflow signed ints. */
    /* The event's low 25 bits, past the begin time's, with a wrap of the
     * 25-bit clock inside the packet folded in by the mask. */
    int64_t begin = r->pkt_begin;
    uint64_t ut = (uint64_t)begin + (((uint64_t)hdr - (uint64_t)begin) & MT_TIME_MASK);
    int64_t time = (int64_t)ut;
    if (time < begin || time > r->pkt_end)
        return fail_at(r, off_of(r, at),
                       "event time %lld us outside its packet's range [%lld, %lld]",
                       (long long)time, (long long)begin, (long long)r->pkt_end);
    *t = time;
    return 0;
}

static int read_info(mt_reader *r)
{
    header h;
    int rc = read_packet(r, &h, 1);
    if (rc <= 0)
        return -1;
    mt_trace_info *info = &r->info;
    info->version = (int)h.version;
    info->initial_domain = h.domain;
    info->start_time = h.begin;
    r->hdr_size = h.version >= 3 ? MT_HDR_SIZE_V3 : MT_HDR_SIZE_V2;

    const uint8_t *p = r->p;
    if (r->end - p < 4)
        return underflow(r, p, "trace-info event header");
    uint32_t ev = mt_get32(p);
    if (ev >> MT_TIME_BITS != MT_EV_INFO)
        return fail_at(r, off_of(r, p), "first event has code %u, expected trace info (0)",
                       ev >> MT_TIME_BITS);
    int64_t t = 0;
    if (event_time(r, ev, p, &t) < 0)
        return -1;
    if (t != h.begin)
        return fail_at(r, off_of(r, p), "trace-info time %lld differs from packet time %lld",
                       (long long)t, (long long)h.begin);
    p += 4;
    if (r->end - p < 9)
        return underflow(r, p, "trace-info event");
    uint64_t rate_bits = mt_get64(p);
    memcpy(&info->sample_rate, &rate_bits, sizeof info->sample_rate);
    info->word_size = p[8];
    p += 9;
    if (get_interned(r, &p, &info->executable_name, "executable name") < 0 ||
        get_interned(r, &p, &info->host_name, "host name") < 0 ||
        get_interned(r, &p, &info->ocaml_runtime_params, "runtime parameters") < 0)
        return -1;
    if (r->end - p < 8)
        return underflow(r, p, "trace-info pid");
    info->pid = mt_get64(p);
    p += 8;
    info->context = NULL;
    if (h.version >= 2) {
        const char *ctx;
        if (get_interned(r, &p, &ctx, "context") < 0)
            return -1;
        if (ctx[0])
            info->context = ctx;
    }
    if (p != r->end)
        return fail_at(r, off_of(r, p), "%zu unexpected bytes after the trace-info event",
                       (size_t)(r->end - p));
    r->p = r->end;
    r->expected_id = 0;
    return 0;
}

/* ------------------------------------------------------------ open / close */

/* The process's namer (mt_reader_set_namer), set before readers exist. */
static mt_name_fn process_namer;
static void *process_namer_ctx;

void mt_reader_set_namer(mt_name_fn fn, void *ctx)
{
    process_namer = fn;
    process_namer_ctx = ctx;
}

static mt_reader *reader_new(const char *name, const mt_reader_options *opts)
{
    mt_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->name = strdup(name ? name : "(trace)");
    if (!r->name) {
        free(r);
        return NULL;
    }
    if (opts)
        r->opts = *opts;
    if (!r->opts.skip_backtraces && !r->opts.raw_frames) {
        r->namer = process_namer;
        r->namer_ctx = process_namer_ctx;
    }
    mt_loctab_init(&r->locs);
    return r;
}

static mt_reader *reader_start(mt_reader *r, char **error)
{
    if (read_info(r) < 0) {
        if (error)
            *error = strdup(r->err);
        mt_reader_close(r);
        return NULL;
    }
    return r;
}

static char *oom_message(const char *name)
{
    char *m = NULL;
    if (asprintf(&m, "%s: offset 0: out of memory", name ? name : "(trace)") < 0)
        m = NULL;
    return m;
}

mt_reader *mt_reader_open_fd(int fd, const char *name, const mt_reader_options *opts,
                             char **error)
{
    mt_reader *r = reader_new(name, opts);
    if (!r) {
        if (error)
            *error = oom_message(name);
        return NULL;
    }
    mt_input_init_fd(&r->in, fd);
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        r->size = (uint64_t)st.st_size;
    return reader_start(r, error);
}

mt_reader *mt_reader_open(const char *path, const mt_reader_options *opts, char **error)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (error && asprintf(error, "%s: %s", path, strerror(errno)) < 0)
            *error = NULL;
        return NULL;
    }
    mt_reader *r = mt_reader_open_fd(fd, path, opts, error);
    if (!r) {
        close(fd);
        return NULL;
    }
    r->fd_owned = 1;
    r->verdicts = mtt_verdicts_load(path, &r->info, r->opts.on_warning, r->opts.warning_ctx);
    return r;
}

mt_reader *mt_reader_open_memory(const void *data, size_t size, const char *name,
                                 const mt_reader_options *opts, char **error)
{
    mt_reader *r = reader_new(name, opts);
    if (!r) {
        if (error)
            *error = oom_message(name);
        return NULL;
    }
    mt_input_init_memory(&r->in, data, size);
    r->size = size;
    return reader_start(r, error);
}

void mt_reader_close(mt_reader *r)
{
    if (!r)
        return;
    if (r->fd_owned)
        close(r->in.fd);
    mt_input_free(&r->in);
    for (unsigned i = 0; i < r->ndoms; i++) {
        free(r->doms[i]->bt);
        mt_mtf_free(&r->doms[i]->mtf);
        free(r->doms[i]);
    }
    mt_loctab_free(&r->locs);
    mtt_verdicts_free(r->verdicts);
    free(r->name);
    free(r);
}

const mt_trace_info *mt_reader_info(const mt_reader *r)
{
    return &r->info;
}

const char *mt_reader_error(const mt_reader *r)
{
    return r->failed ? r->err : NULL;
}

mt_timedelta mt_reader_end_time(const mt_reader *r)
{
    return r->last_end > r->info.start_time ? r->last_end - r->info.start_time : 0;
}

static void no_warning(void *ctx, const char *message)
{
    (void)ctx;
    (void)message;
}

int mt_trace_end_hint(const char *path, mt_timedelta *end)
{
    mt_reader_options o = {.on_warning = no_warning, .skip_backtraces = 1};
    mt_reader *r = mt_reader_open(path, &o, NULL);
    if (!r)
        return -1;
    struct stat st;
    int rc = -1;
    if (r->in.fd < 0 || fstat(r->in.fd, &st) != 0 || !S_ISREG(st.st_mode))
        goto out;
    uint64_t size = (uint64_t)st.st_size, off = mt_input_offset(&r->in);
    int64_t last = r->last_end;
    uint8_t h[MT_HDR_SIZE_V3];
    while (size - off >= MT_HDR_SIZE_V2) {
        size_t want = size - off < MT_HDR_SIZE_V3 ? (size_t)(size - off) : MT_HDR_SIZE_V3;
        if (pread(r->in.fd, h, want, (off_t)off) != (ssize_t)want)
            goto out;
        if (mt_get32(h) != MT_MAGIC || mt_get16(h + MT_HDR_VERSION) != (unsigned)r->info.version)
            goto out;
        size_t hs = r->info.version >= 3 ? MT_HDR_SIZE_V3 : MT_HDR_SIZE_V2;
        uint32_t bits = mt_get32(h + MT_HDR_SIZE_BITS);
        if (want < hs || bits % 8 != 0 || bits / 8 < hs)
            goto out;
        if (bits / 8 > size - off)
            break;   /* a packet cut short at the end: the reader skips it */
        int64_t b = (int64_t)mt_get64(h + MT_HDR_TIME_BEGIN), e = (int64_t)mt_get64(h + MT_HDR_TIME_END);
        if (b > e)
            goto out;
        if (mt_get64(h + MT_HDR_PID) == r->info.pid && e > last)
            last = e;
        off += bits / 8;
    }
    *end = last > r->info.start_time ? last - r->info.start_time : 0;
    rc = 0;
out:
    mt_reader_close(r);
    return rc;
}

int mt_reader_ended(const mt_reader *r)
{
    return r->end_marked;
}

int mt_reader_scan(const mt_reader *r, mt_timedelta *time)
{
    if (!r->verdicts)
        return 0;
    if (time) {
        int64_t t = mtt_verdicts_time(r->verdicts) - (int64_t)r->info.start_time;
        *time = t > 0 ? (mt_timedelta)t : 0;
    }
    return 1;
}

uint64_t mt_reader_offset(const mt_reader *r)
{
    return mt_input_offset(&r->in);
}

uint64_t mt_reader_size(const mt_reader *r)
{
    return r->size;
}

void mt_reader_swap_warning(mt_reader *r, mt_warning_fn *fn, void **ctx)
{
    mt_warning_fn f = r->opts.on_warning;
    void *c = r->opts.warning_ctx;
    r->opts.on_warning = *fn;
    r->opts.warning_ctx = *ctx;
    *fn = f;
    *ctx = c;
}

int mt_reader_lookup(const mt_reader *r, mt_location_code code, const mt_location **locs,
                     size_t *n)
{
    return mt_loctab_find(&r->locs, code, locs, n);
}

/* -------------------------------------------------------------- packets */

/* Moves to the next events packet worth decoding. 1: ready, 0: end, -1: error. */
static int next_packet(mt_reader *r)
{
    for (;;) {
        header h;
        int rc = read_packet(r, &h, 0);
        if (rc <= 0) {
            if (rc == 0)
                r->done = 1;
            return rc;
        }
        if (h.pid != r->info.pid) {
            warn_at(r, r->pkt_off, "skipping packet from pid %llu (trace pid %llu)",
                    (unsigned long long)h.pid, (unsigned long long)r->info.pid);
            continue;
        }
        rdomain *d = get_domain(r, h.domain);
        if (!d)
            return fail_at(r, r->pkt_off + MT_HDR_DOMAIN,
                           r->ndoms == MAX_DOMAINS ? "more than %d domains"
                                                   : "out of memory (%d domains)",
                           MAX_DOMAINS);
        if (h.version < 3 && (h.id_begin != r->expected_id || h.begin < d->last_time)) {
            /* What memtrace 0.2.x does with packets out of sequence. */
            warn_at(r, r->pkt_off,
                    "skipping packet out of sequence (ids %llu-%llu, expected %llu)",
                    (unsigned long long)h.id_begin, (unsigned long long)h.id_end,
                    (unsigned long long)r->expected_id);
            continue;
        }
        if (h.version >= 3 && h.id_begin < h.id_end) {
            /* A domain draws its chunks of ids from one counter that only
             * goes up: ids that go back would name two allocations alike
             * (reports would mix them up, each in its own way). */
            if (h.id_begin < d->ids_end)
                return fail_at(r, r->pkt_off + MT_HDR_ID_BEGIN + 2,
                               "domain %u's allocation ids go back: the packet's first id "
                               "is %llu, its previous packet ended at %llu",
                               d->id, (unsigned long long)h.id_begin,
                               (unsigned long long)d->ids_end);
            d->ids_end = h.id_end;
        }
        if (h.verify_ix != MT_NO_VERIFY && !r->opts.skip_backtraces) {
            size_t shift = h.version >= 3 ? 2 : 0;
            if (h.verify_ix >= MT_CACHE_SIZE)
                return fail_at(r, r->pkt_off + MT_HDR_VERIFY_IX + shift,
                               "cache verification slot %u out of range", h.verify_ix);
            if (d->cache[h.verify_ix] != h.verify_val || d->pred[h.verify_ix] != h.verify_pred)
                return fail_at(r, r->pkt_off + MT_HDR_VERIFY_IX + shift,
                               "cache verification failed at slot %u: expected code 0x%llx "
                               "and prediction %u, decoder has 0x%llx and %u",
                               h.verify_ix, (unsigned long long)h.verify_val, h.verify_pred,
                               (unsigned long long)d->cache[h.verify_ix],
                               d->pred[h.verify_ix]);
        }
        if (h.end > r->last_end)
            r->last_end = h.end;
        r->end_marked = h.flush == MT_FLUSH_END_MARK;
        r->carried = h.flush == MT_FLUSH_CARRY_MARK;
        r->dom = d;
        r->next_id = h.id_begin;
        r->id_end = h.id_end;
        r->in_packet = 1;
        return 1;
    }
}

/* ------------------------------------------------------------- events */

/* The reader's interned copy of a name-table entry (made once per entry). */
static const char *interned_name(mt_reader *r, mt_mtf_name *n)
{
    if (!n->interned)
        n->interned = mt_strtab_intern(&r->locs.strings, n->str, strlen(n->str));
    return n->interned;
}

/* The namer's locations for a list holding a raw frame, their strings
 * interned, into out; 0 when it has no raw frame or the namer keeps it. */
static size_t name_raw(mt_reader *r, const mt_location *locs, size_t n, mt_location *out)
{
    uint64_t off;
    size_t i = 0;
    while (i < n && !mt_raw_parse(locs[i].filename, locs[i].defname, locs[i].line, &off))
        i++;
    if (i == n)
        return 0;
    size_t k = r->namer(r->namer_ctx, r->name, locs, n, out, 255);
    if (k > 255)
        k = 0;
    for (size_t j = 0; j < k; j++) {
        const char *f = out[j].filename ? out[j].filename : "";
        const char *d = out[j].defname ? out[j].defname : "??";
        out[j].filename = mt_strtab_intern(&r->locs.strings, f, strlen(f));
        out[j].defname = mt_strtab_intern(&r->locs.strings, d, strlen(d));
        if (!out[j].filename || !out[j].defname)
            return 0;   /* out of memory: the trace's own locations */
    }
    return k;
}

/* A location event. Its names go through the domain's move-to-front tables
 * (which keep their own copies), and the list is summed up by a hash of its
 * content. Names are interned, and the list stored, only when the code is
 * new; a code described again (each time it misses the writer's cache) is
 * only checked against the hash. */
static int read_location(mt_reader *r, const uint8_t *p, const uint8_t *evstart)
{
    mt_location locs[255];
    if (r->end - p < 9)
        return underflow(r, p, "location event");
    mt_location_code code = mt_get64(p) & MT_CODE_MASK;
    unsigned n = p[8];
    p += 9;
    uint64_t known_hash = 0;
    int known = mt_loctab_hash(&r->locs, code, &known_hash);
    uint64_t hash = mt_hash_mix(0, n);
    for (unsigned i = 0; i < n; i++) {
        if (r->end - p < 6)
            return underflow(r, p, "location record");
        uint64_t bits = mt_get32(p) | ((uint64_t)mt_get16(p + 4) << 32);
        const uint8_t *rec = p;
        p += 6;
        unsigned fcode = (unsigned)(bits >> 38) & 31, dcode = (unsigned)(bits >> 43) & 31;
        const char *flit = NULL, *dlit = NULL;
        size_t flen = 0, dlen = 0;
        if (fcode == MT_MTF_LITERAL && get_string(r, &p, &flit, &flen, "file name") < 0)
            return -1;
        if (dcode == MT_MTF_LITERAL && get_string(r, &p, &dlit, &dlen, "function name") < 0)
            return -1;
        mt_mtf_name *file, *def;
        int rc = mt_mtf_decode(&r->dom->mtf, fcode, flit, flen, dcode, dlit, dlen, &file, &def);
        if (rc == -1)
            return fail_at(r, off_of(r, rec), "file name code %u refers to an empty table slot",
                           fcode);
        if (rc == -2)
            return fail_at(r, off_of(r, rec),
                           "function name code %u refers to an empty table slot", dcode);
        if (rc < 0)
            return fail_at(r, off_of(r, rec), "out of memory");
        uint64_t pos = bits & 0x3FFFFFFFFFull; /* line, start and end columns */
        hash = mt_hash_mix(mt_hash_mix(mt_hash_mix(hash, pos), file->hash), def->hash);
        if (known)
            continue;
        locs[i].filename = interned_name(r, file);
        locs[i].defname = interned_name(r, def);
        if (!locs[i].filename || !locs[i].defname)
            return fail_at(r, off_of(r, rec), "out of memory");
        locs[i].line = (uint32_t)(bits & MT_LOC_LINE_MAX);
        locs[i].start_char = (uint32_t)(bits >> 20) & MT_LOC_START_MAX;
        locs[i].end_char = (uint32_t)(bits >> 28) & MT_LOC_END_MAX;
    }
    size_t keep = n;
    const mt_location *list = locs;
    mt_location named[255];
    if (!known && r->namer && n > 0) {
        size_t k = name_raw(r, locs, n, named);
        if (k > 0) {
            list = named;
            keep = k;
        }
    }
    /* (the hash stays the trace's: a code described again is checked
     * against what the trace said) */
    int rc = known ? (known_hash == hash >> 8 ? 1 : 2) : mt_loctab_add(&r->locs, code, list, keep, hash);
    if (rc < 0)
        return fail_at(r, off_of(r, evstart), "out of memory for locations");
    if (rc == 2)
        return fail_at(r, off_of(r, evstart),
                       "location event for code 0x%llx contradicts an earlier one",
                       (unsigned long long)code);
    r->p = p;
    return 0;
}

/* Decodes nenc codewords into the domain's backtrace; see docs/format.md,
 * "Backtraces". Returns the pointer after them, NULL on error. */
static const uint8_t *read_backtrace(mt_reader *r, const uint8_t *p, uint64_t cp,
                                     unsigned nenc, mt_event *ev)
{
    rdomain *d = r->dom;
    const uint8_t *end = r->end;
    if (r->opts.skip_backtraces) {
        for (unsigned i = 0; i < nenc; i++) {
            if (end - p < 2)
                return underflow(r, p, "backtrace codeword"), NULL;
            unsigned tag = p[0] & 3;
            size_t extra = tag == 3 ? 8 : tag == 2 ? 1 : 0;
            if ((size_t)(end - p) < 2 + extra)
                return underflow(r, p, "backtrace codeword"), NULL;
            p += 2 + extra;
        }
        ev->backtrace = no_frames;
        ev->backtrace_length = 0;
        return p;
    }
    size_t prev_len = d->bt_len;
    /* After a truncated backtrace the prefix can exceed what we have: decode
     * anyway (to keep the cache in step), then repeat the previous one. */
    size_t n = cp <= prev_len ? (size_t)cp : prev_len;
    /* Room for the most frames these codewords can give (256 each; the
     * packet's bytes bound how many codewords there really are), so that
     * the loop below needs no capacity checks. */
    size_t words = (size_t)(end - p) / 2;
    size_t need = n + (nenc < words ? nenc : words) * 256 + 1;
    if (need > d->bt_cap && grow_backtrace(r, d, need, p) < 0)
        return NULL;
    mt_location_code *bt = d->bt;
    unsigned prev = 0;
    for (unsigned i = 0; i < nenc; i++) {
        if (end - p < 2)
            return underflow(r, p, "backtrace codeword"), NULL;
        unsigned w = mt_get16(p);
        p += 2;
        unsigned b = w >> 2;
        d->pred[prev] = (uint16_t)b;
        switch (w & 3) {
        case 3:
            if (end - p < 8)
                return underflow(r, p, "backtrace code"), NULL;
            bt[n++] = d->cache[b] = mt_get64(p) & MT_CODE_MASK;
            p += 8;
            prev = b;
            break;
        case 0:
            bt[n++] = d->cache[b];
            prev = b;
            break;
        case 1:
            bt[n++] = d->cache[b];
            prev = d->pred[b];
            bt[n++] = d->cache[prev];
            break;
        default: {
            if (p >= end)
                return underflow(r, p, "prediction count"), NULL;
            unsigned k = *p++;
            bt[n++] = d->cache[b];
            for (; k > 0; k--) {
                b = d->pred[b];
                bt[n++] = d->cache[b];
            }
            prev = b;
        }
        }
    }
    if (cp <= prev_len)
        d->bt_len = n;
    ev->backtrace = d->bt ? d->bt : no_frames;
    ev->backtrace_length = d->bt_len;
    return p;
}

/* The slow side of mt_reader_next, kept out of line: fewer than 4 bytes
 * left in the packet. Ends the packet (checking its id count) and moves to
 * the next one; also where a finished or failed reader stops. Returns 1 to
 * go on, 0 at the end, -1 on error. */
static __attribute__((noinline)) int packet_boundary(mt_reader *r)
{
    if (r->failed)
        return -1;
    if (r->done)
        return 0;
    if (r->p != r->end)
        return underflow(r, r->p, "event header");
    if (r->in_packet) {
        r->in_packet = 0;
        if (r->next_id != r->id_end)
            return fail_at(r, r->pkt_off + MT_HDR_ID_END + (r->hdr_size - MT_HDR_SIZE_V2),
                           "packet declares allocation ids up to %llu but its "
                           "allocations end at %llu",
                           (unsigned long long)r->id_end, (unsigned long long)r->next_id);
        if (r->info.version < 3)
            r->expected_id = r->next_id;
    }
    int rc = next_packet(r);
    if (rc <= 0) {
        r->p = r->end = NULL; /* every later call comes back here */
        return r->failed ? -1 : 0;
    }
    return 1;
}

/* The careful decoder: the next event or packet boundary with every check
 * and error message. Returns 1 with *ev filled, 0 at the end, -1 on error, 2
 * when it consumed something that is not an event (a location event, a
 * packet boundary). */
static __attribute__((noinline)) int next_careful(mt_reader *r, mt_event *ev)
{
    const uint8_t *p = r->p;
    if (__builtin_expect(r->end - p < 4, 0)) {
        int rc = packet_boundary(r);
        if (rc <= 0)
            return rc;
        return 2;
    }
    const uint8_t *evstart = p;
    uint32_t hdr = mt_get32(p);
    p += 4;
    int64_t t = 0;
    if (event_time(r, hdr, evstart, &t) < 0)
        return -1;
    rdomain *d = r->dom;
    if (t < d->last_time)
        return fail_at(r, off_of(r, evstart),
                       "event time %lld us is before the previous event's %lld us",
                       (long long)t, (long long)d->last_time);
    d->last_time = t;
    unsigned code = hdr >> MT_TIME_BITS;
    ev->time = (int64_t)((uint64_t)t - (uint64_t)r->info.start_time);
    ev->domain = d->id;
    int64_t v = 0;
    switch (code) {
    case MT_EV_INFO:
        return fail_at(r, off_of(r, evstart), "a second trace-info event");
    case MT_EV_LOCATION:
        if (read_location(r, p, evstart) < 0)
            return -1;
        return 2;
    case MT_EV_PROMOTE:
    case MT_EV_COLLECT: {
        if (get_vint(r, &p, &v, "object delta") < 0)
            return -1;
        if (v < 0 && (code == MT_EV_PROMOTE || r->info.version < 3))
            return fail_at(r, off_of(r, evstart), "negative object delta %lld",
                           (long long)v);
        if (v >= 0 && (uint64_t)v >= r->next_id)
            return fail_at(r, off_of(r, evstart),
                           "%s delta %lld refers to an object before id 0",
                           code == MT_EV_PROMOTE ? "promotion" : "collection",
                           (long long)v);
        ev->kind = code == MT_EV_PROMOTE ? MT_EVENT_PROMOTE : MT_EVENT_COLLECT;
        ev->id = r->next_id - 1 - (uint64_t)v;
        ev->length = ev->n_samples = 0;
        ev->source = MT_SOURCE_MINOR;
        ev->backtrace = no_frames;
        ev->backtrace_length = ev->common_prefix = 0;
        r->p = p;
        return 1;
    }
    case MT_EV_ALLOC: {
        int64_t len = 0, ns = 0, cp = 0;
        if (get_vint(r, &p, &len, "allocation length") < 0 ||
            get_vint(r, &p, &ns, "sample count") < 0)
            return -1;
        if (p >= r->end)
            return underflow(r, p, "allocation source");
        unsigned src = *p++;
        if (src > MT_SOURCE_EXTERNAL)
            return fail_at(r, off_of(r, p - 1), "bad allocation source %u", src);
        if (get_vint(r, &p, &cp, "common prefix") < 0)
            return -1;
        if (r->end - p < 2)
            return underflow(r, p, "codeword count");
        unsigned nenc = mt_get16(p);
        p += 2;
        if (cp < 0)
            return fail_at(r, off_of(r, evstart), "negative common prefix %lld",
                           (long long)cp);
        ev->length = (uint64_t)len;
        ev->n_samples = (uint64_t)ns;
        ev->source = (mt_source)src;
        ev->common_prefix = (size_t)cp;
        p = read_backtrace(r, p, (uint64_t)cp, nenc, ev);
        break;
    }
    default: {
        if (code <= MT_EV_SHORT_ALLOC || code > MT_EV_SHORT_ALLOC + 16)
            return fail_at(r, off_of(r, evstart), "unknown event code %u", code);
        int64_t cp = 0;
        if (get_vint(r, &p, &cp, "common prefix") < 0)
            return -1;
        if (p >= r->end)
            return underflow(r, p, "codeword count");
        unsigned nenc = *p++;
        if (cp < 0)
            return fail_at(r, off_of(r, evstart), "negative common prefix %lld",
                           (long long)cp);
        ev->length = code - MT_EV_SHORT_ALLOC;
        ev->n_samples = 1;
        ev->source = MT_SOURCE_MINOR;
        ev->common_prefix = (size_t)cp;
        p = read_backtrace(r, p, (uint64_t)cp, nenc, ev);
    }
    }
    if (!p)
        return -1;
    MT_ASSERT(p <= r->end);   /* the position never passes the packet's end */
    ev->kind = MT_EVENT_ALLOC;
    ev->id = r->next_id++;
    r->p = p;
    return 1;
}

/* ------------------------------------------------------------- fast path */

/* Bytes an event header and its fields can take at most (an allocation:
 * 4 + vint + vint + 1 + vint + 2), and a backtrace codeword (u16 + u64). */
#define FAST_ROOM 36
#define MAX_CODEWORD 10

/* Decodes nenc codewords at p (all within the packet: checked by the caller)
 * after the n frames kept from the previous backtrace; d->bt has room for
 * them. Returns the pointer past them and sets *len. */
static inline const uint8_t *fast_backtrace(rdomain *d, const uint8_t *p, size_t n,
                                            unsigned nenc, size_t *len)
{
    mt_location_code *bt = d->bt;
    uint64_t *cache = d->cache;
    uint16_t *pred = d->pred;
    unsigned prev = 0;
    for (unsigned i = 0; i < nenc; i++) {
        unsigned w = mt_get16(p);
        p += 2;
        unsigned b = w >> 2;
        pred[prev] = (uint16_t)b;
        unsigned tag = w & 3;
        if (__builtin_expect(tag == 0, 1)) {
            bt[n++] = cache[b];
            prev = b;
        } else if (tag == 1) {
            bt[n++] = cache[b];
            prev = pred[b];
            bt[n++] = cache[prev];
        } else if (tag == 3) {
            bt[n++] = cache[b] = mt_get64(p) & MT_CODE_MASK;
            p += 8;
            prev = b;
        } else {
            unsigned k = *p++;
            bt[n++] = cache[b];
            for (; k > 0; k--) {
                b = pred[b];
                bt[n++] = cache[b];
            }
            prev = b;
        }
    }
    *len = n;
    return p;
}

/* Skips nenc codewords at p (all within the packet). */
static inline const uint8_t *skip_codewords(const uint8_t *p, unsigned nenc)
{
    for (unsigned i = 0; i < nenc; i++) {
        unsigned tag = p[0] & 3;
        p += 2 + (tag == 3 ? 8 : tag == 2 ? 1 : 0);
    }
    return p;
}

/* The common case, decoded with as few tests as possible: an allocation,
 * promotion or collection well inside its packet, with nothing wrong with
 * it. Returns 1 with *ev filled, or 0 without having changed anything, for
 * the careful decoder to take over (it also gives the exact error). */
static inline int next_fast(mt_reader *r, mt_event *ev)
{
    const uint8_t *p = r->p, *end = r->end;
    if (__builtin_expect(end - p < FAST_ROOM, 0))
        return 0;
    uint32_t hdr = mt_get32(p);
    uint64_t delta = ((uint64_t)hdr - (uint64_t)r->pkt_begin) & MT_TIME_MASK;
    int64_t t = (int64_t)((uint64_t)r->pkt_begin + delta);
    rdomain *d = r->dom;
    if (__builtin_expect(delta > r->pkt_span || t < d->last_time, 0))
        return 0;
    unsigned code = hdr >> MT_TIME_BITS;
    p += 4;
    int64_t cp;
    unsigned nenc;
    if (code - (MT_EV_SHORT_ALLOC + 1) < 16) {
        cp = mt_get_vint(p);
        p += mt_vint_size(*p);
        nenc = *p++;
        ev->length = code - MT_EV_SHORT_ALLOC;
        ev->n_samples = 1;
        ev->source = MT_SOURCE_MINOR;
    } else if (code == MT_EV_COLLECT || code == MT_EV_PROMOTE) {
        int64_t v = mt_get_vint(p);
        p += mt_vint_size(*p);
        /* Negative deltas (v3 collections) and bad ones: careful path. */
        if (__builtin_expect(v < 0 || (uint64_t)v >= r->next_id, 0))
            return 0;
        d->last_time = t;
        ev->time = (int64_t)((uint64_t)t - (uint64_t)r->info.start_time);
        ev->domain = d->id;
        ev->kind = code == MT_EV_PROMOTE ? MT_EVENT_PROMOTE : MT_EVENT_COLLECT;
        ev->id = r->next_id - 1 - (uint64_t)v;
        ev->length = ev->n_samples = 0;
        ev->source = MT_SOURCE_MINOR;
        ev->backtrace = no_frames;
        ev->backtrace_length = ev->common_prefix = 0;
        r->p = p;
        return 1;
    } else if (code == MT_EV_ALLOC) {
        int64_t len = mt_get_vint(p);
        p += mt_vint_size(*p);
        int64_t ns = mt_get_vint(p);
        p += mt_vint_size(*p);
        unsigned src = *p++;
        cp = mt_get_vint(p);
        p += mt_vint_size(*p);
        nenc = mt_get16(p);
        p += 2;
        if (__builtin_expect(src > MT_SOURCE_EXTERNAL, 0))
            return 0;
        ev->length = (uint64_t)len;
        ev->n_samples = (uint64_t)ns;
        ev->source = (mt_source)src;
    } else {
        return 0; /* location events, errors */
    }
    /* An allocation: its codewords must lie within the packet, its prefix
     * within the previous backtrace, and the backtrace fit the buffer. */
    if (__builtin_expect(cp < 0 || (size_t)(end - p) < (size_t)nenc * MAX_CODEWORD, 0))
        return 0;
    size_t n;
    if (r->opts.skip_backtraces) {
        p = skip_codewords(p, nenc);
        ev->backtrace = no_frames;
        n = 0;
    } else {
        if (__builtin_expect((uint64_t)cp > d->bt_len ||
                                 (size_t)cp + (size_t)nenc * 256 + 1 > d->bt_cap,
                             0))
            return 0;
        p = fast_backtrace(d, p, (size_t)cp, nenc, &n);
        MT_ASSERT(n <= d->bt_cap && p <= end);   /* the bounds checked above held */
        d->bt_len = n;
        ev->backtrace = d->bt;
    }
    d->last_time = t;
    ev->time = (int64_t)((uint64_t)t - (uint64_t)r->info.start_time);
    ev->domain = d->id;
    ev->kind = MT_EVENT_ALLOC;
    ev->id = r->next_id++;
    ev->backtrace_length = n;
    ev->common_prefix = (size_t)cp;
    r->p = p;
    return 1;
}

int mt_reader_next(mt_reader *r, mt_event *ev)
{
    for (;;) {
        if (__builtin_expect(next_fast(r, ev), 1)) {
            ev->carried = r->carried;   /* (a carried packet holds allocations only) */
            ev->verdict = r->verdicts && ev->kind == MT_EVENT_ALLOC
                              ? mtt_verdict_of(r->verdicts, ev->id) : MT_VERDICT_NONE;
            return 1;
        }
        int rc = next_careful(r, ev);
        if (rc != 2) {
            ev->carried = rc == 1 && r->carried && ev->kind == MT_EVENT_ALLOC;
            ev->verdict = rc == 1 && r->verdicts && ev->kind == MT_EVENT_ALLOC
                              ? mtt_verdict_of(r->verdicts, ev->id) : MT_VERDICT_NONE;
            return rc;
        }
    }
}
