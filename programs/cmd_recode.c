/*
 * cmd_recode.c - 'memtrace recode': decodes a trace and writes every event
 * again with the writer, in the input's format version or another one.
 * Re-encoding a trace written by memtrace gives back the same bytes, which
 * makes this both a converter (v2 <-> v3) and a check of the codec.
 *
 * With --threads 2, decoding and encoding run in two threads joined by
 * a small queue of event batches: a batch carries each allocation's new
 * frames only (the frames it shares with the previous allocation are
 * rebuilt on the writer's side), and the reader's location table, which
 * the writer consults when it flushes a packet, is guarded by a mutex that
 * the decoding thread holds while it fills a batch.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

#define BATCH_EVENTS 8192
#define NBATCHES 4

typedef struct pev {
    int64_t time;
    uint64_t id, length, n_samples;
    size_t keep, nnew; /* frames shared with the previous allocation, new ones */
    unsigned char kind, source;
} pev;

typedef struct batch {
    pev ev[BATCH_EVENTS];
    size_t nev;
    mt_location_code *frames;
    size_t nframes, cap;
    int ready; /* filled, waiting for the writer */
    int last;  /* the producer's final batch */
} batch;

typedef struct pipe_state {
    mt_reader *r;
    unsigned domain;
    pthread_mutex_t lock;  /* queue state */
    pthread_cond_t cond;
    pthread_mutex_t locs;  /* the reader's location table */
    batch *batches;
    int done;              /* producer finished: 1 end, -1 error */
    int stop;              /* consumer gave up */
    char error[600];
} pipe_state;

static int add_frames(batch *b, const mt_location_code *f, size_t n)
{
    if (b->nframes + n > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->nframes + n)
            cap *= 2;
        mt_location_code *grown = realloc(b->frames, cap * sizeof *grown);
        if (!grown)
            return -1;
        b->frames = grown;
        b->cap = cap;
    }
    memcpy(b->frames + b->nframes, f, n * sizeof *f);
    b->nframes += n;
    return 0;
}

static void *producer(void *arg)
{
    pipe_state *ps = arg;
    size_t prev_len = 0, slot = 0;
    int rc = 1;
    while (rc == 1) {
        batch *b = &ps->batches[slot];
        pthread_mutex_lock(&ps->lock);
        while (b->ready && !ps->stop)
            pthread_cond_wait(&ps->cond, &ps->lock);
        int stop = ps->stop;
        pthread_mutex_unlock(&ps->lock);
        if (stop)
            return NULL;
        b->nev = b->nframes = 0;
        mt_event ev;
        pthread_mutex_lock(&ps->locs);
        while (b->nev < BATCH_EVENTS && (rc = mt_reader_next(ps->r, &ev)) == 1) {
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
            e->length = ev.length;
            e->n_samples = ev.n_samples;
            e->source = (unsigned char)ev.source;
            /* The reader keeps the shared prefix in place: only new frames travel. */
            e->keep = ev.common_prefix < prev_len ? ev.common_prefix : prev_len;
            e->nnew = ev.backtrace_length - e->keep;
            prev_len = ev.backtrace_length;
            if (add_frames(b, ev.backtrace + e->keep, e->nnew) < 0) {
                snprintf(ps->error, sizeof ps->error, "out of memory");
                rc = -1;
                break;
            }
        }
        if (rc < 0 && !ps->error[0])
            snprintf(ps->error, sizeof ps->error, "%s", mt_reader_error(ps->r));
        pthread_mutex_unlock(&ps->locs);
        pthread_mutex_lock(&ps->lock);
        b->ready = 1;
        b->last = rc != 1;
        if (rc != 1)
            ps->done = rc < 0 ? -1 : 1;
        pthread_cond_broadcast(&ps->cond);
        pthread_mutex_unlock(&ps->lock);
        slot = (slot + 1) % NBATCHES;
    }
    return NULL;
}

static int locked_resolve(void *ctx, mt_location_code code, const mt_location **locs, size_t *n)
{
    pipe_state *ps = ctx;
    pthread_mutex_lock(&ps->locs);
    int rc = mt_reader_lookup(ps->r, code, locs, n);
    pthread_mutex_unlock(&ps->locs);
    return rc;
}

