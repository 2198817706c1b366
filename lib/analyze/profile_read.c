/*
 * profile_read.c - the decoder of pprof profiles (profile.proto), gzipped
 * or not, into the flat tables of profile_read.h.
 *
 * The protobuf decoder is written by hand on the wire reader of
 * lib/common/protowire.c, whose writer lib/present/pprof.c encodes with:
 * the schema is small (varints and length-delimited fields in a handful
 * of messages), and protobuf-c would need a code generator at build time.
 * Being ours, it is also written for hostile input: every length is
 * checked against what is left of its message (protowire.h), wrong wire
 * types are errors with the offset, and the tables only grow with the bytes read, within
 * MTP_MAX_BYTES (the limit on the inflated data, which refuses gzip bombs).
 * It is the one gzip reader of the tree (traces are never compressed).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "profile_read.h"
#include "hash.h"
#include "protowire.h"
#include "table.h"
#include "vec.h"

#define MTP_STR_(x) #x
#define MTP_STR(x) MTP_STR_(x)

/* The wire reader (protowire.h): failures carry the offset from the start. */
typedef mt_pb_in dec;
enum { WT_VARINT = MT_PB_VARINT, WT_I64 = MT_PB_I64, WT_LEN = MT_PB_LEN, WT_I32 = MT_PB_I32 };

typedef struct build {
    mt_profile *pf;
    size_t cap_str, cap_str_len, cap_types, cap_samples, cap_samples_off, cap_loc_idx, cap_values, cap_locs, cap_lines,
        cap_funcs, cap_maps, cap_comments;
    const uint8_t **str_at;  /* the strings in the input */
    size_t *str_len;
    uint64_t *loc_ids;       /* raw ids of the samples, resolved at the end */
    size_t cap_loc_ids;
    size_t *loc_ids_off;     /* offset of each sample, for errors */
    uint64_t *line_func_id;  /* raw function ids of the lines */
    size_t cap_line_ids;
    uint64_t *loc_map_id;    /* raw mapping ids of the locations */
    size_t cap_loc_map;
    size_t cur_loc0;         /* the sample being read: its first location id */
    size_t cur_val0;         /* and its first value */
    const char *limit;       /* a bound the sample passed (push_loc_id) */
    mta_table stacks;        /* hash of a stack's location ids -> the first sample with it */
} build;

/* A scalar varint field, with its wire type checked. */
static int scalar(dec *d, const char *msg, uint64_t field, unsigned wt, uint64_t *out)
{
    if (wt != WT_VARINT)
        return mt_pb_fail(d, d->p, "%s field %llu: wire type %u, expected a varint", msg,
                     (unsigned long long)field, wt);
    return mt_pb_read_varint(d, out);
}

/* A repeated varint field, packed (WT_LEN) or not: each value to fn. */
static int repeated(dec *d, const char *msg, uint64_t field, unsigned wt,
                    int (*fn)(build *b, uint64_t v), build *b)
{
    uint64_t v;
    if (wt == WT_VARINT)
        return mt_pb_read_varint(d, &v) < 0 ? -1 : fn(b, v);
    if (wt != WT_LEN)
        return mt_pb_fail(d, d->p, "%s field %llu: wire type %u, expected varints", msg,
                     (unsigned long long)field, wt);
    dec s;
    if (mt_pb_read_len(d, &s) < 0)
        return -1;
    while (s.p < s.end)
        if (mt_pb_read_varint(&s, &v) < 0 || fn(b, v) < 0) {
            mt_pb_up(d, &s); /* (fn fails only when out of memory: d not failed) */
            return -1;
        }
    return 0;
}

static int push_loc_id(build *b, uint64_t v)
{
    mt_profile *pf = b->pf;
    if (pf->n_loc_idx - b->cur_loc0 >= MTP_MAX_DEPTH) {
        b->limit = "its stack holds more than " MTP_STR(MTP_MAX_DEPTH) " locations (deeper than any "
                   "profiler writes): refused";
        return -1;
    }
    if (MT_VEC_ROOM(b->loc_ids, pf->n_loc_idx, b->cap_loc_ids, 64) < 0)
        return -1;
    b->loc_ids[pf->n_loc_idx++] = v;
    return 0;
}

