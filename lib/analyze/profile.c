/*
 * profile.c - a pprof profile as a folded model: the decoded profile
 * (profile_read.c) turned into functions, frames, the stack trie and the
 * per-stack costs (node_cost) a folded model holds, so that selections and
 * every per-stack query and report work on it unchanged
 * (docs/profiles-input.md).
 *
 * Values. The sample types alloc_space/alloc_objects and
 * inuse_space/inuse_objects (or, failing those names, the first types in
 * bytes and in counts) give alloc_bytes/alloc_objects and
 * live_bytes/live_objects; inuse is what was live when the profile was
 * written, so live measures are taken at the end (MT_TIME_END). The error:
 *
 *   memtrace's own output (a "memtrace:" comment): bytes = samples * period,
 *     so a stack's samples are its bytes / period, as in the trace;
 *   Go (period_type space/bytes, period R > 0): an object of s bytes was
 *     sampled with p = 1 - exp(-s/R), and its count scaled by 1/p; a
 *     sample of n estimated objects of s = bytes/n bytes had k = n p
 *     sampled (its samples), and its cost carries the variances of its
 *     bytes and count (go_error), which add over a site's samples of every
 *     size: a site of one 14 MB object and of many small strings has the
 *     error of its strings, not of its big object;
 *   anything else (no period: tcmalloc, jemalloc, exports): the error
 *     cannot be derived; the model says so (MT_PROFILE_NO_ERROR) and the
 *     costs carry MTP_EXACT samples, which no mark flags.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "model.h"
#include "profile.h"
#include "profile_read.h"
#include "scale.h"
#include "table.h"
#include "warn.h"

/* Samples of a cost whose error is nil or unknown: 1/sqrt of it rounds to
 * 0%, and sums of a profile's (at most MTP_MAX_BYTES) stay far from
 * overflowing. */
#define MTP_EXACT ((uint64_t)1 << 32)

int mt_path_is_profile(const char *path)
{
    return mtp_sniff(path);
}

int mt_model_profile(const mt_model *m)
{
    return m->profile;
}

unsigned mt_model_profile_measures(const mt_model *m)
{
    return m->profile_has;
}

const char *mt_model_profile_kind(const mt_model *m)
{
    return m->profile_kind;
}

typedef struct pbuild {
    mt_model *m;
    const mt_profile *pf;
    mta_table funcs;         /* pprof function index -> mt_func_id */
    mta_table frames;        /* pprof location index -> first mt_frame_id */
    int col[4];              /* value index of alloc_objects, alloc_space, inuse_objects, inuse_space; -1 none */
    enum { ERR_NONE, ERR_MEMTRACE, ERR_GO } err;
    const char *why;         /* what failed, when not memory */
    double period;
} pbuild;

static const char *str(const mt_profile *pf, uint64_t i)
{
    return i < pf->n_str ? pf->str[i] : "";
}

static int64_t func_of(pbuild *b, uint64_t fidx1)
{
    if (!fidx1)
        return -1;
    int64_t f = mta_table_get(&b->funcs, fidx1);
    if (f >= 0)
        return f;
    const mtp_func *pfn = &b->pf->funcs[fidx1 - 1];
    const char *name = str(b->pf, pfn->name);
    if (!*name)
        name = str(b->pf, pfn->system_name);
    f = mta_stacks_func(&b->m->stacks, *name ? name : "??", str(b->pf, pfn->filename));
    if (f < 0 || mta_table_put(&b->funcs, fidx1, (uint32_t)f) < 0)
        return -2;
    return f;
}

/* The frames of location li, outermost first; returns the first, or -1
 * when out of memory. */
