/*
 * pprof.c - writes a selection as a gzipped pprof profile (profile.proto)
 * with Go's heap-profile conventions.
 *
 * The protobuf encoder is written by hand: the schema is small (a handful
 * of messages, varints and length-delimited fields), and a generated
 * encoder (protobuf-c) would need a code generator at build time and the
 * whole object graph in memory before packing. Here samples are encoded
 * one at a time and streamed through zlib (gzip framing, which pprof
 * expects); the tables (locations, functions, strings) follow the samples,
 * which protobuf and pprof allow (top-level fields may come in any order).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "memtrace/present.h"
#include "hash.h"
#include "safefile.h"

/* ------------------------------------------------------------ encoder */

typedef struct pb {
    uint8_t *b;
    size_t n, cap;
    int oom;
} pb;

static void pb_need(pb *p, size_t k)
{
    if (p->n + k <= p->cap)
        return;
    size_t c = p->cap ? p->cap : 256;
    while (c < p->n + k)
        c *= 2;
    uint8_t *nb = realloc(p->b, c);
    if (!nb) {
        p->oom = 1;
        p->n = 0;
        return;
    }
    p->b = nb;
    p->cap = c;
}

static void pb_varint(pb *p, uint64_t v)
{
    pb_need(p, 10);
    if (p->oom)
        return;
    while (v >= 0x80) {
        p->b[p->n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p->b[p->n++] = (uint8_t)v;
}

/* varint field; proto3 omits zeros */
static void pb_uint(pb *p, unsigned field, uint64_t v)
{
    if (!v)
        return;
    pb_varint(p, (uint64_t)field << 3);
    pb_varint(p, v);
}

static void pb_bytes(pb *p, unsigned field, const void *data, size_t len)
{
    pb_varint(p, (uint64_t)field << 3 | 2);
    pb_varint(p, len);
    pb_need(p, len);
    if (p->oom)
        return;
    memcpy(p->b + p->n, data, len);
    p->n += len;
}

/* A string field: profile.proto's strings must be UTF-8 (Go's decoder
 * rejects the whole profile otherwise), so each byte that does not begin a
 * well-formed character (mt_utf8_char) is written as U+FFFD. */
static void pb_utf8(pb *p, unsigned field, const char *s)
{
    static const char repl[] = "\xef\xbf\xbd";
    size_t n = strlen(s), len = 0;
    for (size_t i = 0; i < n;) {
        size_t k = mt_utf8_char(s + i, n - i);
        len += k ? k : 3;
        i += k ? k : 1;
    }
    if (len == n) {
        pb_bytes(p, field, s, n);
        return;
    }
    pb_varint(p, (uint64_t)field << 3 | 2);
    pb_varint(p, len);
    pb_need(p, len);
    if (p->oom)
        return;
    for (size_t i = 0; i < n;) {
        size_t k = mt_utf8_char(s + i, n - i);
        memcpy(p->b + p->n, k ? s + i : repl, k ? k : 3);
        p->n += k ? k : 3;
        i += k ? k : 1;
    }
}

/* Append sub as an embedded message field, then empty sub. */
static void pb_msg(pb *p, unsigned field, pb *sub)
{
    if (sub->oom)
        p->oom = 1;
    pb_bytes(p, field, sub->b, sub->n);
    sub->n = 0;
}

/* packed repeated varints */
static void pb_packed(pb *p, unsigned field, const uint64_t *v, size_t n, pb *tmp)
{
    tmp->n = 0;
    for (size_t i = 0; i < n; i++)
        pb_varint(tmp, v[i]);
    pb_msg(p, field, tmp);
}

/* ------------------------------------------------------------ strings */

typedef struct strtab {
    const char **v;
    size_t n, cap;
    uint32_t *slots;     /* index + 1 */
    size_t mask;
    int oom;
} strtab;

static uint64_t shash(const char *s)
{
    return mt_fnv1a(MT_FNV_OFFSET ^ mt_hash_seed(), s);   /* keyed: names come from the trace */
}

static uint64_t str_index(strtab *t, const char *s)
{
    if ((t->n + 1) * 2 > t->mask + 1) {
        size_t cap = t->mask ? (t->mask + 1) * 2 : 256;
        uint32_t *ns = calloc(cap, sizeof *ns);
        const char **nv = realloc(t->v, cap * sizeof *nv);
        if (!ns || !nv) {
            free(ns);
            if (nv)
                t->v = nv;
            t->oom = 1;
            return 0;
        }
        t->v = nv;
        for (size_t i = 0; i < t->n; i++) {
            size_t j = shash(t->v[i]) & (cap - 1);
            while (ns[j])
                j = (j + 1) & (cap - 1);
            ns[j] = (uint32_t)i + 1;
        }
        free(t->slots);
        t->slots = ns;
        t->mask = cap - 1;
    }
    size_t j = shash(s) & t->mask;
    while (t->slots[j]) {
        if (!strcmp(t->v[t->slots[j] - 1], s))
            return t->slots[j] - 1;
        j = (j + 1) & t->mask;
    }
    t->v[t->n] = s;
    t->slots[j] = (uint32_t)++t->n;
    return t->n - 1;
}

/* ------------------------------------------------------------ writer */

typedef struct loc {
    mt_frame_id lo, hi;  /* frames of one code: outermost lo .. innermost hi */
} loc;

typedef struct writer {
    const mt_selection *s;
    const mt_model *m;
    gzFile gz;
    pb out, tmp, tmp2;
    strtab strs;
    /* locations: (lo << 32 | hi) -> index via a hash of its own */
    loc *locs;
    size_t n_locs, cap_locs;
    uint32_t *loc_slots;
    size_t loc_mask;
    uint8_t *func_used;
    char **short_names;  /* display names the string table points to (names.c) */
    uint64_t *ids;       /* location ids of the current sample */
    size_t ids_cap;
    int failed;
    int write_errno;         /* errno of the first write that failed (0: none) */
} writer;

static void flush(writer *w, int force)
{
    if (w->out.oom) {
        w->failed = 1;
        return;
    }
    if (!force && w->out.n < (1 << 16))
        return;
    if (w->out.n && gzwrite(w->gz, w->out.b, (unsigned)w->out.n) != (int)w->out.n) {
        if (!w->failed && !w->write_errno)
            w->write_errno = errno ? errno : EIO;
        w->failed = 1;
    }
    w->out.n = 0;
}

static uint64_t loc_id(writer *w, mt_frame_id lo, mt_frame_id hi)
{
    if ((w->n_locs + 1) * 2 > w->loc_mask + 1) {
        size_t cap = w->loc_mask ? (w->loc_mask + 1) * 2 : 1024;
        uint32_t *ns = calloc(cap, sizeof *ns);
        loc *nl = realloc(w->locs, cap * sizeof *nl);
        if (!ns || !nl) {
            free(ns);
            if (nl)
                w->locs = nl;
            w->failed = 1;
            return 1;
        }
        w->locs = nl;
        for (size_t i = 0; i < w->n_locs; i++) {
            size_t j = (size_t)(((uint64_t)w->locs[i].lo << 32 | w->locs[i].hi) * 0x9E3779B97F4A7C15ULL >> 20) & (cap - 1);
            while (ns[j])
                j = (j + 1) & (cap - 1);
            ns[j] = (uint32_t)i + 1;
        }
        free(w->loc_slots);
        w->loc_slots = ns;
        w->loc_mask = cap - 1;
    }
    size_t j = (size_t)(((uint64_t)lo << 32 | hi) * 0x9E3779B97F4A7C15ULL >> 20) & w->loc_mask;
    while (w->loc_slots[j]) {
        const loc *l = &w->locs[w->loc_slots[j] - 1];
        if (l->lo == lo && l->hi == hi)
            return w->loc_slots[j];
        j = (j + 1) & w->loc_mask;
    }
    w->locs[w->n_locs].lo = lo;
    w->locs[w->n_locs].hi = hi;
    w->loc_slots[j] = (uint32_t)++w->n_locs;
    return w->n_locs;
}

static int put_sample(void *ctx, mt_node_id node, const mt_cost *c)
{
    writer *w = ctx;
    const mt_node *nodes = mt_selection_nodes(w->s);
    const mt_frame *fr = mt_model_frames(w->m);
    size_t depth = nodes[node].depth, k = 0;
    if (depth > w->ids_cap) {
        uint64_t *ni = realloc(w->ids, depth * sizeof *ni);
        if (!ni)
            return w->failed = 1;
        w->ids = ni;
        w->ids_cap = depth;
    }
    /* leaf first; consecutive frames of one code become one location */
    for (mt_node_id n = node; n;) {
        mt_frame_id hi = nodes[n].frame, lo = hi;
        n = nodes[n].parent;
        while (n && fr[lo].inline_index > 0 && nodes[n].frame == lo - 1 &&
               fr[lo - 1].code == fr[lo].code) {
            lo--;
            n = nodes[n].parent;
        }
        w->ids[k++] = loc_id(w, lo, hi);
    }
    uint64_t v[4] = {(uint64_t)llround(c->alloc_objects), (uint64_t)llround(c->alloc_bytes),
                     (uint64_t)llround(c->live_objects), (uint64_t)llround(c->live_bytes)};
    pb_packed(&w->tmp2, 1, w->ids, k, &w->tmp);
    pb_packed(&w->tmp2, 2, v, 4, &w->tmp);
    pb_msg(&w->out, 2, &w->tmp2);
    flush(w, 0);
    return w->failed;
}

static void value_type(writer *w, unsigned field, const char *type, const char *unit)
{
    pb_uint(&w->tmp, 1, str_index(&w->strs, type));
    pb_uint(&w->tmp, 2, str_index(&w->strs, unit));
    pb_msg(&w->out, field, &w->tmp);
}

static int encode(writer *w, const mt_pprof_options *o)
{
    const mt_model *m = w->m;
    const mt_trace_info *info = mt_model_info(m);
    const mt_frame *fr = mt_model_frames(m);
    const mt_func *fn = mt_model_funcs(m);
    str_index(&w->strs, "");
    value_type(w, 1, "alloc_objects", "count");
    value_type(w, 1, "alloc_space", "bytes");
    value_type(w, 1, "inuse_objects", "count");
    value_type(w, 1, "inuse_space", "bytes");
    if (mt_selection_each_stack(w->s, put_sample, w) || w->failed)
        return -1;
    /* mapping: the executable, symbolized already */
    pb_uint(&w->tmp, 1, 1);
    pb_uint(&w->tmp, 5, str_index(&w->strs, info->executable_name ? info->executable_name : ""));
    pb_uint(&w->tmp, 7, 1);
    pb_uint(&w->tmp, 8, 1);
    pb_uint(&w->tmp, 9, 1);
    pb_uint(&w->tmp, 10, 1);
    pb_msg(&w->out, 3, &w->tmp);
    w->func_used = calloc(mt_model_n_funcs(m) + 1, 1);
    if (!w->func_used)
        return -1;
    for (size_t i = 0; i < w->n_locs; i++) {
        const loc *l = &w->locs[i];
        pb_uint(&w->tmp2, 1, i + 1);
        pb_uint(&w->tmp2, 2, 1);
        for (mt_frame_id f = l->hi + 1; f-- > l->lo;) { /* innermost first */
            pb_uint(&w->tmp, 1, (uint64_t)fr[f].func + 1);
            pb_uint(&w->tmp, 2, fr[f].line);
            pb_msg(&w->tmp2, 4, &w->tmp);
            w->func_used[fr[f].func] = 1;
        }
        pb_msg(&w->out, 4, &w->tmp2);
        flush(w, 0);
    }
    for (size_t f = 0; f < mt_model_n_funcs(m); f++) {
        if (!w->func_used[f])
            continue;
        uint64_t name = str_index(&w->strs, fn[f].name), shown = name;
        if (!(o && o->full_names)) {
            /* the string table keeps pointers: the short name must live on */
            if (!w->short_names && !(w->short_names = calloc(mt_model_n_funcs(m) + 1, sizeof(char *))))
                return -1;
            char buf[1024];
            mt_display_name(buf, sizeof buf, fn[f].name, 0);
            if (strcmp(buf, fn[f].name)) {
                if (!(w->short_names[f] = strdup(buf)))
                    return -1;
                shown = str_index(&w->strs, w->short_names[f]);
            }
        }
        pb_uint(&w->tmp, 1, f + 1);
        pb_uint(&w->tmp, 2, shown);
        pb_uint(&w->tmp, 3, name);
        pb_uint(&w->tmp, 4, str_index(&w->strs, fn[f].filename));
        pb_msg(&w->out, 5, &w->tmp);
        flush(w, 0);
    }
    pb_uint(&w->out, 9, (uint64_t)info->start_time * 1000);
    pb_uint(&w->out, 10, (uint64_t)mt_model_end(m) * 1000);
    value_type(w, 11, "space", "bytes");
    /* a pprof profile read in keeps its own sampling: its period (none
     * when it stated none) and no "memtrace:" comment, so that reading the
     * re-export derives the same error (docs/profiles-input.md) */
    int prof = mt_model_profile(m);
    if (prof != MT_PROFILE_NO_ERROR)
        pb_uint(&w->out, 12, (uint64_t)llround(mt_model_bytes_per_sample(m)));
    char comment[256];
    if (prof)
        snprintf(comment, sizeof comment, "re-exported by memtrace from a pprof profile (%s)",
                 mt_model_profile_kind(m));
    else
        snprintf(comment, sizeof comment,
                 "memtrace: statistical estimates from %llu samples (sample rate %.6g per %u-bit "
                 "word); inuse = live at %.6fs",
                 (unsigned long long)mt_selection_total(w->s).samples, info->sample_rate,
                 info->word_size, (double)mt_selection_live_at(w->s) / 1e6);
    uint64_t ci = str_index(&w->strs, comment);
    pb_packed(&w->out, 13, &ci, 1, &w->tmp);
    if (o && o->alloc_default)
        pb_uint(&w->out, 14, str_index(&w->strs, "alloc_space"));
    if (w->strs.oom)
        return -1;
    /* the string table, in index order (index 0 is "") */
    for (size_t i = 0; i < w->strs.n; i++) {
        pb_utf8(&w->out, 6, w->strs.v[i]);
        flush(w, 0);
    }
    flush(w, 1);
    return w->failed || w->out.oom ? -1 : 0;
}

int mt_write_pprof_fd(int fd, const mt_selection *s, const mt_pprof_options *o, char **err)
{
    writer w;
    memset(&w, 0, sizeof w);
    w.s = s;
    w.m = mt_selection_model(s);
    int dfd = dup(fd);
    char mode[8];
    snprintf(mode, sizeof mode, "wb%d", o && o->level >= 1 && o->level <= 9 ? o->level : 6);
    w.gz = dfd >= 0 ? gzdopen(dfd, mode) : NULL;
    if (!w.gz) {
        if (dfd >= 0)
            close(dfd);
        if (err)
            *err = strdup("cannot start gzip output");
        return -1;
    }
    int rc = encode(&w, o);
    /* the cause is the errno of the write that failed, taken when it
     * failed (a later call's, e.g. ENOENT, would name the wrong one) */
    errno = 0;
    if (gzclose(w.gz) != Z_OK) {
        if (!w.write_errno)
            w.write_errno = errno ? errno : EIO;
        rc = -1;
    }
    if (rc < 0 && err)
        *err = strdup(w.out.oom || w.strs.oom ? "out of memory"
                      : w.write_errno ? strerror(w.write_errno) : "cannot write the profile");
    free(w.out.b);
    free(w.tmp.b);
    free(w.tmp2.b);
    if (w.short_names)
        for (size_t f = 0; f < mt_model_n_funcs(w.m); f++)
            free(w.short_names[f]);
    free(w.short_names);
    free(w.strs.v);
    free(w.strs.slots);
    free(w.locs);
    free(w.loc_slots);
    free(w.func_used);
    free(w.ids);
    return rc;
}

int mt_write_pprof(const char *path, const mt_selection *s, const mt_pprof_options *o, char **err)
{
    /* (a new file renamed into place: never through another user's link) */
    mt_outfile of;
    const char *why = NULL;
    int rc = mt_outfile_open(&of, path, 0666, &why);
    if (rc == 0) {
        rc = mt_write_pprof_fd(of.fd, s, o, err);
        if (rc == 0)
            rc = mt_outfile_commit(&of, &why);
        else
            mt_outfile_abort(&of);
    }
    if (rc < 0 && !why && err && *err && strcmp(*err, "out of memory") != 0)
        why = *err; /* (the write's cause, named with the file) */
    if (rc < 0 && why && err) {
        char *cause = *err;
        size_t len = strlen(path) + strlen(why) + 4;
        *err = malloc(len);
        if (*err)
            snprintf(*err, len, "%s: %s", path, why);
        free(cause);
    }
    return rc;
}
