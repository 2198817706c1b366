/*
 * pprof.c - writes a selection as a gzipped pprof profile (profile.proto)
 * with Go's heap-profile conventions.
 *
 * The protobuf wire writer is protowire.c's (hand-written, shared with
 * the OTLP encoder otlp.c). Here samples are encoded
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
#include "safefile.h"
#include "protowire.h"

/* ------------------------------------------------------------ writer */

typedef struct loc {
    mt_frame_id lo, hi;  /* frames of one code: outermost lo .. innermost hi */
} loc;

typedef struct writer {
    const mt_selection *s;      /* the selection whose stacks are being written */
    const mt_selection *alloc;  /* mt_write_pprof_fd_interval's: alloc_* from it */
    int side;                   /* 0 every value; 1 inuse_* only; 2 alloc_* only */
    long long from;             /* the profile's time: trace start + from (us) */
    const mt_model *m;
    gzFile gz;
    mt_pb out, tmp, tmp2;
    mt_pb_strtab strs;
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
    if (w->side) {   /* one half of each sample; a sample of zeros is left out */
        v[w->side == 1 ? 0 : 2] = v[w->side == 1 ? 1 : 3] = 0;
        if (!(v[0] | v[1] | v[2] | v[3]))
            return w->failed;
    }
    mt_pb_packed(&w->tmp2, 1, w->ids, k, &w->tmp);
    mt_pb_packed(&w->tmp2, 2, v, 4, &w->tmp);
    mt_pb_msg(&w->out, 2, &w->tmp2);
    flush(w, 0);
    return w->failed;
}

static void value_type(writer *w, unsigned field, const char *type, const char *unit)
{
    mt_pb_uint(&w->tmp, 1, mt_pb_str_index(&w->strs, type));
    mt_pb_uint(&w->tmp, 2, mt_pb_str_index(&w->strs, unit));
    mt_pb_msg(&w->out, field, &w->tmp);
}

