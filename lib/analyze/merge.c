/*
 * merge.c - one model from several traces (a process tree: app.ctf and
 * app.ctf.<pid>, or repeated runs): their events are merged in time order
 * into one trace, with backtrace codes and object ids renumbered per trace,
 * and loaded as usual. A thread writes the merged trace into a socket pair
 * that the model reads as it comes, so that a folded model of several
 * traces needs no copy of them in memory. Optionally every stack gets an
 * outermost frame naming its process, so that reports split by process.
 * Pieces of a rotated recording read together make one recording again:
 * a block carried into a piece is its twin still live in an earlier piece
 * of the process, and keeps that block's id and allocation time.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memtrace/compare.h"
#include "load.h"
#include "merge.h"
#include "model.h"
#include "table.h"
#include "vec.h"
#include "warn.h"

/* The writer's output: the merging thread's end of the socket pair. */
static int sock_write(void *ctx, const void *buf, size_t len)
{
    int fd = *(int *)ctx;
    int *failed = (int *)ctx + 1;
    const char *p = buf;
    while (len > 0) {
        ssize_t k = send(fd, p, len, MSG_NOSIGNAL); /* the reader gone: EPIPE, no signal */
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            *failed = 1;
            return -1;
        }
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

/* Warnings of the traces read by the merging thread, kept until it is done
 * so that the caller's warning function is never called from two threads. */
typedef struct warnings {
    char **msg;
    size_t n, cap;
    int lost;
} warnings;

static void keep_warning(void *ctx, const char *text)
{
    warnings *w = ctx;
    if (MT_VEC_ROOM(w->msg, w->n, w->cap, 16) < 0) {
        w->lost++;
        return;
    }
    if (!(w->msg[w->n] = strdup(text)))
        w->lost++;
    else
        w->n++;
}

/* (trace, code) -> new code: open addressing; new codes are 1, 2, ... and
 * index the origin table. */
typedef struct origin {
    uint32_t trace;          /* UINT32_MAX: a process frame */
    mt_location_code code;   /* or, for a process frame, the trace index */
} origin;

typedef struct merger {
    mt_reader **r;
    size_t n;
    mt_event *ev;            /* current event of each reader */
    int *has;                /* 1: ev[i] is pending */
    mt_timestamp *start;
    mta_live *ids;           /* per trace: old id -> new id, of the live blocks */
    uint64_t *slots;         /* new code, 0: empty */
    size_t mask, used;
    origin *orig;            /* indexed by new code */
    size_t n_orig, cap_orig;
    mt_location_code *bt;
    size_t bt_cap;
    /* per trace: its last allocation's backtrace in new codes, and that
     * allocation's domain: the part a next one shares (its common prefix)
     * is copied, not looked up again frame by frame */
    struct mapped {
        mt_location_code *code;
        uint64_t *hash;      /* pieces: hash of the original codes 0 .. j */
        size_t len, cap;
        unsigned domain;
    } *last;
    size_t last_trace;       /* trace of the last allocation written, or SIZE_MAX */
    int by_process;
    /* Pieces of one recording (two traces of one pid): the live blocks
     * keep a key to find the twin of a block carried into a later piece
     * (live record: a.size, a.n_samples, a.source, and the hash of the
     * original stack in a.time), in a table of an earlier piece's live
     * blocks made when the first carried block of a piece comes. */
    int pieces;
    uint64_t *pid;
    struct twin {
        uint64_t key;
        mt_obj_id id;
        uint32_t trace;
        uint32_t next;       /* index + 1 of the next twin in the slot, 0: none */
    } *twins;
    uint32_t *twin_slots;    /* index + 1 of the first twin, 0: none */
    size_t n_twins, twin_mask;
    size_t twins_for;        /* the piece the table was made for, or SIZE_MAX */
    mt_location *proc_loc;   /* per trace: the process frame */
    char **proc_name;
    /* the merging thread */
    mt_writer *w;
    int fd[2];               /* its end of the socket pair; 1: writing to it failed */
    int rc;                  /* 0, or -1 with error set */
    char *error;
    warnings warn;
} merger;

static int add_origin(merger *g, uint32_t trace, mt_location_code code, uint64_t *out)
{
    if (g->n_orig + 1 >= g->cap_orig) {
        size_t c = g->cap_orig ? g->cap_orig * 2 : 1024;
        origin *o = realloc(g->orig, c * sizeof *o);
        if (!o)
            return -1;
        g->orig = o;
        g->cap_orig = c;
    }
    if (g->n_orig == 0)
        g->n_orig = 1;   /* code 0 is never used */
    g->orig[g->n_orig].trace = trace;
    g->orig[g->n_orig].code = code;
    *out = g->n_orig++;
    return 0;
}

static int rehash(merger *g)
{
    size_t cap = (g->mask + 1) * 2;
    uint64_t *s = calloc(cap, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i <= g->mask; i++) {
        uint64_t nc = g->slots[i];
        if (!nc)
            continue;
        size_t j = mta_hash64(g->orig[nc].code ^ ((uint64_t)g->orig[nc].trace << 48)) & (cap - 1);
        while (s[j])
            j = (j + 1) & (cap - 1);
        s[j] = nc;
    }
    free(g->slots);
    g->slots = s;
    g->mask = cap - 1;
    return 0;
}

static int64_t new_code(merger *g, uint32_t trace, mt_location_code code)
{
    size_t j = mta_hash64(code ^ ((uint64_t)trace << 48)) & g->mask;
    while (g->slots[j]) {
        const origin *o = &g->orig[g->slots[j]];
        if (o->trace == trace && o->code == code)
            return (int64_t)g->slots[j];
        j = (j + 1) & g->mask;
    }
    uint64_t nc;
    if (add_origin(g, trace, code, &nc) < 0)
        return -1;
    g->slots[j] = nc;
    if (++g->used * 2 > g->mask + 1 && rehash(g) < 0)
        return -1;
    return (int64_t)nc;
}

static int resolve(void *ctx, mt_location_code code, const mt_location **locs, size_t *n)
{
    merger *g = ctx;
    if (code == 0 || code >= g->n_orig)
        return -1;
    const origin *o = &g->orig[code];
    if (o->trace == UINT32_MAX) {
        *locs = &g->proc_loc[o->code];
        *n = 1;
        return 0;
    }
    return mt_reader_lookup(g->r[o->trace], o->code, locs, n);
}

static int advance(merger *g, size_t i, char **error)
{
    int rc = mt_reader_next(g->r[i], &g->ev[i]);
    if (rc < 0) {
        if (error)
            *error = strdup(mt_reader_error(g->r[i]));
        return -1;
    }
    g->has[i] = rc == 1;
    return 0;
}

/* Old id -> new id of one trace's live blocks: the table of live blocks
 * that folded models use (fold.c: a ring of the recent ids, a hash table
 * for the older ones), the new id kept in a record's seq. */
static int map_id(merger *g, size_t i, mt_obj_id old, uint64_t nid, const mt_event *ev,
                  uint64_t stack_hash)
{
    mta_live_rec displaced;
    int had;
    mta_live_rec *r = mta_live_add(&g->ids[i], old, &displaced, &had);
    if (!r)
        return -1;
    r->seq = nid;
    r->a.size = ev->length;
    r->a.n_samples = ev->n_samples;
    r->a.source = (uint8_t)ev->source;
    r->a.time = (mt_timedelta)stack_hash;
    return 0;
}

static uint64_t twin_key(uint64_t stack_hash, uint64_t length, uint64_t n_samples, int source)
{
    return mta_hash64(stack_hash ^ mta_hash64(length * 0x9e3779b97f4a7c15ULL ^ n_samples) ^ (uint64_t)source);
}

/* The table of twins for piece i: the live blocks of the earlier traces of
 * its process. */
static int make_twins(merger *g, size_t i)
{
    g->n_twins = 0;
    g->twins_for = i;
    size_t n = 0;
    for (size_t j = 0; j < g->n; j++)
        if (j != i && g->pid[j] == g->pid[i] && g->start[j] <= g->start[i])
            n += g->ids[j].n_pool;
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    struct twin *t = realloc(g->twins, (n ? n : 1) * sizeof *t);
    uint32_t *slots = calloc(cap, sizeof *slots);
    if (!t || !slots || n >= UINT32_MAX) {
        free(slots);
        if (t)
            g->twins = t;
        return -1;
    }
    g->twins = t;
    free(g->twin_slots);
    g->twin_slots = slots;
    g->twin_mask = cap - 1;
    for (size_t j = 0; j < g->n; j++) {
        if (j == i || g->pid[j] != g->pid[i] || g->start[j] > g->start[i])
            continue;
        const mta_live *l = &g->ids[j];
        for (size_t k = 0; k < l->n_pool; k++) {
            const mta_live_rec *r = &l->pool[k];
            if (r->seq == UINT64_MAX)
                continue;   /* removed */
            struct twin *w = &g->twins[g->n_twins];
            w->key = twin_key((uint64_t)r->a.time, r->a.size, r->a.n_samples, r->a.source);
            w->id = r->id;
            w->trace = (uint32_t)j;
            size_t s = w->key & g->twin_mask;
            w->next = g->twin_slots[s];
            g->twin_slots[s] = (uint32_t)++g->n_twins;
        }
    }
    return 0;
}

/* A block carried into piece i: its twin's new id, the twin now belonging
 * to piece i (UINT64_MAX: none, e.g. the earlier pieces were not given or
 * were deleted). */
static uint64_t take_twin(merger *g, size_t i, const mt_event *ev, uint64_t stack_hash)
{
    if (g->twins_for != i && make_twins(g, i) < 0)
        return UINT64_MAX - 1;
    uint64_t key = twin_key(stack_hash, ev->length, ev->n_samples, ev->source);
    for (uint32_t x = g->twin_slots[key & g->twin_mask]; x; x = g->twins[x - 1].next) {
        struct twin *w = &g->twins[x - 1];
        if (w->key != key)
            continue;
        mta_live_rec *r = mta_live_find(&g->ids[w->trace], w->id);
        if (!r || (uint64_t)r->a.time != stack_hash || r->a.size != ev->length ||
            r->a.n_samples != ev->n_samples || r->a.source != (uint8_t)ev->source)
            continue;   /* freed since, taken, or only alike */
        uint64_t nid = r->seq;
        mta_live_remove(&g->ids[w->trace], r);
        w->key = ~key;  /* taken */
        return nid;
    }
    return UINT64_MAX;
}

/* The new id of a live block (UINT64_MAX: none); gone: forget it. */
static uint64_t find_id(merger *g, size_t i, mt_obj_id old, int gone)
{
    mta_live_rec *r = mta_live_find(&g->ids[i], old);
    if (!r)
        return UINT64_MAX;
    uint64_t nid = r->seq;
    if (gone)
        mta_live_remove(&g->ids[i], r);
    return nid;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static void merger_free(merger *g)
{
    for (size_t i = 0; i < g->n; i++) {
        if (g->r && g->r[i])
            mt_reader_close(g->r[i]);
        if (g->ids)
            mta_live_free(&g->ids[i]);
        if (g->proc_name)
            free(g->proc_name[i]);
        if (g->last) {
            free(g->last[i].code);
            free(g->last[i].hash);
        }
    }
    for (size_t i = 0; i < g->warn.n; i++)
        free(g->warn.msg[i]);
    free(g->warn.msg);
    free(g->error);
    free(g->r);
    free(g->ev);
    free(g->has);
    free(g->start);
    free(g->ids);
    free(g->slots);
    free(g->orig);
    free(g->bt);
    free(g->proc_loc);
    free(g->proc_name);
    free(g->last);
    free(g->pid);
    free(g->twins);
    free(g->twin_slots);
}

static char *msg(const char *fmt, const char *a, const char *b)
{
    size_t n = strlen(fmt) + strlen(a) + strlen(b) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, fmt, a, b);
    return s;
}

/* Is path a resident-memory sidecar (TRACE.rss, docs/format.md), which a
 * glob such as app.ctf.* picks up beside the process tree's traces? */
static int is_rss_sidecar(const char *path)
{
    char head[13];
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0; /* a pipe must not lose its first bytes to this look */
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t k = fread(head, 1, sizeof head, f);
    fclose(f);
    return k == sizeof head && memcmp(head, "memtrace-rss ", sizeof head) == 0;
}

int mta_is_rss_sidecar(const char *path)
{
    return is_rss_sidecar(path);
}

static mt_model *load_traces(const char *const *paths, size_t n, int by_process,
                             const mt_model_options *opts, char **error);

mt_model *mt_model_load_many(const char *const *paths, size_t n, int by_process,
                             const mt_model_options *opts, char **error)
{
    if (error)
        *error = NULL;
    if (n == 1 && is_rss_sidecar(paths[0])) {
        if (error)
            *error = msg("%s: %s", paths[0],
                          "a resident-memory sidecar (TRACE.rss, docs/format.md), not a trace: "
                          "give the trace beside it");
        return NULL;
    }
    if (n <= 1 && !(by_process && n == 1 && mt_path_is_profile(paths[0])))
        return load_traces(paths, n, by_process, opts, error);
    for (size_t i = 0; i < n; i++)
        if (mt_path_is_profile(paths[i])) {
            if (error)
                *error = msg("%s: %s", paths[i],
                             "a pprof profile is read alone (not merged with other files, "
                             "nor split by process)");
            return NULL;
        }
    /* Several files: sidecars among them are not traces, and skipped. */
    const char **kept = malloc(n * sizeof *kept);
    if (!kept) {
        if (error)
            *error = strdup("out of memory");
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!is_rss_sidecar(paths[i]))
            kept[k++] = paths[i];
    mt_model *m = load_traces(k ? kept : paths, k ? k : n, by_process, opts, error);
    free(kept);
    return m;
}

/* The traces' warnings, once no other thread reads them. */
static void flush_warnings(merger *g, const mt_reader_options *ro)
{
    for (size_t i = 0; i < g->warn.n; i++) {
        mt_warn(ro->on_warning, ro->warning_ctx, g->warn.msg[i]);
        free(g->warn.msg[i]);
    }
    g->warn.n = 0;
}

/* The merging thread's work: every event of every trace in time order into
 * the writer, then the end of the trace. Sets g->rc and g->error. */
static int merge_events(merger *g)
{
    size_t n = g->n;
    mt_writer *w = g->w;
    for (;;) {
        size_t best = n;
        mt_timestamp bt = 0;
        for (size_t i = 0; i < n; i++)
            if (g->has[i] && (best == n || g->start[i] + g->ev[i].time < bt)) {
                best = i;
                bt = g->start[i] + g->ev[i].time;
            }
        if (best == n)
            break;
        const mt_event *ev = &g->ev[best];
        int rc = 0;
        if (ev->kind == MT_EVENT_ALLOC) {
            size_t len = ev->backtrace_length + (g->by_process ? 1 : 0);
            if (len > g->bt_cap) {
                size_t c = g->bt_cap ? g->bt_cap : 256;
                while (c < len)
                    c *= 2;
                mt_location_code *b = realloc(g->bt, c * sizeof *b);
                if (!b)
                    return -1;
                g->bt = b;
                g->bt_cap = c;
            }
            size_t k = 0;
            if (g->by_process) {
                int64_t pc = new_code(g, UINT32_MAX, best);
                if (pc < 0)
                    return -1;
                g->bt[k++] = (uint64_t)pc;
            }
            struct mapped *lm = &g->last[best];
            if (ev->backtrace_length > lm->cap) {
                size_t c = lm->cap ? lm->cap : 64;
                while (c < ev->backtrace_length)
                    c *= 2;
                mt_location_code *b = realloc(lm->code, c * sizeof *b);
                if (!b)
                    return -1;
                lm->code = b;
                uint64_t *h = realloc(lm->hash, c * sizeof *h);
                if (!h)
                    return -1;
                lm->hash = h;
                lm->cap = c;
            }
            /* The reader's common prefix is the part shared with the
             * previous allocation (of the domain, in v3): trusted only when
             * that was this trace's last one. */
            size_t shared = lm->domain == ev->domain ? ev->common_prefix : 0;
            if (shared > lm->len)
                shared = lm->len;
            if (shared > ev->backtrace_length)
                shared = ev->backtrace_length;
            for (size_t j = shared; j < ev->backtrace_length; j++) {
                int64_t c = new_code(g, (uint32_t)best, ev->backtrace[j]);
                if (c < 0)
                    return -1;
                lm->code[j] = (uint64_t)c;
                if (g->pieces)
                    lm->hash[j] = mta_hash64((j ? lm->hash[j - 1] : 0x243f6a8885a308d3ULL) ^
                                      ev->backtrace[j]);
            }
            lm->len = ev->backtrace_length;
            lm->domain = ev->domain;
            uint64_t stack_hash = g->pieces && lm->len ? lm->hash[lm->len - 1] : 0;
            if (ev->carried && g->pieces) {
                uint64_t twin = take_twin(g, best, ev, stack_hash);
                if (twin == UINT64_MAX - 1)
                    return -1;
                if (twin != UINT64_MAX) {   /* the same block: nothing to write */
                    g->last_trace = SIZE_MAX; /* lm is no longer the writer's last */
                    if (map_id(g, best, ev->id, twin, ev, stack_hash) < 0)
                        return -1;
                    if (advance(g, best, &g->error) < 0)
                        return -1;
                    continue;
                }
            }
            /* a carried block without its twin stays carried */
            if (mt_writer_set_carried(w, ev->carried) < 0) {
                g->error = msg("merging traces: %s%s", mt_writer_error(w), "");
                return -1;
            }
            memcpy(g->bt + k, lm->code, lm->len * sizeof *lm->code);
            k += lm->len;
            /* What the writer's previous backtrace shares with this one is
             * known when it came from the same trace: the process frame
             * and the common prefix. */
            size_t wshared = g->last_trace == best ? shared + (g->by_process ? 1 : 0) : 0;
            g->last_trace = best;
            mt_obj_id nid;
            rc = mt_writer_put_alloc_shared(w, bt, ev->length, ev->n_samples, ev->source, g->bt,
                                            k, wshared, &nid);
            if (rc == 0 && map_id(g, best, ev->id, nid, ev, stack_hash) < 0)
                return -1;
        } else {
            if (mt_writer_set_carried(w, 0) < 0) {
                g->error = msg("merging traces: %s%s", mt_writer_error(w), "");
                return -1;
            }
            uint64_t nid = find_id(g, best, ev->id, ev->kind != MT_EVENT_PROMOTE);
            if (nid != UINT64_MAX) {
                rc = ev->kind == MT_EVENT_PROMOTE ? mt_writer_put_promote(w, bt, nid)
                                                  : mt_writer_put_collect(w, bt, nid);
            }
        }
        if (rc < 0) {
            g->error = msg("merging traces: %s%s", mt_writer_error(w), "");
            return -1;
        }
        if (advance(g, best, &g->error) < 0)
            return -1;
    }
    if (mt_writer_finish(w) < 0) {
        g->error = msg("merging traces: %s%s", mt_writer_error(w), "");
        return -1;
    }
    return 0;
}

static void *merge_thread(void *arg)
{
    merger *g = arg;
    g->rc = merge_events(g);
    if (g->rc < 0 && !g->error)
        g->error = strdup("out of memory while merging traces");
    shutdown(g->fd[0], SHUT_WR); /* the reader sees the end */
    return NULL;
}

static mt_model *load_traces(const char *const *paths, size_t n, int by_process,
                             const mt_model_options *opts, char **error)
{
    if (n == 1 && !by_process)
        return mt_model_load(paths[0], opts, error);
    merger g;
    memset(&g, 0, sizeof g);
    mt_reader_options ro = {0};
    if (opts) {
        ro.on_warning = opts->on_warning;
        ro.warning_ctx = opts->warning_ctx;
    }
    /* the merging thread reads the traces: their warnings wait for its end */
    mt_reader_options tro = {.on_warning = keep_warning, .warning_ctx = &g.warn};
    g.n = n;
    g.by_process = by_process;
    g.fd[0] = -1;
    g.r = calloc(n, sizeof *g.r);
    g.ev = calloc(n, sizeof *g.ev);
    g.has = calloc(n, sizeof *g.has);
    g.start = calloc(n, sizeof *g.start);
    g.ids = calloc(n, sizeof *g.ids);
    g.proc_loc = calloc(n, sizeof *g.proc_loc);
    g.proc_name = calloc(n, sizeof *g.proc_name);
    g.last = calloc(n, sizeof *g.last);
    g.last_trace = SIZE_MAX;
    g.pid = calloc(n, sizeof *g.pid);
    g.twins_for = SIZE_MAX;
    g.mask = 4095;
    g.slots = calloc(g.mask + 1, sizeof *g.slots);
    int fds[2] = {-1, -1};
    mt_model *m = NULL;
    if (!g.r || !g.ev || !g.has || !g.start || !g.ids || !g.proc_loc ||
        !g.proc_name || !g.last || !g.pid || !g.slots)
        goto oom;
    mt_trace_info info;
    for (size_t i = 0; i < n; i++) {
        g.r[i] = mt_reader_open(paths[i], &tro, error);
        if (!g.r[i])
            goto fail;
        const mt_trace_info *ti = mt_reader_info(g.r[i]);
        if (i == 0) {
            info = *ti;
        } else if (ti->sample_rate != info.sample_rate || ti->word_size != info.word_size) {
            if (error)
                *error = msg("%s: recorded at another sampling rate or word size than %s: "
                             "traces are aggregated only at one rate (compare them with "
                             "'memtrace diff')", paths[i], paths[0]);
            goto fail;
        }
        g.start[i] = ti->start_time;
        g.pid[i] = ti->pid;
        for (size_t j = 0; j < i; j++)
            if (g.pid[j] == ti->pid)
                g.pieces = 1;
        if (ti->start_time < info.start_time)
            info.start_time = ti->start_time;
        char name[512];
        snprintf(name, sizeof name, "[pid %llu %s]", (unsigned long long)ti->pid,
                 base_name(ti->executable_name));
        g.proc_name[i] = strdup(name);
        if (!g.proc_name[i])
            goto oom;
        g.proc_loc[i].filename = "";
        g.proc_loc[i].defname = g.proc_name[i];
        if (advance(&g, i, error) < 0)
            goto fail;
    }
    info.version = 2;
    info.context = mt_reader_info(g.r[0])->context;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0) {
        if (error)
            *error = msg("merging traces: socketpair: %s%s", strerror(errno), "");
        goto fail;
    }
    g.fd[0] = fds[1];
    mt_writer_options wo = {.version = 2, .resolve = resolve, .resolve_ctx = &g,
                            .write = sock_write, .write_ctx = g.fd};
    pthread_t th;
    g.w = mt_writer_open(-1, &info, &wo, error);
    if (!g.w || pthread_create(&th, NULL, merge_thread, &g) != 0) {
        if (g.w && error)
            *error = strdup("merging traces: cannot start a thread");
        goto fail;
    }
    {
        char name[600];
        snprintf(name, sizeof name, "%s (+%zu more)", paths[0], n - 1);
        char *rerr = NULL;
        mt_reader *mr = mt_reader_open_fd(fds[0], name, &ro, &rerr);
        if (mr) {
            m = mt_model_from_reader(mr, opts, &rerr);
            mt_reader_close(mr);
        }
        shutdown(fds[0], SHUT_RDWR); /* a reader that stopped early: the writer stops too */
        pthread_join(th, NULL);
        if (g.rc < 0 && !(m == NULL && g.fd[1])) {
            /* the merge failed: its error, not the reader's (a cut trace),
             * unless the reader stopped first (the merge could not write) */
            mt_model_free(m);
            m = NULL;
            free(rerr);
            rerr = g.error;
            g.error = NULL;
        }
        if (error)
            *error = rerr;
        else
            free(rerr);
    }
    flush_warnings(&g, &ro);
    mt_writer_close(g.w);
    close(fds[0]);
    close(fds[1]);
    merger_free(&g);
    return m;
oom:
    if (error && !*error)
        *error = strdup("out of memory while merging traces");
fail:
    flush_warnings(&g, &ro);
    if (g.w)
        mt_writer_close(g.w);
    if (fds[0] >= 0) {
        close(fds[0]);
        close(fds[1]);
    }
    merger_free(&g);
    return NULL;
}