static int64_t frames_of(pbuild *b, uint32_t li)
{
    int64_t f = mta_table_get(&b->frames, li);
    if (f >= 0)
        return f;
    mta_stacks *m = &b->m->stacks;
    const mtp_loc *l = &b->pf->locs[li];
    size_t n = l->n_lines > 65535 ? 65535 : l->n_lines;
    int64_t first = (int64_t)m->frames.n;
    if (first >= UINT32_MAX - 65536)
        return -1;
    size_t made = 0;
    for (size_t i = n; i-- > 0;) { /* lines: innermost first */
        const mtp_line *ln = &b->pf->lines[l->line0 + i];
        int64_t fn = func_of(b, ln->func);
        if (fn == -2)
            return -1;
        if (fn < 0)
            continue;
        mt_frame fr = {.func = (mt_func_id)fn,
                       .line = ln->line > 0 && ln->line <= UINT32_MAX ? (uint32_t)ln->line : 0,
                       .inline_index = (uint16_t)made++,
                       .code = l->id};
        if (MTA_PUSH(m->frames, fr) < 0)
            return -1;
    }
    if (made == 0) {
        /* no function: the address, in its mapping's file */
        char name[40];
        snprintf(name, sizeof name, "0x%llx", (unsigned long long)l->address);
        const char *file = l->mapping ? str(b->pf, b->pf->maps[l->mapping - 1].filename) : "";
        int64_t fn = mta_stacks_func(m, name, file);
        mt_frame fr = {.func = (mt_func_id)fn, .code = l->id};
        if (fn < 0 || MTA_PUSH(m->frames, fr) < 0)
            return -1;
        made = 1;
    }
    for (size_t i = (size_t)first; i < m->frames.n; i++)
        m->frames.v[i].inline_count = (uint16_t)made;
    if (mta_table_put(&b->frames, li, (uint32_t)first) < 0)
        return -1;
    return first;
}

/* Which value is which measure. */
static void columns(pbuild *b)
{
    static const char *const names[4] = {"alloc_objects", "alloc_space", "inuse_objects",
                                          "inuse_space"};
    const mt_profile *pf = b->pf;
    for (int k = 0; k < 4; k++) {
        b->col[k] = -1;
        for (size_t i = 0; i < pf->n_types; i++)
            if (!strcmp(str(pf, pf->types[i].type), names[k]))
                b->col[k] = (int)i;
    }
    if (b->col[1] >= 0 || b->col[3] >= 0)
        return;
    /* other names: the first type in bytes, and one in counts */
    for (size_t i = 0; i < pf->n_types; i++) {
        const char *t = str(pf, pf->types[i].type), *u = str(pf, pf->types[i].unit);
        int live = strstr(t, "inuse") || strstr(t, "live");
        if (!strcmp(u, "bytes") && b->col[1] < 0 && b->col[3] < 0)
            b->col[live ? 3 : 1] = (int)i;
    }
    for (size_t i = 0; i < pf->n_types; i++) {
        const char *u = str(pf, pf->types[i].unit);
        int k = b->col[3] >= 0 ? 2 : 0;
        if ((!strcmp(u, "count") || !strcmp(u, "objects")) && b->col[k] < 0)
            b->col[k] = (int)i;
    }
}

/* A sample's count of samples, saturated at MTP_EXACT: a profile holds at
 * most 2^24 samples (4 bytes each at least), so that their sums stay below
 * 2^56 and never wrap, whatever values a file states. */
static uint64_t sample_count(double k)
{
    return !(k > 0) ? 0 : k >= (double)MTP_EXACT ? MTP_EXACT : k < 1 ? 1 : (uint64_t)llround(k);
}

/* Go's estimate for one sample of the profile: n objects (estimated) of
 * s = bytes / n bytes each, each recorded with probability
 * p = 1 - exp(-s/R) and scaled by 1/p. Sampled: k = n p objects (the
 * samples). Each recorded object adds s/p bytes and 1/p to the count, with
 * variances s^2 (1-p)/p^2 and (1-p)/p^2 (estimated, from the k recorded),
 * so the bytes' variance is k s^2 (1-p)/p^2 = bytes s (1-p)/p and the
 * count's n (1-p)/p. Variances add over the samples of a site, whatever
 * their sizes (mt_cost_rse reads them); the bytes' is kept above
 * bytes^2 2^-64 (exact, p = 1, shows 0% rather than 1/sqrt(samples)). */