/* Runs the pipeline; returns 0, or 1 after printing why it failed. */
static int recode_threaded(mt_reader *r, mt_writer *w, pipe_state *ps, const char *in,
                           const char *out)
{
    const mt_trace_info *info = mt_reader_info(r);
    pthread_t th;
    if (pthread_create(&th, NULL, producer, ps) != 0) {
        fprintf(stderr, "memtrace recode: cannot start a thread\n");
        return 1;
    }
    mt_location_code *bt = NULL;
    size_t bt_len = 0, bt_cap = 0, slot = 0;
    int failed = 0, finished = 0;
    while (!failed && !finished) {
        batch *b = &ps->batches[slot];
        pthread_mutex_lock(&ps->lock);
        while (!b->ready)
            pthread_cond_wait(&ps->cond, &ps->lock);
        pthread_mutex_unlock(&ps->lock);
        const mt_location_code *frames = b->frames;
        for (size_t i = 0; i < b->nev && !failed; i++) {
            const pev *e = &b->ev[i];
            mt_timestamp now = (int64_t)((uint64_t)info->start_time + (uint64_t)e->time);
            int rc;
            if (e->kind == MT_EVENT_ALLOC) {
                size_t len = e->keep + e->nnew;
                if (len > bt_cap) {
                    size_t cap = bt_cap ? bt_cap * 2 : 1024;
                    while (cap < len)
                        cap *= 2;
                    mt_location_code *grown = realloc(bt, cap * sizeof *grown);
                    if (!grown) {
                        fprintf(stderr, "memtrace recode: out of memory\n");
                        failed = 1;
                        break;
                    }
                    bt = grown;
                    bt_cap = cap;
                }
                memcpy(bt + e->keep, frames, e->nnew * sizeof *bt);
                frames += e->nnew;
                bt_len = len;
                if (e->id != mt_writer_next_id(w)) {
                    fprintf(stderr, "memtrace recode: %s: allocation ids do not follow on\n",
                            in);
                    failed = 1;
                    break;
                }
                /* bt[0..keep) is the previous allocation's: trusted. */
                rc = mt_writer_put_alloc_shared(w, now, e->length, e->n_samples,
                                                (mt_source)e->source, bt, bt_len, e->keep, NULL);
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
        pthread_mutex_lock(&ps->lock);
        b->ready = 0;
        finished = b->last;
        if (failed)
            ps->stop = 1;
        pthread_cond_broadcast(&ps->cond);
        pthread_mutex_unlock(&ps->lock);
        slot = (slot + 1) % NBATCHES;
    }
    pthread_join(th, NULL);
    free(bt);
    if (!failed && ps->done < 0) {
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
        } else {
            ok = mt_writer_put_event(w, info->start_time, &ev) == 0;
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
            pthread_mutex_init(&ps.lock, NULL);
            pthread_mutex_init(&ps.locs, NULL);
            pthread_cond_init(&ps.cond, NULL);
            wopts.resolve = locked_resolve;
            wopts.resolve_ctx = &ps;
        }
    }
    mt_writer *w = mt_writer_open(fd, info, &wopts, &err);
    int status = 0;
    if (!w) {
        fprintf(stderr, "memtrace recode: %s: %s\n", out, err ? err : "out of memory");
        free(err);
        status = 1;
    } else {
        status = ps.batches ? recode_threaded(r, w, &ps, in, out) : recode_serial(r, w, in, out);
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
        for (int i = 0; i < NBATCHES; i++)
            free(ps.batches[i].frames);
        free(ps.batches);
        pthread_mutex_destroy(&ps.lock);
        pthread_mutex_destroy(&ps.locs);
        pthread_cond_destroy(&ps.cond);
    }
    free(ob);
    if (fd != 1 && close(fd) < 0 && status == 0) {
        fprintf(stderr, "memtrace recode: %s: %s\n", out, strerror(errno));
        status = 1;
    }
    mt_reader_close(r);
    return status;
}