static int push_value(build *b, uint64_t v)
{
    mt_profile *pf = b->pf;
    if (pf->n_values - b->cur_val0 >= MTP_MAX_VALUES) {
        b->limit = "it holds more than " MTP_STR(MTP_MAX_VALUES) " values (one per sample type): "
                   "refused";
        return -1;
    }
    if (MT_VEC_ROOM(pf->values, pf->n_values, b->cap_values, 64) < 0)
        return -1;
    pf->values[pf->n_values++] = (int64_t)v;
    return 0;
}

static int push_comment(build *b, uint64_t v)
{
    mt_profile *pf = b->pf;
    if (MT_VEC_ROOM(pf->comments, pf->n_comments, b->cap_comments, 4) < 0)
        return -1;
    pf->comments[pf->n_comments++] = v;
    return 0;
}

static int oom(dec *d)
{
    return mt_pb_fail(d, d->p, "out of memory");
}

/* A message of varint fields: field f (1 .. n) into *out[f - 1] (NULL:
 * ignored), field sub (0: none) a message handed to on_sub, others
 * skipped. */
static int message(dec *d, dec *s, const char *msg, uint64_t *const *out, unsigned n,
                   unsigned sub, int (*on_sub)(dec *d, dec *s, build *b), build *b)
{
    while (s->p < s->end) {
        uint64_t f, v;
        unsigned wt;
        if (mt_pb_read_key(s, &f, &wt) < 0)
            return mt_pb_up(d, s);
        if (sub && f == sub) {
            if (wt != WT_LEN)
                return mt_pb_fail(d, s->p, "%s field %u: wire type %u, expected a message", msg, sub, wt);
            dec ms;
            if (mt_pb_read_len(s, &ms) < 0)
                return mt_pb_up(d, s);
            if (on_sub(d, &ms, b) < 0)
                return -1;
        } else if (f >= 1 && f <= n && out[f - 1]) {
            if (scalar(s, msg, f, wt, &v) < 0)
                return mt_pb_up(d, s);
            *out[f - 1] = v;
        } else if (mt_pb_skip(s, wt) < 0) {
            return mt_pb_up(d, s);
        }
    }
    return 0;
}

static int value_type(dec *d, dec *s, mtp_vtype *vt)
{
    memset(vt, 0, sizeof *vt);
    uint64_t *const out[] = {&vt->type, &vt->unit};
    return message(d, s, "ValueType", out, 2, 0, NULL, NULL);
}

/* Room for element n of a table (*v, *cap) and of the raw ids beside it. */
static int room_ids(dec *d, void *v, size_t n, size_t *cap, size_t elem, uint64_t **ids)
{
    if (n < *cap)
        return 0;
    if (mt_vec_grow_(v, cap, elem, 64) < 0)
        return oom(d);
    uint64_t *p = realloc(*ids, *cap * sizeof *p);
    if (!p)
        return oom(d); /* (the decoding stops: the ids are never reached) */
    *ids = p;
    return 0;
}

/* A stack already read (the same location ids, as most samples of a
 * profile repeat a stack with other values or labels) is kept once: the
 * sample points at the first copy. Memory and the model's work then
 * follow the distinct stacks, not how often a file repeats them. */
static int same_stack(build *b, mtp_sample *sm)
{
    mt_profile *pf = b->pf;
    size_t n = sm->n_locs;
    if (n == 0)
        return 0;
    const uint64_t *ids = b->loc_ids + sm->loc0;
    uint64_t h = mt_hash_bytes((const char *)ids, n * sizeof *ids);
    int64_t j = mta_table_get(&b->stacks, h);
    if (j >= 0) {
        const mtp_sample *o = &pf->samples[j];
        if (o->n_locs == n && !memcmp(b->loc_ids + o->loc0, ids, n * sizeof *ids)) {
            pf->n_loc_idx = sm->loc0;
            sm->loc0 = o->loc0;
        }
        return 0; /* (another stack of the same hash: kept apart) */
    }
    return mta_table_put(&b->stacks, h, (uint32_t)pf->n_samples);
}