static void go_error(double n, double bytes, double R, uint64_t *samples, double *nvar,
                     double *bvar)
{
    if (!(n > 0) || !(bytes > 0)) {
        *samples = 0;
        *nvar = *bvar = 0;
        return;
    }
    double s = bytes / n;
    double p = -expm1(-s / R), q = exp(-s / R); /* p = 1 - exp(-s/R), q = 1 - p */
    *samples = sample_count(n * p);
    *nvar = p > 0 ? n * q / p : 0;
    double v = p > 0 ? bytes * s * q / p : bytes * bytes;
    *bvar = v > bytes * bytes * 0x1p-64 ? v : bytes * bytes * 0x1p-64;
}

static void sample_cost(pbuild *b, const mtp_sample *sm, mt_cost *c)
{
    const int64_t *v = b->pf->values + sm->val0;
    double x[4];
    for (int k = 0; k < 4; k++)
        x[k] = b->col[k] >= 0 && v[b->col[k]] > 0 ? (double)v[b->col[k]] : 0;
    memset(c, 0, sizeof *c);
    c->alloc_objects = x[0];
    c->alloc_bytes = x[1];
    c->live_objects = x[2];
    c->live_bytes = x[3];
    c->allocs = 1;
    if (b->err == ERR_GO) {
        go_error(x[0], x[1], b->period, &c->samples, &c->alloc_objects_var, &c->alloc_bytes_var);
        go_error(x[2], x[3], b->period, &c->live_samples, &c->live_objects_var, &c->live_bytes_var);
    } else if (b->err == ERR_MEMTRACE) {
        /* bytes = samples * period; a count's variance as the trace's: obj^2 / samples */
        c->samples = sample_count(x[1] / b->period);
        c->live_samples = sample_count(x[3] / b->period);
        c->alloc_objects_var = c->samples ? x[0] * x[0] / (double)c->samples : 0;
        c->live_objects_var = c->live_samples ? x[2] * x[2] / (double)c->live_samples : 0;
    } else {
        c->samples = x[1] > 0 || x[0] > 0 ? MTP_EXACT : 0; /* (no error shown) */
        c->live_samples = x[3] > 0 || x[2] > 0 ? MTP_EXACT : 0;
    }
}

/* What the profile's header says: its program, kind, sampling. */
static int describe(pbuild *b, const char *path)
{
    mt_model *m = b->m;
    const mt_profile *pf = b->pf;
    const char *memtrace = NULL, *exe = "";
    for (size_t i = 0; i < pf->n_comments; i++)
        if (!strncmp(str(pf, pf->comments[i]), "memtrace:", 9))
            memtrace = str(pf, pf->comments[i]);
    if (pf->n_maps)
        exe = str(pf, pf->maps[0].filename);
    if (!*exe)
        exe = path; /* no program named: the file stands for it */
    int space = !strcmp(str(pf, pf->period_type.type), "space") &&
                !strcmp(str(pf, pf->period_type.unit), "bytes");
    b->period = (double)pf->period;
    char kind[200];
    unsigned word = 8;
    double rate = 0;
    if (memtrace && pf->period > 0) {
        b->err = ERR_MEMTRACE;
        if (sscanf(memtrace, "memtrace: statistical estimates from %*u samples (sample rate %lg per %u-bit word)",
                   &rate, &word) != 2 || !(rate > 0) || (word != 8 && word != 64))
            rate = 0, word = 8;
        snprintf(kind, sizeof kind, "memtrace's pprof output, %lld bytes per sample",
                 (long long)pf->period);
    } else if (space && pf->period > 0 && (b->col[1] >= 0 || b->col[3] >= 0)) {
        b->err = ERR_GO;
        snprintf(kind, sizeof kind, "heap profile sampled every %lld bytes on average (Go's "
                 "sampling: error derived)", (long long)pf->period);
    } else {
        b->err = ERR_NONE;
        snprintf(kind, sizeof kind, "profile without a sampling period: the error cannot be derived");
    }
    m->profile = b->err == ERR_NONE ? MT_PROFILE_NO_ERROR : MT_PROFILE_SAMPLED;
    m->profile_has = ((b->col[0] >= 0 || b->col[1] >= 0) ? MT_PROFILE_HAS_ALLOC : 0) |
                     ((b->col[2] >= 0 || b->col[3] >= 0) ? MT_PROFILE_HAS_LIVE : 0);
    m->profile_kind = mta_strdup(&m->stacks.strings, kind);
    m->info.version = 0;
    m->info.word_size = word;
    m->info.sample_rate = rate > 0 ? rate : pf->period > 0 ? 1.0 / (double)pf->period : 0;
    m->info.executable_name = mta_strdup(&m->stacks.strings, exe);
    m->info.host_name = mta_strdup(&m->stacks.strings, "");
    m->info.ocaml_runtime_params = mta_strdup(&m->stacks.strings, "");
    m->info.start_time = pf->time_nanos > 0 ? (mt_timestamp)(pf->time_nanos / 1000) : 0;
    m->scale = mt_scale_of(&m->info);
    m->scale.bytes_per_sample = pf->period > 0 ? (double)pf->period : 1;
    return m->profile_kind && m->info.executable_name && m->info.host_name &&
                   m->info.ocaml_runtime_params ? 0 : -1;
}