static int encode(writer *w, const mt_pprof_options *o)
{
    const mt_model *m = w->m;
    const mt_trace_info *info = mt_model_info(m);
    const mt_frame *fr = mt_model_frames(m);
    const mt_func *fn = mt_model_funcs(m);
    mt_pb_str_index(&w->strs, "");
    value_type(w, 1, "alloc_objects", "count");
    value_type(w, 1, "alloc_space", "bytes");
    value_type(w, 1, "inuse_objects", "count");
    value_type(w, 1, "inuse_space", "bytes");
    if (!w->alloc) {
        if (mt_selection_each_stack(w->s, put_sample, w) || w->failed)
            return -1;
    } else {
        /* inuse_* from s's stacks, alloc_* from alloc's: two samples where
         * a stack has both (pprof readers add samples of one stack up) */
        const mt_selection *s = w->s;
        w->side = 1;
        int bad = mt_selection_each_stack(s, put_sample, w) || w->failed;
        w->side = 2;
        w->s = w->alloc;
        bad = bad || mt_selection_each_stack(w->alloc, put_sample, w) || w->failed;
        w->s = s;
        if (bad)
            return -1;
    }
    /* mapping: the executable, symbolized already */
    mt_pb_uint(&w->tmp, 1, 1);
    mt_pb_uint(&w->tmp, 5, mt_pb_str_index(&w->strs, info->executable_name ? info->executable_name : ""));
    mt_pb_uint(&w->tmp, 7, 1);
    mt_pb_uint(&w->tmp, 8, 1);
    mt_pb_uint(&w->tmp, 9, 1);
    mt_pb_uint(&w->tmp, 10, 1);
    mt_pb_msg(&w->out, 3, &w->tmp);
    w->func_used = calloc(mt_model_n_funcs(m) + 1, 1);
    if (!w->func_used)
        return -1;
    for (size_t i = 0; i < w->n_locs; i++) {
        const loc *l = &w->locs[i];
        mt_pb_uint(&w->tmp2, 1, i + 1);
        mt_pb_uint(&w->tmp2, 2, 1);
        for (mt_frame_id f = l->hi + 1; f-- > l->lo;) { /* innermost first */
            mt_pb_uint(&w->tmp, 1, (uint64_t)fr[f].func + 1);
            mt_pb_uint(&w->tmp, 2, fr[f].line);
            mt_pb_msg(&w->tmp2, 4, &w->tmp);
            w->func_used[fr[f].func] = 1;
        }
        mt_pb_msg(&w->out, 4, &w->tmp2);
        flush(w, 0);
    }
    for (size_t f = 0; f < mt_model_n_funcs(m); f++) {
        if (!w->func_used[f])
            continue;
        uint64_t name = mt_pb_str_index(&w->strs, fn[f].name), shown = name;
        if (!(o && o->full_names)) {
            /* the string table keeps pointers: the short name must live on */
            if (!w->short_names && !(w->short_names = calloc(mt_model_n_funcs(m) + 1, sizeof(char *))))
                return -1;
            char buf[1024];
            mt_display_name(buf, sizeof buf, fn[f].name, 0);
            if (strcmp(buf, fn[f].name)) {
                if (!(w->short_names[f] = strdup(buf)))
                    return -1;
                shown = mt_pb_str_index(&w->strs, w->short_names[f]);
            }
        }
        mt_pb_uint(&w->tmp, 1, f + 1);
        mt_pb_uint(&w->tmp, 2, shown);
        mt_pb_uint(&w->tmp, 3, name);
        mt_pb_uint(&w->tmp, 4, mt_pb_str_index(&w->strs, fn[f].filename));
        mt_pb_msg(&w->out, 5, &w->tmp);
        flush(w, 0);
    }
    mt_pb_uint(&w->out, 9, ((uint64_t)info->start_time + (uint64_t)w->from) * 1000);
    mt_pb_uint(&w->out, 10, ((uint64_t)mt_model_end(m) - (uint64_t)w->from) * 1000);
    value_type(w, 11, "space", "bytes");
    /* a pprof profile read in keeps its own sampling: its period (none
     * when it stated none) and no "memtrace:" comment, so that reading the
     * re-export derives the same error (docs/profiles-input.md) */
    int prof = mt_model_profile(m);
    if (prof != MT_PROFILE_NO_ERROR)
        mt_pb_uint(&w->out, 12, (uint64_t)llround(mt_model_bytes_per_sample(m)));
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
    uint64_t ci = mt_pb_str_index(&w->strs, comment);
    mt_pb_packed(&w->out, 13, &ci, 1, &w->tmp);
    if (o && o->alloc_default)
        mt_pb_uint(&w->out, 14, mt_pb_str_index(&w->strs, "alloc_space"));
    if (w->strs.oom)
        return -1;
    /* the string table, in index order (index 0 is "") */
    for (size_t i = 0; i < w->strs.n; i++) {
        mt_pb_utf8(&w->out, 6, w->strs.v[i]);
        flush(w, 0);
    }
    flush(w, 1);
    return w->failed || w->out.oom ? -1 : 0;
}

static int write_fd(int fd, const mt_selection *s, const mt_selection *alloc, long long from,
                    const mt_pprof_options *o, char **err)
{
    writer w;
    memset(&w, 0, sizeof w);
    w.s = s;
    w.alloc = alloc;
    w.from = from;
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

int mt_write_pprof_fd(int fd, const mt_selection *s, const mt_pprof_options *o, char **err)
{
    return write_fd(fd, s, NULL, 0, o, err);
}

int mt_write_pprof_fd_interval(int fd, const mt_selection *s, const mt_selection *alloc,
                               mt_timedelta from, const mt_pprof_options *o, char **err)
{
    mt_timedelta end = mt_model_end(mt_selection_model(s));
    return write_fd(fd, s, alloc, from > 0 && from <= end ? from : 0, o, err);
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