static int sample(dec *d, dec *s, build *b)
{
    mt_profile *pf = b->pf;
    if (MT_VEC_ROOM(pf->samples, pf->n_samples, b->cap_samples, 64) < 0 ||
        MT_VEC_ROOM(b->loc_ids_off, pf->n_samples, b->cap_samples_off, 64) < 0)
        return oom(d);
    mtp_sample *sm = &pf->samples[pf->n_samples];
    const uint8_t *at = s->p;
    b->loc_ids_off[pf->n_samples] = (size_t)(s->p - s->base);
    sm->loc0 = (uint32_t)pf->n_loc_idx;  /* (at most MTP_MAX_REFS + MTP_MAX_DEPTH) */
    b->cur_loc0 = pf->n_loc_idx;
    b->cur_val0 = pf->n_values;
    sm->val0 = (uint32_t)pf->n_values;
    while (s->p < s->end) {
        uint64_t f;
        unsigned wt;
        if (mt_pb_read_key(s, &f, &wt) < 0)
            return mt_pb_up(d, s);
        int rc = 0;
        if (f == 1)
            rc = repeated(s, "Sample", f, wt, push_loc_id, b);
        else if (f == 2)
            rc = repeated(s, "Sample", f, wt, push_value, b);
        else
            rc = mt_pb_skip(s, wt); /* labels */
        if (rc < 0 && b->limit)
            return mt_pb_fail(d, at, "sample %zu: %s", pf->n_samples, b->limit);
        if (rc < 0)
            return s->failed ? mt_pb_up(d, s) : oom(d);
    }
    sm->n_locs = (uint32_t)(pf->n_loc_idx - sm->loc0);
    sm->n_vals = (uint32_t)(pf->n_values - sm->val0);
    if (sm->n_vals == 0) /* (a sample is then at least 4 bytes: memory stays in proportion) */
        return mt_pb_fail(d, at, "sample %zu without values", pf->n_samples);
    if (same_stack(b, sm) < 0)
        return oom(d);
    if (pf->n_loc_idx > MTP_MAX_REFS)
        return mt_pb_fail(d, at, "sample %zu: the distinct stacks hold more than %zu location "
                     "references together: refused", pf->n_samples, MTP_MAX_REFS);
    pf->n_samples++;
    return 0;
}

static int line(dec *d, dec *s, build *b)
{
    mt_profile *pf = b->pf;
    if (room_ids(d, &pf->lines, pf->n_lines, &b->cap_lines, sizeof *pf->lines, &b->line_func_id) < 0)
        return -1;
    uint64_t fid = 0, ln = 0;
    uint64_t *const out[] = {&fid, &ln};
    if (message(d, s, "Line", out, 2, 0, NULL, NULL) < 0)
        return -1;
    b->line_func_id[pf->n_lines] = fid;
    pf->lines[pf->n_lines].func = 0;
    pf->lines[pf->n_lines++].line = (int64_t)ln;
    return 0;
}

static int location(dec *d, dec *s, build *b)
{
    mt_profile *pf = b->pf;
    if (room_ids(d, &pf->locs, pf->n_locs, &b->cap_locs, sizeof *pf->locs, &b->loc_map_id) < 0)
        return -1;
    mtp_loc l = {.line0 = pf->n_lines};
    uint64_t map = 0;
    uint64_t *const out[] = {&l.id, &map, &l.address};
    const uint8_t *at = s->p;
    if (message(d, s, "Location", out, 3, 4, line, b) < 0)
        return -1;
    if (l.id == 0)
        return mt_pb_fail(d, at, "location with id 0");
    l.n_lines = pf->n_lines - l.line0;
    b->loc_map_id[pf->n_locs] = map;
    pf->locs[pf->n_locs++] = l;
    return 0;
}

static int function(dec *d, dec *s, build *b)
{
    mt_profile *pf = b->pf;
    if (MT_VEC_ROOM(pf->funcs, pf->n_funcs, b->cap_funcs, 64) < 0)
        return oom(d);
    mtp_func fn = {0};
    uint64_t *const out[] = {&fn.id, &fn.name, &fn.system_name, &fn.filename};
    const uint8_t *at = s->p;
    if (message(d, s, "Function", out, 4, 0, NULL, NULL) < 0)
        return -1;
    if (fn.id == 0)
        return mt_pb_fail(d, at, "function with id 0");
    pf->funcs[pf->n_funcs++] = fn;
    return 0;
}