/* Filters and times a profile cannot answer: NULL, or why. */
static const char *cannot(const mt_model_options *o)
{
    if (o && o->fold_live_at != MT_TIME_END)
        return "live memory at a time other than its end (--at, the peak) needs a trace";
    if (!o || !o->fold)
        return "this needs a trace (every allocation with its times)";
    const mt_filter *f = o->fold_filter;
    for (size_t k = 0; f && k < f->n; k++)
        if (f->c[k].kind != MTA_INSIDE && f->c[k].kind != MTA_HIDE)
            return "filter clauses on times, sizes, kinds or verdicts need a trace (inside: "
                   "and hide: work)";
    return NULL;
}

static int build(pbuild *b, const mt_model_options *o)
{
    mt_model *m = b->m;
    mta_stacks *st = &m->stacks;
    mta_folded *fo = m->fold;
    const mt_profile *pf = b->pf;
    if (mta_table_init(&b->funcs, pf->n_funcs) < 0 || mta_table_init(&b->frames, pf->n_locs) < 0)
        return -1;
    size_t max_depth = o ? o->max_depth : 0;
    uint64_t frames = 0;
    /* samples of one stack share its location ids (profile_read.c): its
     * node is found once */
    mta_table seen;
    if (mta_table_init(&seen, 64) < 0)
        return -1;
    int rc = -1;
    for (size_t i = 0; i < pf->n_samples; i++) {
        const mtp_sample *sm = &pf->samples[i];
        mt_cost c;
        sample_cost(b, sm, &c);
        uint64_t key = (uint64_t)sm->loc0 << 32 | sm->n_locs;
        int64_t known = mta_table_get(&seen, key);
        mt_node_id node = 0;
        if (known >= 0) {
            node = (mt_node_id)known;
        } else {
            /* outermost location first; a shallow model keeps the innermost max_depth */
            size_t from = max_depth && sm->n_locs > max_depth ? max_depth : sm->n_locs;
            for (size_t j = from; j-- > 0;) {
                int64_t f = frames_of(b, pf->loc_idx[sm->loc0 + j]);
                if (f < 0)
                    goto out;
                uint16_t nf = st->frames.v[f].inline_count;
                if ((frames += nf) > MTP_MAX_FRAMES(pf->bytes)) {
                    b->why = "its distinct stacks hold too many frames for its size (a location of "
                             "many lines repeated, or very many deep stacks): refused";
                    goto out;
                }
                for (uint16_t k = 0; k < nf; k++) {
                    int64_t n = mta_stacks_child(st, node, (mt_frame_id)(f + k));
                    if (n < 0)
                        goto out;
                    node = (mt_node_id)n;
                }
            }
            if (st->nodes.n > MTP_MAX_NODES) {
                b->why = "its distinct stacks make more than 2097152 call-path nodes (deep stacks "
                         "that differ from their outermost frame): refused";
                goto out;
            }
            if (mta_table_put(&seen, key, node) < 0)
                goto out;
        }
        if (mta_folded_cover(fo, st->nodes.n) < 0)
            goto out;
        mta_cost_add(&fo->node_cost[node], &c);
        if (fo->node_first[node] == UINT64_MAX)
            fo->node_first[node] = i;
        mta_cost_add(&fo->by_source[MT_SOURCE_EXTERNAL], &c);
    }
    fo->n_allocs_read = pf->n_samples;
    /* the depth rule ([truncated]), then the interning tables go */
    rc = mta_folded_cover(fo, st->nodes.n) < 0 || mta_stacks_seal(st) < 0 ? -1 : 0;
out:
    mta_table_destroy(&seen);
    return rc;
}

