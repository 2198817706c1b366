/*
 * cmd_recode.c - 'memtrace recode': decodes a trace and writes every event
 * again with the writer, in the input's format version or another one.
 * Re-encoding a trace written by memtrace gives back the same bytes, which
 * makes this both a converter (v2 <-> v3) and a check of the codec.
 *
 * With --threads 2, decoding and encoding run in two threads joined by a
 * ring of event batches (see "Two-thread pipeline" below): no lock, and the
 * writer never touches the reader's tables.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "commands.h"
#include "memtrace/trace.h"

static const char usage_text[] =
    "usage: memtrace recode [OPTIONS] IN OUT\n"
    "\n"
    "Decode the trace IN and write its events to OUT ('-' for standard output)\n"
    "with memtrace's encoding rules. By default OUT has IN's format version\n"
    "(version 1 traces are written as version 2). Skipped packets of IN are\n"
    "reported on stderr and left out.\n"
    "\n"
    "Options:\n"
    "  -V, --format-version N   write format version N: 2 (readable by every\n"
    "                           memtrace release) or 3\n"
    "  -j, --threads N          1 (the default): decode and encode in one\n"
    "                           thread; 2: in two (faster on an idle machine\n"
    "                           with spare CPUs, slower on a busy one)\n"
    "  -h, --help               show this help\n"
    "\n"
    "Example:\n"
    "  memtrace recode --format-version 3 app.ctf app-v3.ctf\n";

static void on_warning(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "memtrace recode: warning: %s\n", msg);
}

/* Output buffered in 1 MiB blocks: fewer system calls than one per packet
 * (a recorder writes packets one by one; a converter need not). */
typedef struct outbuf {
    int fd;
    size_t len;
    unsigned char data[1 << 20];
} outbuf;

static int out_flush(outbuf *o)
{
    size_t off = 0;
    while (off < o->len) {
        ssize_t n = write(o->fd, o->data + off, o->len - off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        off += (size_t)n;
    }
    o->len = 0;
    return 0;
}

static int out_write(void *ctx, const void *buf, size_t len)
{
    outbuf *o = ctx;
    if (o->len + len > sizeof o->data && out_flush(o) < 0)
        return -1;
    if (len > sizeof o->data) {
        const unsigned char *p = buf;
        while (len > 0) {
            ssize_t n = write(o->fd, p, len);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                return -1;
            }
            p += n;
            len -= (size_t)n;
        }
        return 0;
    }
    memcpy(o->data + o->len, buf, len);
    o->len += len;
    return 0;
}

static int resolve(void *ctx, mt_location_code code, const mt_location **locs, size_t *n)
{
    return mt_reader_lookup(ctx, code, locs, n);
}

/* ------------------------------------------------------------------ */
/* Two-thread pipeline                                                 */

/* The decoding thread fills batches of events in a ring; the main thread
 * encodes them in order. Each side owns the batches between its two
 * counters, so the only shared state is the counters themselves (and a
 * sleeping side's "waiting" flag). A batch carries:
 *  - its events, with only the new frames of each allocation (the frames
 *    it shares with the previous allocation are already in the encoder's
 *    copy of the previous backtrace);
 *  - the locations of the codes that appear in it for the first time, looked
 *    up by the decoding thread (which owns the reader), so that the writer
 *    never touches the reader's tables: a code's locations are the ones the
 *    trace has described by the time the code is first decoded (memtrace
 *    writes them before any use). */

#define BATCH_EVENTS 4096
#define NBATCHES 8       /* power of two */
#define SPIN 2000        /* polls before sleeping */
#define SENT_BITS 14     /* decoder's table of codes already sent */

typedef struct pev {
    int64_t time;
    uint64_t id;
    uint64_t a, b;          /* alloc: length, n_samples */
    uint32_t keep, nnew;    /* alloc: shared frames, new frames */
    unsigned char kind, source;
} pev;

typedef struct newloc {
    mt_location_code code;
    const mt_location *locs; /* the reader's, valid until it is closed */
    size_t n;
} newloc;

typedef struct batch {
    pev ev[BATCH_EVENTS];
    size_t nev;
    mt_location_code *frames;
    size_t nframes, frames_cap;
    newloc *locs;
    size_t nlocs, locs_cap;
    int status;             /* 1: more follow; 0: the last; -1: decoding failed */
} batch;