static int mapping(dec *d, dec *s, build *b)
{
    mt_profile *pf = b->pf;
    if (MT_VEC_ROOM(pf->maps, pf->n_maps, b->cap_maps, 8) < 0)
        return oom(d);
    mtp_map mp = {0};
    uint64_t *const out[] = {&mp.id, NULL, NULL, NULL, &mp.filename};
    if (message(d, s, "Mapping", out, 5, 0, NULL, NULL) < 0)
        return -1;
    pf->maps[pf->n_maps++] = mp;
    return 0;
}

static int profile(dec *d, build *b)
{
    mt_profile *pf = b->pf;
    while (d->p < d->end) {
        uint64_t f, v;
        unsigned wt;
        const uint8_t *at = d->p;
        if (mt_pb_read_key(d, &f, &wt) < 0)
            return -1;
        dec s;
        int rc = 0;
        switch (f) {
        case 1: case 2: case 3: case 4: case 5: case 6: case 11:
            if (wt != WT_LEN)
                return mt_pb_fail(d, at, "Profile field %llu: wire type %u, expected a message",
                             (unsigned long long)f, wt);
            if (mt_pb_read_len(d, &s) < 0)
                return -1;
            if (f == 1) {
                if (MT_VEC_ROOM(pf->types, pf->n_types, b->cap_types, 4) < 0)
                    return oom(d);
                rc = value_type(d, &s, &pf->types[pf->n_types++]);
            } else if (f == 2) {
                rc = sample(d, &s, b);
            } else if (f == 3) {
                rc = mapping(d, &s, b);
            } else if (f == 4) {
                rc = location(d, &s, b);
            } else if (f == 5) {
                rc = function(d, &s, b);
            } else if (f == 6) {
                if (MT_VEC_ROOM(b->str_at, pf->n_str, b->cap_str, 64) < 0 ||
                    MT_VEC_ROOM(b->str_len, pf->n_str, b->cap_str_len, 64) < 0)
                    return oom(d);
                b->str_at[pf->n_str] = s.p;
                b->str_len[pf->n_str++] = (size_t)(s.end - s.p);
            } else {
                rc = value_type(d, &s, &pf->period_type);
            }
            break;
        case 13:
            rc = repeated(d, "Profile", f, wt, push_comment, b);
            if (rc < 0 && !d->failed)
                return oom(d);
            break;
        case 7: case 8: case 9: case 10: case 12: case 14:
            if (scalar(d, "Profile", f, wt, &v) < 0)
                return -1;
            if (f == 9)
                pf->time_nanos = (int64_t)v;
            else if (f == 10)
                pf->duration_nanos = (int64_t)v;
            else if (f == 12)
                pf->period = (int64_t)v;
            else if (f == 14)
                pf->default_type = v;
            break;
        default:
            rc = mt_pb_skip(d, wt);
        }
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* A table's ids (n of them, stride bytes apart from *id) -> their
 * indexes in t. what: the table's name, for an id defined twice; NULL: a
 * later one wins (mapping ids only name files), and id 0 is no id. */
static int index_ids(dec *d, mta_table *t, const uint64_t *id, size_t n, size_t stride,
                     const char *what)
{
    if (mta_table_init(t, n) < 0)
        return oom(d);
    for (size_t i = 0; i < n; i++) {
        uint64_t v = *(const uint64_t *)((const char *)id + i * stride);
        if (!what && !v)
            continue;
        if (what && mta_table_get(t, v) >= 0)
            return mt_pb_fail(d, d->end, "%s id %llu defined twice", what, (unsigned long long)v);
        if (mta_table_put(t, v, (uint32_t)i) < 0)
            return oom(d);
    }
    return 0;
}

/* The indexes the tables hold, checked; raw ids turned into indexes. */
static int resolve(dec *d, build *b)
{
    mt_profile *pf = b->pf;
    const uint8_t *end = d->end;
    size_t ns = pf->n_str;
    if (ns == 0 || b->str_len[0] != 0)
        return mt_pb_fail(d, end, "the string table %s", ns ? "does not start with \"\"" : "is empty");
#define STR_OK(i, what) \
    do { if ((i) >= ns) return mt_pb_fail(d, end, "%s: string index %llu beyond the table's %zu strings", \
                                     what, (unsigned long long)(i), ns); } while (0)
    for (size_t i = 0; i < pf->n_types; i++) {
        STR_OK(pf->types[i].type, "sample type");
        STR_OK(pf->types[i].unit, "sample type");
    }
    STR_OK(pf->period_type.type, "period type");
    STR_OK(pf->period_type.unit, "period type");
    STR_OK(pf->default_type, "default sample type");
    for (size_t i = 0; i < pf->n_comments; i++)
        STR_OK(pf->comments[i], "comment");
    for (size_t i = 0; i < pf->n_funcs; i++) {
        STR_OK(pf->funcs[i].name, "function name");
        STR_OK(pf->funcs[i].system_name, "function system name");
        STR_OK(pf->funcs[i].filename, "function file name");
    }
    for (size_t i = 0; i < pf->n_maps; i++)
        STR_OK(pf->maps[i].filename, "mapping file name");
#undef STR_OK
    if (pf->n_types == 0)
        return mt_pb_fail(d, end, "no sample type: not a profile");
    if (pf->n_locs >= UINT32_MAX || pf->n_funcs >= UINT32_MAX)
        return mt_pb_fail(d, end, "too many locations or functions");
    /* ids -> indexes */
    mta_table locs = {0}, funcs = {0}, maps = {0};
    int rc = -1;
    if (index_ids(d, &locs, pf->locs ? &pf->locs[0].id : NULL, pf->n_locs, sizeof *pf->locs, "location") < 0 ||
        index_ids(d, &funcs, pf->funcs ? &pf->funcs[0].id : NULL, pf->n_funcs, sizeof *pf->funcs, "function") < 0 ||
        index_ids(d, &maps, pf->maps ? &pf->maps[0].id : NULL, pf->n_maps, sizeof *pf->maps, NULL) < 0)
        goto out;
    for (size_t i = 0; i < pf->n_lines; i++) {
        uint64_t id = b->line_func_id[i];
        int64_t k = id ? mta_table_get(&funcs, id) : -1;
        if (id && k < 0) {
            mt_pb_fail(d, end, "a line names function id %llu, which is not defined",
                  (unsigned long long)id);
            goto out;
        }
        pf->lines[i].func = id ? (uint64_t)k + 1 : 0;
    }
    for (size_t i = 0; i < pf->n_locs; i++) {
        uint64_t id = b->loc_map_id[i];
        int64_t k = id ? mta_table_get(&maps, id) : -1;
        pf->locs[i].mapping = k >= 0 ? (uint64_t)k + 1 : 0; /* (an unknown mapping only names less) */
    }
    for (size_t i = 0; i < pf->n_samples; i++) {
        const mtp_sample *sm = &pf->samples[i];
        if (sm->n_vals != pf->n_types) {
            mt_pb_fail(d, d->base + b->loc_ids_off[i], "sample %zu has %u values for %zu sample types", i,
                  sm->n_vals, pf->n_types);
            goto out;
        }
    }
    /* location ids -> indexes, in place: the 4-byte index j goes where
     * the 8-byte ids before j were, never over one still to be read */
    for (size_t j = 0; j < pf->n_loc_idx; j++) {
        uint64_t id;
        memcpy(&id, (const char *)b->loc_ids + j * sizeof id, sizeof id);
        int64_t k = id ? mta_table_get(&locs, id) : -1;
        if (k < 0) {
            size_t i = 0;
            while (i + 1 < pf->n_samples &&
                   !(pf->samples[i].loc0 <= j && j < (size_t)pf->samples[i].loc0 + pf->samples[i].n_locs))
                i++;
            mt_pb_fail(d, d->base + b->loc_ids_off[i], "sample %zu names location id %llu, which is %s",
                  i, (unsigned long long)id, id ? "not defined" : "not allowed");
            goto out;
        }
        uint32_t k32 = (uint32_t)k;
        memcpy((char *)b->loc_ids + j * sizeof k32, &k32, sizeof k32);
    }
    if (pf->n_loc_idx) {
        uint32_t *li = realloc(b->loc_ids, pf->n_loc_idx * sizeof *li);
        pf->loc_idx = li ? li : (uint32_t *)(void *)b->loc_ids;
        b->loc_ids = NULL;
    }
    /* the strings, NUL-terminated, in one block */
    size_t total = 0;
    for (size_t i = 0; i < ns; i++)
        total += b->str_len[i] + 1;
    if (!(pf->arena = malloc(total)) || !(pf->str = malloc(ns * sizeof *pf->str))) {
        oom(d);
        goto out;
    }
    char *w = pf->arena;
    for (size_t i = 0; i < ns; i++) {
        memcpy(w, b->str_at[i], b->str_len[i]);
        w[b->str_len[i]] = 0;
        pf->str[i] = w;
        w += b->str_len[i] + 1;
    }
    rc = 0;
out:
    mta_table_destroy(&locs);
    mta_table_destroy(&funcs);
    mta_table_destroy(&maps);
    return rc;
}

void mtp_free(mt_profile *p)
{
    if (!p)
        return;
    free(p->str);
    free(p->arena);
    free(p->types);
    free(p->samples);
    free(p->loc_idx);
    free(p->values);
    free(p->locs);
    free(p->lines);
    free(p->funcs);
    free(p->maps);
    free(p->comments);
    free(p);
}

static char *msgf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *msgf(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return strdup(buf);
}

/* gzip data inflated into *out (malloc'd), at most MTP_MAX_BYTES. Every
 * member is read, one after the other, as gzip -d does (a file of several
 * is their data concatenated); anything after the last member that is not
 * one is refused, never ignored. *members: how many. */
static int inflate_all(const uint8_t *data, size_t len, uint8_t **out, size_t *out_len,
                       unsigned *members, char **err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    *members = 1;
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
        *err = NULL;
        return -1;
    }
    size_t cap = len < 4096 ? 16384 : len * 4, n = 0;
    if (cap > MTP_MAX_BYTES + 1)
        cap = MTP_MAX_BYTES + 1;
    uint8_t *buf = malloc(cap);
    int rc = Z_OK;
    size_t fed = 0;
    while (buf) {
        if (z.avail_in == 0 && fed < len) {
            size_t k = len - fed > (1u << 30) ? (1u << 30) : len - fed;
            z.next_in = (Bytef *)(data + fed);
            z.avail_in = (uInt)k;
            fed += k;
        }
        if (n == cap) {
            if (cap > MTP_MAX_BYTES) {
                *err = msgf("inflates to more than %zu MiB: refused (a gzip bomb, or too big a "
                            "profile)", MTP_MAX_BYTES >> 20);
                goto fail;
            }
            size_t nc = cap * 2 > MTP_MAX_BYTES + 1 ? MTP_MAX_BYTES + 1 : cap * 2;
            uint8_t *nb = realloc(buf, nc);
            if (!nb)
                break;
            buf = nb;
            cap = nc;
        }
        size_t room = cap - n > (1u << 30) ? (1u << 30) : cap - n;
        z.next_out = buf + n;
        z.avail_out = (uInt)room;
        rc = inflate(&z, Z_NO_FLUSH);
        n += room - z.avail_out;
        if (rc == Z_STREAM_END) {
            if (n > MTP_MAX_BYTES) {
                *err = msgf("inflates to more than %zu MiB: refused (a gzip bomb, or too big a "
                            "profile)", MTP_MAX_BYTES >> 20);
                goto fail;
            }
            size_t at = (size_t)((const uint8_t *)z.next_in - data);
            if (at < len) {
                /* more: another member, or trailing garbage */
                if (len - at < 2 || data[at] != 0x1f || data[at + 1] != 0x8b) {
                    *err = msgf("offset %zu: %zu bytes after the end of gzip member %u are not "
                                "another gzip member: refused (trailing garbage)", at, len - at,
                                *members);
                    goto fail;
                }
                if (inflateReset(&z) != Z_OK) {
                    *err = NULL;
                    goto fail;
                }
                ++*members;
                continue;
            }
            inflateEnd(&z);
            *out = buf;
            *out_len = n;
            return 0;
        }
        if (rc == Z_BUF_ERROR && z.avail_in == 0 && fed == len) {
            *err = msgf("gzip data truncated at offset %zu", len);
            goto fail;
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            *err = msgf("offset %zu: bad gzip data (%s)", (size_t)(z.next_in - data),
                        z.msg ? z.msg : "inflate failed");
            goto fail;
        }
    }
    *err = NULL; /* out of memory */
fail:
    inflateEnd(&z);
    free(buf);
    return -1;
}

mt_profile *mtp_decode(const uint8_t *data, size_t len, char **err)
{
    *err = NULL;
    uint8_t *raw = NULL;
    size_t raw_len = len;
    int gz = len >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    unsigned members = 0;
    if (gz) {
        if (inflate_all(data, len, &raw, &raw_len, &members, err) < 0)
            return NULL;
        data = raw;
    } else if (len > MTP_MAX_BYTES) {
        *err = msgf("more than %zu MiB of protobuf: refused", MTP_MAX_BYTES >> 20);
        return NULL;
    }
    mt_profile *pf = calloc(1, sizeof *pf);
    build b;
    memset(&b, 0, sizeof b);
    b.pf = pf;
    dec d = {.base = data, .p = data, .end = data + raw_len};
    if (!pf || mta_table_init(&b.stacks, 64) < 0) {
        free(pf);
        free(raw);
        return NULL;
    }
    pf->gzipped = gz;
    pf->bytes = raw_len;
    int rc = profile(&d, &b);
    if (rc == 0)
        rc = resolve(&d, &b);
    if (rc < 0) {
        if (strcmp(d.why, "out of memory") != 0)
            *err = msgf("offset %zu%s: %s%s", d.why_off, gz ? " of the inflated data" : "", d.why,
                        members > 1 ? " (the file holds several gzip members, read as one: "
                                      "profiles concatenated are not one profile)" : "");
        mtp_free(pf);
        pf = NULL;
    }
    free(b.str_at);
    free(b.str_len);
    free(b.loc_ids);
    free(b.loc_ids_off);
    free(b.line_func_id);
    free(b.loc_map_id);
    mta_table_destroy(&b.stacks);
    free(raw);
    return pf;
}

int mtp_sniff_bytes(const uint8_t *p, size_t n)
{
    if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
        return 1;
    /* the first key: a field of Profile with its wire type */
    if (n < 1)
        return 0;
    dec d = {.base = p, .p = p, .end = p + n};
    uint64_t f;
    unsigned wt;
    if (mt_pb_read_key(&d, &f, &wt) < 0)
        return 0;
    if (f <= 6 || f == 11)
        return wt == WT_LEN;
    if (f == 13)
        return wt == WT_LEN || wt == WT_VARINT;
    return (f >= 7 && f <= 14) && wt == WT_VARINT;
}

int mtp_sniff(const char *path)
{
    /* only regular files: a FIFO is never opened here (its writer would
     * take this for its reader), and pipes carry traces */
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    uint8_t head[16];
    ssize_t k = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        k = read(fd, head, sizeof head);
    close(fd);
    return k > 0 && mtp_sniff_bytes(head, (size_t)k);
}

mt_profile *mtp_read(const char *path, char **err)
{
    *err = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *err = msgf("%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        *err = msgf("%s: not a regular file (a pprof profile is read from a file)", path);
        return NULL;
    }
    size_t len = (size_t)st.st_size;
    if ((uint64_t)st.st_size > MTP_MAX_BYTES) {
        close(fd);
        *err = msgf("%s: more than %zu MiB: refused", path, MTP_MAX_BYTES >> 20);
        return NULL;
    }
    uint8_t *buf = malloc(len ? len : 1);
    size_t got = 0;
    while (buf && got < len) {
        ssize_t k = read(fd, buf + got, len - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd);
    if (!buf) {
        *err = msgf("%s: out of memory", path);
        return NULL;
    }
    char *e = NULL;
    mt_profile *pf = mtp_decode(buf, got, &e);
    free(buf);
    if (!pf)
        *err = msgf("%s: %s%s", path, e ? e : "out of memory",
                    e ? " (not a valid pprof profile)" : "");
    free(e);
    return pf;
}