/* The per-stack sums diff and check fold (the fold's on_fold): one call per stack
 * with a cost, an allocation standing for it (difffold.c reads the cost). */
static int hooks(mt_model *m)
{
    mta_folded *fo = m->fold;
    if (!fo->on_fold)
        return 0;
    for (size_t n = 0; n < m->stacks.nodes.n; n++) {
        if (fo->node_first[n] == UINT64_MAX)
            continue;
        const mt_cost *c = &fo->node_cost[n];
        mt_alloc a = {.time = 0, .collect = MT_TIME_NEVER, .promote = MT_TIME_NEVER,
                      .n_samples = c->samples ? c->samples : 1, .stack = (mt_node_id)n,
                      .source = MT_SOURCE_EXTERNAL};
        a.size = c->alloc_objects > 0 ? (uint64_t)(c->alloc_bytes / c->alloc_objects) : 0;
        if (fo->on_fold(fo->ctx, m, &a, fo->node_first[n]) < 0)
            return -1;
    }
    return 0;
}

mt_model *mta_profile_load(const char *path, const mt_model_options *opts, char **error)
{
    char *err = NULL;
    const char *why = cannot(opts);
    if (why) {
        if (error) {
            size_t len = strlen(path) + strlen(why) + 64;
            if ((*error = malloc(len)))
                snprintf(*error, len, "%s is a pprof profile: it holds no times: %s", path, why);
        }
        return NULL;
    }
    mt_profile *pf = mtp_read(path, &err);
    if (!pf) {
        if (error)
            *error = err ? err : strdup("out of memory");
        else
            free(err);
        return NULL;
    }
    mt_model_options o = *opts;
    o.on_alloc = NULL;   /* per-allocation sinks see nothing: a profile has no allocations */
    mt_model *m = mta_model_new(&o);
    pbuild b;
    memset(&b, 0, sizeof b);
    b.m = m;
    b.pf = pf;
    int rc = -1;
    const char *fail = "out of memory";
    if (m && mta_stacks_init(&m->stacks) == 0) {
        m->monotone = 1;
        m->peak_unknown = 1;  /* no times, no peak */
        m->peak_ready = 1;
        columns(&b);
        if (b.col[0] < 0 && b.col[1] < 0 && b.col[2] < 0 && b.col[3] < 0) {
            fail = "no sample type in bytes or counts: not a memory profile";
        } else if (describe(&b, path) == 0 && build(&b, opts) == 0) {
            rc = hooks(m);
            if (rc < 0)
                fail = "stopped by the caller";
        } else if (b.why) {
            fail = b.why;
        }
    }
    mta_table_destroy(&b.funcs);
    mta_table_destroy(&b.frames);
    mtp_free(pf);
    if (rc < 0) {
        if (error) {
            size_t len = strlen(path) + strlen(fail) + 4;
            if ((*error = malloc(len)))
                snprintf(*error, len, "%s: %s", path, fail);
        }
        mt_model_free(m);
        return NULL;
    }
    /* (warn.h's fallback names the file; a caller knows which it read) */
    if (m->profile == MT_PROFILE_NO_ERROR)
        mt_warnf(opts->on_warning, opts->warning_ctx, "%s%sthe profile states no sampling period: "
                 "the error of its figures cannot be derived (none shown)",
                 opts->on_warning ? "" : path, opts->on_warning ? "" : ": ");
    return m;
}