/* A counter one side advances and the other waits on. */
typedef struct counter {
    _Atomic uint32_t value;
    _Atomic uint32_t wake_at;  /* the sleeper's target */
    _Atomic int sleeping;
} counter;

typedef struct pipe_state {
    mt_reader *r;
    unsigned domain;
    batch *batches;
    counter produced, consumed;  /* batches filled / encoded so far */
    _Atomic int stop;            /* the encoder gave up */
    char error[600];
} pipe_state;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static inline int reached(uint32_t value, uint32_t target)
{
    return (int32_t)(value - target) >= 0; /* counters wrap */
}

/* Waits until c->value reaches target (or *stop is set): a short spin (the
 * other side is usually microseconds away), then futex sleeps. The
 * sequentially consistent flag store / value load here and value increment /
 * flag load in advance() make sure that a sleeper is woken. */
static void wait_until(counter *c, uint32_t target, _Atomic int *stop)
{
    for (int i = 0; i < SPIN; i++) {
        if (reached(atomic_load_explicit(&c->value, memory_order_acquire), target))
            return;
        cpu_relax();
    }
    atomic_store(&c->wake_at, target);
    atomic_store(&c->sleeping, 1);
    uint32_t v;
    while (!reached(v = atomic_load(&c->value), target) && !(stop && atomic_load(stop)))
        syscall(SYS_futex, (uint32_t *)&c->value, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
    atomic_store(&c->sleeping, 0);
}

/* Adds one to c->value and wakes the sleeper if it reached its target (or
 * always, when force is set). */
static void advance(counter *c, int force)
{
    uint32_t v = atomic_fetch_add(&c->value, 1) + 1;
    if (atomic_load(&c->sleeping) && (force || reached(v, atomic_load(&c->wake_at))))
        syscall(SYS_futex, (uint32_t *)&c->value, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static int grow(void **arr, size_t *cap, size_t need, size_t size)
{
    size_t c = *cap ? *cap : 4096;
    while (c < need)
        c *= 2;
    void *grown = realloc(*arr, c * size);
    if (!grown)
        return -1;
    *arr = grown;
    *cap = c;
    return 0;
}

/* Decoding thread. sent[] remembers codes whose locations went out already
 * (direct-mapped: forgetting one only sends it again). */
static void *producer(void *arg)
{
    pipe_state *ps = arg;
    mt_reader *r = ps->r;
    mt_location_code *sent = calloc((size_t)1 << SENT_BITS, sizeof *sent);
    size_t prev_len = 0;
    uint32_t slot = 0;
    int rc = sent ? 1 : -1;
    if (!sent)
        snprintf(ps->error, sizeof ps->error, "out of memory");
    for (;;) {
        /* Ring full: wait until half of it is free again (one wake-up per
         * half ring rather than per batch when decoding is the faster side). */
        if (slot - atomic_load_explicit(&ps->consumed.value, memory_order_acquire) == NBATCHES)
            wait_until(&ps->consumed, slot - NBATCHES / 2, &ps->stop);
        if (atomic_load_explicit(&ps->stop, memory_order_relaxed))
            break;
        batch *b = &ps->batches[slot % NBATCHES];
        b->nev = b->nframes = b->nlocs = 0;
        mt_event ev;
        while (rc == 1 && b->nev < BATCH_EVENTS && (rc = mt_reader_next(r, &ev)) == 1) {
            if (ev.domain != ps->domain) {
                snprintf(ps->error, sizeof ps->error,
                         "events of several domains: re-encoding multi-domain traces is not "
                         "supported");
                rc = -1;
                break;
            }
            pev *e = &b->ev[b->nev++];
            e->kind = (unsigned char)ev.kind;
            e->time = ev.time;
            e->id = ev.id;
            if (ev.kind != MT_EVENT_ALLOC)
                continue;
            e->a = ev.length;
            e->b = ev.n_samples;
            e->source = (unsigned char)ev.source;
            /* The reader keeps the shared prefix in place: only new frames travel. */
            size_t keep = ev.common_prefix < prev_len ? ev.common_prefix : prev_len;
            size_t nnew = ev.backtrace_length - keep;
            prev_len = ev.backtrace_length;
            e->keep = (uint32_t)keep;
            e->nnew = (uint32_t)nnew;
            if (b->nframes + nnew > b->frames_cap &&
                grow((void **)&b->frames, &b->frames_cap, b->nframes + nnew,
                     sizeof *b->frames) < 0) {
                snprintf(ps->error, sizeof ps->error, "out of memory");
                rc = -1;
                break;
            }
            const mt_location_code *f = ev.backtrace + keep;
            mt_location_code *to = b->frames + b->nframes;
            b->nframes += nnew;
            for (size_t i = 0; i < nnew; i++) {
                mt_location_code c = f[i];
                to[i] = c;
                size_t h = (size_t)((c * 0x9E3779B97F4A7C15ull) >> (64 - SENT_BITS));
                if (sent[h] == c)
                    continue;
                newloc nl = {.code = c};
                if (mt_reader_lookup(r, c, &nl.locs, &nl.n) < 0)
                    continue; /* not described (yet): looked up again next time */
                if (b->nlocs == b->locs_cap &&
                    grow((void **)&b->locs, &b->locs_cap, b->nlocs + 1, sizeof *b->locs) < 0) {
                    snprintf(ps->error, sizeof ps->error, "out of memory");
                    rc = -1;
                    break;
                }
                b->locs[b->nlocs++] = nl;
                sent[h] = c;
            }
        }
        if (rc < 0 && !ps->error[0])
            snprintf(ps->error, sizeof ps->error, "%s", mt_reader_error(r));
        b->status = rc;
        slot++;
        advance(&ps->produced, 0);
        if (rc != 1)
            break;
    }
    free(sent);
    return NULL;
}

/* The encoder's table code -> locations, filled from the batches. */
typedef struct locmap {
    newloc *slots; /* locs == NULL: empty */
    size_t mask, count;
} locmap;

static size_t locmap_hash(mt_location_code c)
{
    return (size_t)((c * 0x9E3779B97F4A7C15ull) >> 17);
}

static int locmap_put(locmap *m, const newloc *nl)
{
    if ((m->count + 1) * 2 > m->mask + 1) {
        size_t cap = m->slots ? (m->mask + 1) * 2 : 4096;
        newloc *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return -1;
        for (size_t i = 0; m->slots && i <= m->mask; i++) {
            if (!m->slots[i].locs)
                continue;
            size_t j = locmap_hash(m->slots[i].code) & (cap - 1);
            while (slots[j].locs)
                j = (j + 1) & (cap - 1);
            slots[j] = m->slots[i];
        }
        free(m->slots);
        m->slots = slots;
        m->mask = cap - 1;
    }
    size_t j = locmap_hash(nl->code) & m->mask;
    while (m->slots[j].locs && m->slots[j].code != nl->code)
        j = (j + 1) & m->mask;
    if (!m->slots[j].locs)
        m->count++;
    m->slots[j] = *nl;
    return 0;
}

static int locmap_resolve(void *ctx, mt_location_code code, const mt_location **locs, size_t *n)
{
    const locmap *m = ctx;
    if (!m->slots)
        return -1;
    for (size_t j = locmap_hash(code) & m->mask; m->slots[j].locs; j = (j + 1) & m->mask) {
        if (m->slots[j].code == code) {
            *locs = m->slots[j].locs;
            *n = m->slots[j].n;
            return 0;
        }
    }
    return -1;
}

/* Runs the pipeline; returns 0, or 1 after printing why it failed. */
static int recode_threaded(mt_reader *r, mt_writer *w, pipe_state *ps, locmap *map,
                           const char *in, const char *out)
{
    const mt_trace_info *info = mt_reader_info(r);
    pthread_t th;
    if (pthread_create(&th, NULL, producer, ps) != 0) {
        fprintf(stderr, "memtrace recode: cannot start a thread\n");
        return 1;
    }
    mt_location_code *bt = NULL;
    size_t bt_cap = 0;
    uint32_t slot = 0;
    int failed = 0, status = 1;
    while (!failed && status == 1) {
        wait_until(&ps->produced, slot + 1, NULL);
        const batch *b = &ps->batches[slot % NBATCHES];
        status = b->status;
        for (size_t i = 0; i < b->nlocs; i++) {
            if (locmap_put(map, &b->locs[i]) < 0) {
                fprintf(stderr, "memtrace recode: out of memory\n");
                failed = 1;
                break;
            }
        }
        const mt_location_code *frames = b->frames;
        for (size_t i = 0; i < b->nev && !failed; i++) {
            const pev *e = &b->ev[i];
            mt_timestamp now = (int64_t)((uint64_t)info->start_time + (uint64_t)e->time);
            int rc;
            if (e->kind == MT_EVENT_ALLOC) {
                size_t len = (size_t)e->keep + e->nnew;
                if (len > bt_cap && grow((void **)&bt, &bt_cap, len, sizeof *bt) < 0) {
                    fprintf(stderr, "memtrace recode: out of memory\n");
                    failed = 1;
                    break;
                }
                memcpy(bt + e->keep, frames, e->nnew * sizeof *bt);
                frames += e->nnew;
                if (e->id == mt_writer_next_id(w)) {
                    /* bt[0..keep) is the previous allocation's: trusted. */
                    rc = mt_writer_put_alloc_shared(w, now, e->a, e->b, (mt_source)e->source,
                                                    bt, len, e->keep, NULL);
                } else {
                    /* Ids that do not line up: put_event says so. */
                    mt_event ev = {.kind = MT_EVENT_ALLOC, .time = e->time, .id = e->id};
                    rc = mt_writer_put_event(w, info->start_time, &ev);
                }
            } else if (e->kind == MT_EVENT_PROMOTE) {
                rc = mt_writer_put_promote(w, now, e->id);
            } else {
                rc = mt_writer_put_collect(w, now, e->id);
            }
            if (rc < 0) {
                fprintf(stderr, "memtrace recode: %s: %s\n", out, mt_writer_error(w));
                failed = 1;
            }
        }
        slot++;
        if (failed)
            atomic_store(&ps->stop, 1);
        advance(&ps->consumed, failed);
    }
    pthread_join(th, NULL);
    free(bt);
    if (!failed && status < 0) {
        fprintf(stderr, "memtrace recode: %s%s%s\n", strchr(ps->error, ':') ? "" : in,
                strchr(ps->error, ':') ? "" : ": ", ps->error);
        failed = 1;
    }
    return failed;
}

static int recode_serial(mt_reader *r, mt_writer *w, const char *in, const char *out)
{
    const mt_trace_info *info = mt_reader_info(r);
    mt_event ev;
    int rc;
    size_t prev_len = 0;
    while ((rc = mt_reader_next(r, &ev)) == 1) {
        if (ev.domain != info->initial_domain) {
            fprintf(stderr,
                    "memtrace recode: %s: events of several domains: re-encoding "
                    "multi-domain traces is not supported\n",
                    in);
            return 1;
        }
        int ok;
        if (ev.kind == MT_EVENT_ALLOC && ev.id == mt_writer_next_id(w)) {
            /* The reader keeps the shared prefix in place, so the first
             * min(common_prefix, previous length) frames are the previous
             * allocation's: the writer need not compare them. */
            size_t keep = ev.common_prefix < prev_len ? ev.common_prefix : prev_len;
            prev_len = ev.backtrace_length;
            mt_timestamp now = (int64_t)((uint64_t)info->start_time + (uint64_t)ev.time);
            ok = mt_writer_put_alloc_shared(w, now, ev.length, ev.n_samples, ev.source,
                                            ev.backtrace, ev.backtrace_length, keep, NULL) == 0;
        } else if (ev.kind != MT_EVENT_ALLOC) {
            mt_timestamp now = (int64_t)((uint64_t)info->start_time + (uint64_t)ev.time);
            ok = (ev.kind == MT_EVENT_PROMOTE ? mt_writer_put_promote(w, now, ev.id)
                                              : mt_writer_put_collect(w, now, ev.id)) == 0;
        } else {
            ok = mt_writer_put_event(w, info->start_time, &ev) == 0; /* says what is wrong */
        }
        if (!ok) {
            fprintf(stderr, "memtrace recode: %s: %s\n", out, mt_writer_error(w));
            return 1;
        }
    }
    if (rc < 0) {
        fprintf(stderr, "memtrace recode: %s\n", mt_reader_error(r));
        return 1;
    }
    return 0;
}

int cmd_recode(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"format-version", required_argument, NULL, 'V'},
        {"threads", required_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0}};
    int version = 0, c;
    int threads = 1;
    optind = 1;
    while ((c = getopt_long(argc, argv, "V:j:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'j':
            if (strcmp(optarg, "1") == 0 || strcmp(optarg, "2") == 0) {
                threads = optarg[0] - '0';
                break;
            }
            fprintf(stderr, "memtrace recode: --threads must be 1 or 2, not '%s'\n", optarg);
            return 2;
        case 'V':
            if (strcmp(optarg, "2") == 0 || strcmp(optarg, "3") == 0) {
                version = optarg[0] - '0';
                break;
            }
            fprintf(stderr, "memtrace recode: --format-version must be 2 or 3, not '%s'\n",
                    optarg);
            return 2;
        case 'h':
            fputs(usage_text, stdout);
            return 0;
        default:
            fputs(usage_text, stderr);
            return 2;
        }
    }
    if (argc - optind != 2) {
        fputs(usage_text, stderr);
        return 2;
    }
    const char *in = argv[optind], *out = argv[optind + 1];
    mt_reader_options ropts = {.on_warning = on_warning};
    char *err = NULL;
    mt_reader *r = strcmp(in, "-") == 0 ? mt_reader_open_fd(0, "<stdin>", &ropts, &err)
                                        : mt_reader_open(in, &ropts, &err);
    if (!r) {
        fprintf(stderr, "memtrace recode: %s\n", err ? err : "out of memory");
        free(err);
        return 1;
    }
    const mt_trace_info *info = mt_reader_info(r);
    if (version == 0)
        version = info->version < 2 ? 2 : info->version;
    int fd = strcmp(out, "-") == 0 ? 1 : open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "memtrace recode: %s: %s\n", out, strerror(errno));
        mt_reader_close(r);
        return 1;
    }
    pipe_state ps = {.r = r, .domain = info->initial_domain};
    locmap map = {0};
    outbuf *ob = malloc(sizeof *ob);
    mt_writer_options wopts = {.version = version,
                               .domain = version >= 3 ? info->initial_domain : 0,
                               .resolve = resolve,
                               .resolve_ctx = r,
                               .write = ob ? out_write : NULL,
                               .write_ctx = ob};
    if (ob) {
        ob->fd = fd;
        ob->len = 0;
    }
    if (threads > 1) {
        ps.batches = calloc(NBATCHES, sizeof *ps.batches);
        if (ps.batches) {
            /* The writer resolves codes from the batches' locations. */
            wopts.resolve = locmap_resolve;
            wopts.resolve_ctx = &map;
        }
    }
    mt_writer *w = mt_writer_open(fd, info, &wopts, &err);
    int status = 0;
    if (!w) {
        fprintf(stderr, "memtrace recode: %s: %s\n", out, err ? err : "out of memory");
        free(err);
        status = 1;
    } else {
        status = ps.batches ? recode_threaded(r, w, &ps, &map, in, out)
                            : recode_serial(r, w, in, out);
        /* Keep the end of the recording the recorder wrote (docs/format.md). */
        if (status == 0 && mt_reader_ended(r) &&
            mt_writer_flush_until(w, info->start_time + mt_reader_end_time(r), 1) < 0) {
            fprintf(stderr, "memtrace recode: %s: %s\n", out, mt_writer_error(w));
            status = 1;
        }
        if (status == 0 && mt_writer_finish(w) < 0) {
            fprintf(stderr, "memtrace recode: %s: %s\n", out, mt_writer_error(w));
            status = 1;
        }
        if (status == 0 && ob && out_flush(ob) < 0) {
            fprintf(stderr, "memtrace recode: %s: write failed: %s\n", out, strerror(errno));
            status = 1;
        }
        mt_writer_close(w);
    }
    if (ps.batches) {
        for (int i = 0; i < NBATCHES; i++) {
            free(ps.batches[i].frames);
            free(ps.batches[i].locs);
        }
        free(ps.batches);
    }
    free(map.slots);
    free(ob);
    if (fd != 1 && close(fd) < 0 && status == 0) {
        fprintf(stderr, "memtrace recode: %s: %s\n", out, strerror(errno));
        status = 1;
    }
    mt_reader_close(r);
    return status;
}
