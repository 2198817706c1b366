/*
 * model.c - builds the model of a trace in one pass: allocations with
 * their collect/promote times, interned functions, frames and a stack
 * trie, the peak of live memory, and (on first use) the sorted event list
 * behind the live-memory curve. Folded models (fold.c) are read on two
 * threads where two processors are available: a reading thread decodes
 * and finds the stacks, the caller's thread folds (batches: pipe.c).
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "pipe.h"

/* ------------------------------------------------------------------ utils */

int mta_grow(void **v, size_t *cap, size_t need, size_t item)
{
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *p = realloc(*v, c * item);
    if (!p)
        return -1;
    *v = p;
    *cap = c;
    return 0;
}

const char *mta_strdup(mta_pool *a, const char *s)
{
    size_t len = strlen(s) + 1;
    if (len > a->left) {
        size_t sz = len > 65536 ? len : 65536;
        char *c = malloc(sz);
        if (!c)
            return NULL;
        if (a->n == a->cap && mta_grow((void **)&a->chunks, &a->cap, a->n + 1, sizeof(char *)) < 0) {
            free(c);
            return NULL;
        }
        a->chunks[a->n++] = c;
        a->cur = c;
        a->left = sz;
    }
    char *r = a->cur;
    memcpy(r, s, len);
    a->cur += len;
    a->left -= len;
    return r;
}

void mta_pool_free(mta_pool *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->chunks[i]);
    free(a->chunks);
    memset(a, 0, sizeof *a);
}

double mt_noise(uint64_t k)
{
    return k ? 1.0 / sqrt((double)k) : 1.0;
}

/* ------------------------------------------------------------ the builder */

#define MEMO_SIZE 8192
#define FOLD_AHEAD (2 * MTA_LIVE_AHEAD) /* a power of two */
#define CODE_MEMO_SIZE 4096
#define PATH_MEMO_BITS 14
#define PATH_MEMO_CAP (1u << 20)  /* codes (8 bytes) and nodes (4) */
#define PATH_MIN 4               /* shorter paths are walked */

typedef struct builder {
    mt_model *m;
    mt_reader *r;
    mta_table code_frames;   /* code -> first frame index (count in the frame) */
    /* Children of a trie node: a list (first_child, next_sibling), and for
     * nodes with many children also the table (parent << 32 | frame). Most
     * nodes have few children, and a node just created has none: no hash
     * lookup, no cache miss in a big table. */
    mta_table children;
    MTA_VEC(uint32_t) first_child;
    MTA_VEC(uint32_t) next_sibling;
    MTA_VEC(uint16_t) n_kids;       /* saturates at BIG_NODE */
    struct memo { uint64_t key; uint32_t node; } *memo; /* small direct-mapped cache of children */
    struct code_memo { uint64_t code; uint32_t frame; } *code_memo; /* frame + 1; 0 empty */
    /* Whole stacks: the codes below a node that a backtrace went through
     * before -> the nodes after each of them, so that coming back to a
     * call path costs a hash and a comparison of its codes instead of a
     * trie step (likely cache misses) per code. Direct-mapped; the buffer
     * holds the codes and nodes, and starts over when full. */
    struct path_memo { uint64_t hash; size_t off; uint32_t from, n; } *path_memo; /* n 0: empty */
    uint64_t *pm_codes;
    mt_node_id *pm_nodes;
    size_t pm_used;
    mta_table ids;           /* obj id -> alloc index, when ids are not dense */
    int sparse_ids;
    /* function interning: hash of (name, file) -> chain via func_next */
    uint32_t *func_slots;    /* func id + 1, 0 empty */
    size_t func_mask;
    /* Previous backtrace of each domain (v3 traces interleave domains, each
     * with its own common prefixes): the trie node after each of its codes,
     * and for shallow models the codes themselves. */
    struct prev_bt { unsigned domain; size_t len, cap; mt_node_id *path; uint64_t *codes; } *prev;
    size_t n_prev, cur_prev;
    int warned_unknown;
    size_t max_depth;        /* 0: whole stacks */
    /* Shallow models (max_depth 1 or 2): the truncated backtrace itself ->
     * its trie node, one probe per allocation instead of a code lookup and
     * a child lookup per code (each a likely cache miss when the trace has
     * many distinct stacks). */
    struct short_stack { uint64_t code[2]; uint32_t node; uint32_t len; } *shorts; /* len + 1; 0 empty */
    size_t shorts_mask, n_shorts;
    struct short_stack last_short;  /* the last one found (programs allocate
                                     * from one place many times in a row) */
    /* promotions and collections, applied to their allocations after
     * reading: no random access to the allocation array while decoding */
    struct pending { int64_t time; uint32_t alloc; uint32_t kind; } *pend;
    size_t n_pend, cap_pend;        /* applied every PEND_CHUNK events */
    int double_collect;             /* an object collected twice: */
    uint32_t double_alloc;          /* the first, warned about at the end */
    const mt_model_options *opts;
    int64_t live;            /* samples allocated less those collected */
    uint64_t total_samples;  /* of every allocation: at most MTA_MAX_SAMPLES */
    mt_timedelta cur_time;   /* time of the previous event */
    int64_t live_at_time;    /* folded models: live samples before cur_time's events */
    uint64_t alloc_at_time;  /* and the samples they allocated */
    /* folded models: the blocks still live, the ones displaced by a reused
     * id (never collected), and the peak found on the fly */
    mta_live live_blocks;
    MTA_VEC(mta_live_rec) displaced;
    /* Folded models: events wait FOLD_AHEAD steps (their allocation record
     * already made) before they meet the live blocks, so that the slots
     * and records they will touch are prefetched by then: a block freed
     * long after its allocation is likely out of the caches. */
    struct fold_q { mt_alloc a; mt_obj_id id; mt_timedelta time; int kind; } fq[FOLD_AHEAD];
    size_t fq_head, fq_n;
    const char *why;         /* what failed */
    /* Two threads (folded models): the reading thread's builder finds the
     * stacks in a model of its own (nodes, frames, functions) and fills
     * batch with events for the folding thread's builder; sent_*: what
     * of its model the batches carried so far. The folding thread's
     * builder passes the reader's warnings on to warn_fn. */
    mta_pipe *pipe;
    mta_batch *batch;
    size_t sent_nodes, sent_frames, sent_funcs;
    mt_warning_fn warn_fn;
    void *warn_ctx;
} builder;

/* FNV-1a from a keyed start (names come from the trace; see table.h). */
static uint64_t str_hash(const char *s, uint64_t h)
{
    while (*s)
        h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
    return h;
}

static int64_t intern_func(builder *b, const char *name, const char *file)
{
    mt_model *m = b->m;
    if ((m->funcs.n + 1) * 2 > b->func_mask + 1) {
        size_t cap = (b->func_mask + 1) * 2;
        uint32_t *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return -1;
        for (size_t i = 0; i < m->funcs.n; i++) {
            uint64_t h = str_hash(m->funcs.v[i].filename, str_hash(m->funcs.v[i].name, 0xcbf29ce484222325ULL ^ mta_seed()));
            size_t j = mta_hash64(h) & (cap - 1);
            while (slots[j])
                j = (j + 1) & (cap - 1);
            slots[j] = (uint32_t)i + 1;
        }
        free(b->func_slots);
        b->func_slots = slots;
        b->func_mask = cap - 1;
    }
    uint64_t h = str_hash(file, str_hash(name, 0xcbf29ce484222325ULL ^ mta_seed()));
    size_t j = mta_hash64(h) & b->func_mask;
    while (b->func_slots[j]) {
        const mt_func *f = &m->funcs.v[b->func_slots[j] - 1];
        if (!strcmp(f->name, name) && !strcmp(f->filename, file))
            return b->func_slots[j] - 1;
        j = (j + 1) & b->func_mask;
    }
    mt_func f;
    f.name = mta_strdup(&m->strings, name);
    f.filename = mta_strdup(&m->strings, file);
    if (!f.name || !f.filename || MTA_PUSH(m->funcs, f) < 0)
        return -1;
    b->func_slots[j] = (uint32_t)m->funcs.n;
    return (int64_t)m->funcs.n - 1;
}

/* Frames of a code, interning it on first sight. Returns the first frame
 * index (its inline_count tells how many), or -1 when out of memory. */
static int64_t code_frames(builder *b, uint64_t code)
{
    /* a direct-mapped cache of recent codes in front of the table */
    struct code_memo *cm = &b->code_memo[mta_hash64(code) & (CODE_MEMO_SIZE - 1)];
    if (cm->frame && cm->code == code)
        return cm->frame - 1;
    int64_t f = mta_table_get(&b->code_frames, code);
    if (f >= 0) {
        cm->code = code;
        cm->frame = (uint32_t)f + 1;
        return f;
    }
    mt_model *m = b->m;
    const mt_location *locs = NULL;
    size_t n = 0;
    if (mt_reader_lookup(b->r, code, &locs, &n) < 0)
        n = 0;
    if (n > 65535)
        n = 65535;
    int64_t first = (int64_t)m->frames.n;
    if (n == 0) {
        char name[32];
        snprintf(name, sizeof name, "0x%llx", (unsigned long long)code);
        int64_t fn = intern_func(b, name, "");
        if (fn < 0)
            return -1;
        mt_frame fr = {.func = (mt_func_id)fn, .inline_count = 1, .code = code};
        if (MTA_PUSH(m->frames, fr) < 0)
            return -1;
    } else {
        for (size_t i = 0; i < n; i++) {
            int64_t fn = intern_func(b, locs[i].defname ? locs[i].defname : "??",
                                     locs[i].filename ? locs[i].filename : "");
            if (fn < 0)
                return -1;
            mt_frame fr = {.func = (mt_func_id)fn,
                           .line = locs[i].line,
                           .start_char = (uint16_t)locs[i].start_char,
                           .end_char = (uint16_t)locs[i].end_char,
                           .inline_index = (uint16_t)i,
                           .inline_count = (uint16_t)n,
                           .code = code};
            if (MTA_PUSH(m->frames, fr) < 0)
                return -1;
        }
    }
    if (mta_table_put(&b->code_frames, code, (uint32_t)first) < 0)
        return -1;
    return first;
}


#define BIG_NODE 4   /* children beyond this go into the table */

static int64_t child(builder *b, mt_node_id parent, mt_frame_id frame)
{
    mt_model *m = b->m;
    uint64_t key = (uint64_t)parent << 32 | frame;
    /* Hot paths repeat: a small cache in front of everything. Key 0 (root,
     * frame 0) is never cached. */
    struct memo *mo = &b->memo[(key * 0x9E3779B97F4A7C15ULL) >> 51];
    if (mo->key == key && key)
        return mo->node;
    int big = b->n_kids.v[parent] > BIG_NODE;
    if (big) {
        int64_t n = mta_table_get(&b->children, key);
        if (n >= 0) {
            mo->key = key;
            mo->node = (uint32_t)n;
            return n;
        }
    } else {
        for (uint32_t c = b->first_child.v[parent]; c; c = b->next_sibling.v[c])
            if (m->nodes.v[c].frame == frame) {
                mo->key = key;
                mo->node = c;
                return c;
            }
    }
    mt_node node = {.parent = parent, .frame = frame, .depth = m->nodes.v[parent].depth + 1};
    uint32_t zero = 0;
    uint16_t nk = 0;
    if (m->nodes.n >= UINT32_MAX - 1 || MTA_PUSH(m->nodes, node) < 0 ||
        MTA_PUSH(b->first_child, zero) < 0 || MTA_PUSH(b->n_kids, nk) < 0 ||
        MTA_PUSH(b->next_sibling, b->first_child.v[parent]) < 0)
        return -1;
    uint32_t n = (uint32_t)m->nodes.n - 1;
    b->first_child.v[parent] = n;
    if (b->n_kids.v[parent] <= BIG_NODE)
        b->n_kids.v[parent]++;
    if (big) {
        if (mta_table_put(&b->children, key, n) < 0)
            return -1;
    } else if (b->n_kids.v[parent] > BIG_NODE) {
        /* became big: index all its children */
        for (uint32_t c = n; c; c = b->next_sibling.v[c])
            if (mta_table_put(&b->children, (uint64_t)parent << 32 | m->nodes.v[c].frame, c) < 0)
                return -1;
    }
    return n;
}

static uint64_t short_hash(uint64_t c0, uint64_t c1, size_t len)
{
    return mta_hash64(c0 ^ mta_hash64(c1 ^ len));
}

static int shorts_grow(builder *b)
{
    size_t cap = b->shorts ? (b->shorts_mask + 1) * 2 : 1024;
    struct short_stack *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; b->shorts && i <= b->shorts_mask; i++) {
        const struct short_stack *e = &b->shorts[i];
        if (!e->len)
            continue;
        size_t j = short_hash(e->code[0], e->code[1], e->len - 1) & (cap - 1);
        while (t[j].len)
            j = (j + 1) & (cap - 1);
        t[j] = *e;
    }
    free(b->shorts);
    b->shorts = t;
    b->shorts_mask = cap - 1;
    return 0;
}

static struct prev_bt *prev_of(builder *b, unsigned domain);
static int64_t trie_path(builder *b, struct prev_bt *pv, const mt_location_code *bt, size_t len,
                         size_t shared);

static int64_t stack_of(builder *b, const mt_event *ev)
{
    size_t len = ev->backtrace_length;
    const mt_location_code *bt = ev->backtrace;
    if (!b->max_depth) {
        /* whole stacks: the reader's common prefix (capped at the domain's
         * previous length in trie_path) says what is shared */
        struct prev_bt *pv = prev_of(b, ev->domain);
        return pv ? trie_path(b, pv, bt, len, ev->common_prefix) : -1;
    }
    /* shallow model: only the innermost codes, compared with the previous
     * ones (whatever the domain) */
    if (len > b->max_depth) {
        bt += len - b->max_depth;
        len = b->max_depth;
    }
    struct prev_bt *pv = prev_of(b, 0);
    if (!pv)
        return -1;
    if (!b->shorts)
        return trie_path(b, pv, bt, len, SIZE_MAX);
    uint64_t c0 = len > 0 ? bt[0] : 0, c1 = len > 1 ? bt[1] : 0;
    struct short_stack *last = &b->last_short;
    if (last->len == len + 1 && last->code[0] == c0 && last->code[1] == c1)
        return last->node;
    size_t j = short_hash(c0, c1, len) & b->shorts_mask;
    for (;;) {
        struct short_stack *e = &b->shorts[j];
        if (!e->len)
            break;
        if (e->len == len + 1 && e->code[0] == c0 && e->code[1] == c1) {
            *last = *e;
            return e->node;
        }
        j = (j + 1) & b->shorts_mask;
    }
    int64_t node = trie_path(b, pv, bt, len, SIZE_MAX);
    if (node < 0)
        return -1;
    if ((b->n_shorts + 1) * 4 > (b->shorts_mask + 1) * 3) {
        if (shorts_grow(b) < 0)
            return -1;
        j = short_hash(c0, c1, len) & b->shorts_mask;
        while (b->shorts[j].len)
            j = (j + 1) & b->shorts_mask;
    }
    b->shorts[j].code[0] = c0;
    b->shorts[j].code[1] = c1;
    b->shorts[j].node = (uint32_t)node;
    b->shorts[j].len = (uint32_t)len + 1;
    b->n_shorts++;
    *last = b->shorts[j];
    return node;
}

/* The previous-backtrace state of a domain, created on first sight. */
static struct prev_bt *prev_of(builder *b, unsigned domain)
{
    if (b->cur_prev < b->n_prev && b->prev[b->cur_prev].domain == domain)
        return &b->prev[b->cur_prev];
    for (size_t i = 0; i < b->n_prev; i++)
        if (b->prev[i].domain == domain) {
            b->cur_prev = i;
            return &b->prev[i];
        }
    struct prev_bt *np = realloc(b->prev, (b->n_prev + 1) * sizeof *np);
    if (!np)
        return NULL;
    b->prev = np;
    memset(&np[b->n_prev], 0, sizeof *np);
    np[b->n_prev].domain = domain;
    b->cur_prev = b->n_prev++;
    return &np[b->cur_prev];
}

/* The trie node of a backtrace (outermost code first), creating it. shared:
 * how many of its first codes are known to be those of the domain's
 * previous backtrace (SIZE_MAX: unknown, compare them). The work is that of
 * the codes past the shared part: a trace of stacks millions of frames deep
 * that differ in their last frame costs a few steps per allocation. */
static int64_t trie_path(builder *b, struct prev_bt *pv, const mt_location_code *bt, size_t len,
                         size_t shared)
{
    int keep_codes = shared == SIZE_MAX;
    if (len > pv->cap) {
        size_t cap = pv->cap ? pv->cap : 64;
        while (cap < len)
            cap *= 2;
        mt_node_id *p = realloc(pv->path, cap * sizeof *p);
        if (!p)
            return -1;
        pv->path = p;
        if (keep_codes) {
            uint64_t *c = realloc(pv->codes, cap * sizeof *c);
            if (!c)
                return -1;
            pv->codes = c;
        }
        pv->cap = cap;
    }
    size_t cp = 0, lim = len < pv->len ? len : pv->len;
    if (keep_codes) {
        while (cp < lim && pv->codes[cp] == bt[cp])
            cp++;
    } else {
        cp = shared < lim ? shared : lim;
    }
    mt_node_id node = cp ? pv->path[cp - 1] : 0, pv_from = node;
    size_t n = len - cp;
    struct path_memo *pm = NULL;
    uint64_t h = 0;
    if (!keep_codes && n >= PATH_MIN && n <= PATH_MEMO_CAP / 8 && b->path_memo) {
        h = (uint64_t)node * 0x9E3779B97F4A7C15ULL ^ n;
        for (size_t i = cp; i < len; i++)
            h = (h ^ bt[i]) * 0x100000001b3ULL;
        h ^= h >> 29;
        pm = &b->path_memo[(h * 0x9E3779B97F4A7C15ULL) >> (64 - PATH_MEMO_BITS)];
        if (pm->n == n && pm->hash == h && pm->from == node &&
            memcmp(b->pm_codes + pm->off, bt + cp, n * sizeof *bt) == 0) {
            memcpy(pv->path + cp, b->pm_nodes + pm->off, n * sizeof *pv->path);
            pv->len = len;
            return pv->path[len - 1];
        }
    }
    for (size_t i = cp; i < len; i++) {
        uint64_t code = bt[i];
        int64_t f = code_frames(b, code);
        if (f < 0)
            return -1;
        unsigned cnt = b->m->frames.v[f].inline_count;
        for (unsigned k = 0; k < cnt; k++) {
            int64_t n = child(b, node, (mt_frame_id)(f + k));
            if (n < 0)
                return -1;
            node = (mt_node_id)n;
        }
        if (keep_codes)
            pv->codes[i] = code;
        pv->path[i] = node;
    }
    if (pm) {
        if (b->pm_used + n > PATH_MEMO_CAP) {
            memset(b->path_memo, 0, ((size_t)1 << PATH_MEMO_BITS) * sizeof *b->path_memo);
            b->pm_used = 0;
        }
        memcpy(b->pm_codes + b->pm_used, bt + cp, n * sizeof *bt);
        memcpy(b->pm_nodes + b->pm_used, pv->path + cp, n * sizeof *pv->path);
        pm->hash = h;
        pm->off = b->pm_used;
        pm->from = pv_from;
        pm->n = (uint32_t)n;
        b->pm_used += n;
    }
    pv->len = len;
    return node;
}

static int64_t find_alloc(builder *b, mt_obj_id id)
{
    if (!b->sparse_ids)
        return id < b->m->allocs.n ? (int64_t)id : -1;
    return mta_table_get(&b->ids, id);
}

static int cmp_time(const void *x, const void *y, void *ctx)
{
    const mt_model *m = ctx;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    mt_timedelta ta = m->allocs.v[a].collect, tb = m->allocs.v[b].collect;
    return ta < tb ? -1 : ta > tb ? 1 : (a > b) - (a < b);
}

static int cmp_alloc_time(const void *x, const void *y, void *ctx)
{
    const mt_model *m = ctx;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    mt_timedelta ta = m->allocs.v[a].time, tb = m->allocs.v[b].time;
    return ta < tb ? -1 : ta > tb ? 1 : (a > b) - (a < b);
}

/* Merge allocations (by time) and collections (by time) into the event
 * list with the live count after each event. */
static int build_events(mt_model *m)
{
    size_t na = m->allocs.n, nc = m->collects.n, n = na + nc;
    uint32_t *order = NULL;
    if (!m->monotone) {
        order = malloc((na ? na : 1) * sizeof *order);
        if (!order)
            return -1;
        for (size_t i = 0; i < na; i++)
            order[i] = (uint32_t)i;
        qsort_r(order, na, sizeof *order, cmp_alloc_time, m);
        qsort_r(m->collects.v, nc, sizeof *m->collects.v, cmp_time, m);
    }
    m->events.v = malloc((n ? n : 1) * sizeof *m->events.v);
    m->live_after = malloc((n ? n : 1) * sizeof *m->live_after);
    if (!m->events.v || !m->live_after) {
        free(order);
        free(m->events.v);
        free(m->live_after);
        m->events.v = NULL;
        m->live_after = NULL;
        return -1;
    }
    m->events.n = m->events.cap = n;
    const mt_alloc *al = m->allocs.v;
    size_t i = 0, j = 0, k = 0;
    int64_t live = 0;
    while (i < na || j < nc) {
        uint32_t ai = i < na ? (order ? order[i] : (uint32_t)i) : 0;
        uint32_t ci = j < nc ? m->collects.v[j] : 0;
        /* at equal times, allocations first (a block can live 0us) */
        if (j >= nc || (i < na && al[ai].time <= al[ci].collect)) {
            m->events.v[k].time = al[ai].time;
            m->events.v[k].alloc = ai;
            m->events.v[k].kind = 0;
            m->events.v[k].samples = al[ai].n_samples < MTA_EV_SAMPLES_BIG
                                         ? (uint32_t)al[ai].n_samples : MTA_EV_SAMPLES_BIG;
            live += (int64_t)al[ai].n_samples;
            i++;
        } else {
            m->events.v[k].time = al[ci].collect;
            m->events.v[k].alloc = ci;
            m->events.v[k].kind = 1;
            m->events.v[k].samples = al[ci].n_samples < MTA_EV_SAMPLES_BIG
                                         ? (uint32_t)al[ci].n_samples : MTA_EV_SAMPLES_BIG;
            live -= (int64_t)al[ci].n_samples;
            j++;
        }
        m->live_after[k++] = live;
    }
    free(order);
    return 0;
}

const mta_event *mta_events(const mt_model *cm)
{
    mt_model *m = (mt_model *)cm; /* the lazily built part is behind the lock */
    if (__atomic_load_n(&m->events_ready, __ATOMIC_ACQUIRE))
        return m->events.v;
    pthread_mutex_lock(&m->lock);
    if (!m->events_ready && build_events(m) == 0)
        __atomic_store_n(&m->events_ready, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&m->lock);
    return m->events_ready ? m->events.v : NULL;
}

static char *strf(const char *fmt, const char *a, const char *b)
{
    size_t len = strlen(fmt) + strlen(a) + (b ? strlen(b) : 0) + 1;
    char *s = malloc(len);
    if (s)
        snprintf(s, len, fmt, a, b ? b : "");
    return s;
}

static int copy_info(mt_model *m, const mt_trace_info *in)
{
    m->info = *in;
    const char **fields[] = {&m->info.executable_name, &m->info.host_name,
                             &m->info.ocaml_runtime_params, &m->info.context};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (*fields[i] && !(*fields[i] = mta_strdup(&m->strings, *fields[i])))
            return -1;
    m->word_bytes = in->word_size / 8.0;
    m->inv_word_bytes = m->word_bytes > 0 ? 1 / m->word_bytes : 0;
    m->inv_rate = in->sample_rate > 0 ? 1 / in->sample_rate : 0;
    m->bps = in->sample_rate > 0 ? m->word_bytes / in->sample_rate : 0;
    return 0;
}

static void warn_collect(builder *b, mt_obj_id id)
{
    if (b->warned_unknown)
        return;
    b->warned_unknown = 1;
    char msg[160];
    snprintf(msg, sizeof msg, "collection of unknown or already collected object %llu (ignored)",
             (unsigned long long)id);
    if (b->opts && b->opts->on_warning)
        b->opts->on_warning(b->opts->warning_ctx, msg);
    else
        fprintf(stderr, "warning: %s\n", msg);
}

/* Apply the pending promotions and collections in file order (independent
 * random accesses, which the processor overlaps). Done in chunks while
 * reading: a small buffer that stays in the caches instead of one entry
 * per event for the whole trace (40 MB of page faults on 5 million
 * events), and the allocations a chunk refers to are often still cached. */
#define PEND_CHUNK 65536

static int apply_pending(builder *b)
{
    mt_model *m = b->m;
    for (size_t k = 0; k < b->n_pend; k++) {
        if (k + 16 < b->n_pend)
            __builtin_prefetch(&m->allocs.v[b->pend[k + 16].alloc], 1);
        mt_alloc *a = &m->allocs.v[b->pend[k].alloc];
        if (b->pend[k].kind == MT_EVENT_PROMOTE) {
            if (a->promote == MT_TIME_NEVER)
                a->promote = b->pend[k].time;
        } else if (a->collect == MT_TIME_NEVER) {
            a->collect = b->pend[k].time < a->time ? a->time : b->pend[k].time;
            if (MTA_PUSH(m->collects, b->pend[k].alloc) < 0)
                return -1;
            b->live -= (int64_t)a->n_samples;
        } else if (!b->double_collect) {
            /* warned about after reading, as unknown objects come first */
            b->double_collect = 1;
            b->double_alloc = b->pend[k].alloc;
        }
    }
    b->n_pend = 0;
    return 0;
}

/* The allocation record of an event. */
static int64_t alloc_of(builder *b, const mt_event *ev, mt_alloc *a)
{
    if (ev->n_samples > MTA_MAX_SAMPLES - b->total_samples) {
        b->why = "sample counts add up to more than 2^62 (a damaged or forged trace)";
        return -1;
    }
    b->total_samples += ev->n_samples;
    b->why = "out of memory";
    int64_t st = stack_of(b, ev);
    if (st < 0)
        return -1;
    double bytes = (double)ev->length * b->m->word_bytes + 0.5;
    a->time = ev->time;
    a->collect = MT_TIME_NEVER;
    a->promote = MT_TIME_NEVER;
    a->size = bytes < 18446744073709549568.0 ? (uint64_t)bytes : UINT64_MAX;
    a->n_samples = ev->n_samples;
    a->stack = (mt_node_id)st;
    a->source = (uint8_t)(ev->source > MT_SOURCE_EXTERNAL ? MT_SOURCE_EXTERNAL : ev->source);
    a->carried = ev->carried != 0;
    a->verdict = (uint8_t)ev->verdict;
    return 0;
}

/* An event of a folded model, in file order (after the queue): live
 * blocks in a table, each folded into its stack's cost when collected. */
static int add_folded(builder *b, const struct fold_q *ev)
{
    mt_model *m = b->m;
    if (ev->time < b->cur_time)
        m->monotone = 0;
    if (ev->time != b->cur_time) {
        /* the live count after every event of the previous time */
        if (b->live > m->peak_samples) {
            m->peak_samples = b->live;
            m->peak_time = b->cur_time;
        }
        mta_peak_time(&m->peak_acc, b->cur_time, b->live_at_time, b->live, b->alloc_at_time);
        b->live_at_time = b->live;
        b->alloc_at_time = 0;
    }
    b->cur_time = ev->time;
    if (ev->time > m->end)
        m->end = ev->time;
    if (ev->kind == MT_EVENT_ALLOC) {
        mta_live_rec old;
        int had;
        b->why = b->live_blocks.n_pool >= UINT32_MAX - 1 ? "more than 2^32 blocks live at once"
                                                          : "out of memory";
        mta_live_rec *r = mta_live_add(&b->live_blocks, ev->id, &old, &had);
        if (!r || (had && MTA_PUSH(b->displaced, old) < 0))
            return -1;
        r->a = ev->a;
        r->seq = m->n_allocs_read++;
        b->live += (int64_t)ev->a.n_samples;
        b->alloc_at_time += ev->a.n_samples;
        if (m->on_alloc && m->on_alloc(m->fold_ctx, m, &ev->a, r->seq) < 0) {
            m->fold_stopped = 1;
            b->why = "stopped by the caller";
            return -1;
        }
        return 0;
    }
    mta_live_rec *r = mta_live_find(&b->live_blocks, ev->id);
    if (ev->kind == MT_EVENT_PROMOTE) {
        m->n_promotes++;
        if (r && r->a.promote == MT_TIME_NEVER)
            r->a.promote = ev->time;
        return 0;
    }
    m->n_collects++;
    if (!r) {
        warn_collect(b, ev->id);
        return 0;
    }
    mt_alloc a = r->a;
    uint64_t seq = r->seq;
    a.collect = ev->time < a.time ? a.time : ev->time;
    b->live -= (int64_t)a.n_samples;
    mta_live_remove(&b->live_blocks, r);
    if (mta_fold(m, &a, seq) < 0) {
        b->why = m->fold_stopped ? "stopped by the caller" : "out of memory";
        return -1;
    }
    return 0;
}

/* The oldest queued event meets the live blocks. */
static int fold_step(builder *b)
{
    const struct fold_q *e = &b->fq[b->fq_head];
    b->fq_head = (b->fq_head + 1) & (FOLD_AHEAD - 1);
    b->fq_n--;
    return add_folded(b, e);
}

/* The queue's next place, the oldest event having met the live blocks
 * if the queue was full; NULL when that failed (b->why). */
static inline struct fold_q *fold_slot(builder *b)
{
    if (b->fq_n == FOLD_AHEAD && fold_step(b) < 0)
        return NULL;
    return &b->fq[(b->fq_head + b->fq_n) & (FOLD_AHEAD - 1)];
}

/* The event filled in at fold_slot's place enters the queue: the slot of
 * a collected or promoted block is prefetched, and so is the record of the
 * one that entered half the queue ago. */
static inline void fold_entered(builder *b, const struct fold_q *e)
{
    if (e->kind != MT_EVENT_ALLOC)
        mta_live_prefetch(&b->live_blocks, e->id, 0);
    b->fq_n++;
    if (b->fq_n > MTA_LIVE_AHEAD) {
        const struct fold_q *h = &b->fq[(b->fq_head + b->fq_n - 1 - MTA_LIVE_AHEAD) & (FOLD_AHEAD - 1)];
        if (h->kind != MT_EVENT_ALLOC)
            mta_live_prefetch(&b->live_blocks, h->id, 1);
    }
}

/* An event of a folded model enters the queue, an allocation with its
 * record (and stack) made now. */
static int fold_push(builder *b, const mt_event *ev)
{
    struct fold_q *e = fold_slot(b);
    if (!e)
        return -1;
    e->kind = ev->kind;
    e->time = ev->time;
    e->id = ev->id;
    if (ev->kind == MT_EVENT_ALLOC && alloc_of(b, ev, &e->a) < 0)
        return -1;
    fold_entered(b, e);
    return 0;
}

/* The queued events, at the end of the trace. */
static int fold_drain(builder *b)
{
    while (b->fq_n)
        if (fold_step(b) < 0)
            return -1;
    return 0;
}

static int cmp_seq(const void *x, const void *y)
{
    const mta_live_rec *a = *(const mta_live_rec *const *)x, *b = *(const mta_live_rec *const *)y;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static unsigned bits_for(uint64_t x)
{
    return x ? 64 - (unsigned)__builtin_clzll(x) : 0;
}

/* Sorts keys[0..n) by their bits lo .. lo + nbits - 1 (a radix sort, 16
 * bits a pass; tmp has room for n keys). Returns the sorted array: keys
 * or tmp. */
static uint64_t *radix_sort(uint64_t *keys, uint64_t *tmp, size_t n, unsigned lo, unsigned nbits)
{
    size_t *count = malloc(((size_t)1 << 16) * sizeof *count);
    if (!count)
        return NULL;
    for (unsigned shift = lo; shift < lo + nbits; shift += 16) {
        memset(count, 0, ((size_t)1 << 16) * sizeof *count);
        for (size_t i = 0; i < n; i++)
            count[(keys[i] >> shift) & 0xffff]++;
        size_t sum = 0;
        for (size_t d = 0; d < ((size_t)1 << 16); d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            tmp[count[(keys[i] >> shift) & 0xffff]++] = keys[i];
        uint64_t *t = keys;
        keys = tmp;
        tmp = t;
    }
    free(count);
    return keys;
}

/* Folds the blocks never collected (live in the pool, or displaced by a
 * reused id), in allocation order. Their sequence numbers are distinct
 * and below n_allocs_read, so (seq, index) packed in one word sorts by a
 * radix sort of the seq bits; a qsort when they do not fit. */
static int fold_never_collected(builder *b)
{
    mt_model *m = b->m;
    mta_live *l = &b->live_blocks;
    size_t n = l->n_pool + b->displaced.n, k = 0;
    /* the index of the live blocks is of no more use: room for the sort */
    free(l->slots);
    free(l->ring);
    l->slots = NULL;
    l->ring = NULL;
    l->count = 0;
    unsigned seq_bits = bits_for(m->n_allocs_read), idx_bits = bits_for(n);
    int rc = 0;
    if (seq_bits + idx_bits <= 64 && !(mt_read_forced() & MT_ROUTE_QSORT)) {
        uint64_t *v = malloc((n ? n : 1) * sizeof *v), *tmp = malloc((n ? n : 1) * sizeof *tmp);
        if (!v || !tmp) {
            free(v);
            free(tmp);
            return -1;
        }
        for (size_t i = 0; i < l->n_pool; i++)
            if (l->pool[i].seq != UINT64_MAX)
                v[k++] = l->pool[i].seq << idx_bits | i;
        for (size_t i = 0; i < b->displaced.n; i++)
            v[k++] = b->displaced.v[i].seq << idx_bits | (l->n_pool + i);
        uint64_t *sorted = radix_sort(v, tmp, k, idx_bits, seq_bits);
        uint64_t mask = idx_bits ? (((uint64_t)1 << (idx_bits - 1)) << 1) - 1 : 0;
        for (size_t i = 0; sorted && i < k && rc == 0; i++) {
            size_t j = (size_t)(sorted[i] & mask);
            const mta_live_rec *r = j < l->n_pool ? &l->pool[j] : &b->displaced.v[j - l->n_pool];
            rc = mta_fold(m, &r->a, r->seq);
        }
        free(v);
        free(tmp);
        return sorted ? rc : -1;
    }
    const mta_live_rec **v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < l->n_pool; i++)
        if (l->pool[i].seq != UINT64_MAX)
            v[k++] = &l->pool[i];
    for (size_t i = 0; i < b->displaced.n; i++)
        v[k++] = &b->displaced.v[i];
    qsort(v, k, sizeof *v, cmp_seq);
    for (size_t i = 0; i < k && rc == 0; i++)
        rc = mta_fold(m, &v[i]->a, v[i]->seq);
    free(v);
    return rc;
}

/* End of a folded model: the blocks never collected, the peak. */
static int fold_rest(builder *b)
{
    mt_model *m = b->m;
    int rc = fold_never_collected(b);
    if (m->monotone && b->live > m->peak_samples) {
        m->peak_samples = b->live;
        m->peak_time = b->cur_time;
    }
    if (m->monotone)
        mta_peak_time(&m->peak_acc, b->cur_time, b->live_at_time, b->live, b->alloc_at_time);
    m->peak_unknown = !m->monotone;
    if (m->peak_unknown) {
        m->peak_samples = 0;
        m->peak_time = 0;
        mta_peak_init(&m->peak_acc);
    }
    mta_peak_result(&m->peak_acc, m->bps, m->info.sample_rate, &m->peak_est);
    m->peak_ready = 1;
    /* the node arrays cover every node, for the selection */
    if (rc == 0 && m->node_cap < m->nodes.n) {
        size_t cap = m->nodes.n;
        mt_cost *c = realloc(m->node_cost, cap * sizeof *c);
        if (c)
            m->node_cost = c;
        uint64_t *fi = c ? realloc(m->node_first, cap * sizeof *fi) : NULL;
        if (!c || !fi)
            return -1;
        m->node_first = fi;
        memset(c + m->node_cap, 0, (cap - m->node_cap) * sizeof *c);
        memset(fi + m->node_cap, 0xff, (cap - m->node_cap) * sizeof *fi);
        m->node_cap = cap;
    }
    return rc;
}

/* ------------------------------------------------------ two threads */

#define PIPE_AHEAD 12    /* events prefetched ahead in a batch */

/* Appends src[from .. n) to a batch's vector (both MTA_VEC of one type). */
#define DEFS_COPY(dst, src, from) \
    ((src).n <= (from) ? 0 \
     : ((dst).n + (src).n - (from) <= (dst).cap || \
        mta_grow((void **)&(dst).v, &(dst).cap, (dst).n + (src).n - (from), sizeof *(dst).v) == 0) \
         ? (memcpy((dst).v + (dst).n, (src).v + (from), ((src).n - (from)) * sizeof *(dst).v), \
            (dst).n += (src).n - (from), 0) \
         : -1)

/* Reading thread: hands the batch over with its status, and takes the
 * next one (status MTA_PIPE_MORE). Returns 0, or -1 when the folding
 * thread stopped or the model's news did not fit in memory (then the
 * batch went with that error instead of its events). */
static int pipe_publish(builder *b, int status)
{
    mta_batch *bt = b->batch;
    const mt_model *s = b->m;
    int oom = 0;
    if (b->pipe->defs) {
        if (DEFS_COPY(bt->nodes, s->nodes, b->sent_nodes) < 0 ||
            DEFS_COPY(bt->frames, s->frames, b->sent_frames) < 0 ||
            DEFS_COPY(bt->funcs, s->funcs, b->sent_funcs) < 0) {
            bt->n = bt->nodes.n = bt->frames.n = bt->funcs.n = 0;
            status = MTA_PIPE_ERROR;
            bt->why = "out of memory";
            oom = 1;
        }
        b->sent_nodes = s->nodes.n;
        b->sent_frames = s->frames.n;
        b->sent_funcs = s->funcs.n;
    }
    bt->offset = mt_reader_offset(b->r);
    bt->status = status;
    b->batch = NULL;
    mta_pipe_put(b->pipe, status != MTA_PIPE_MORE);
    if (oom)
        return -1;
    if (status != MTA_PIPE_MORE)
        return 0;
    b->batch = mta_pipe_free_batch(b->pipe);
    return b->batch ? 0 : -1;
}

/* Reading thread: an event goes into the batch; an allocation with its
 * record made (its stack found) here. Returns 0, or -1 with b->why (NULL:
 * the batches stopped, nothing more to say). */
static int pipe_emit(builder *b, const mt_event *ev)
{
    /* (no batch: a warning found the batches stopped) */
    if (!b->batch || (b->batch->n == MTA_PIPE_EVENTS && pipe_publish(b, MTA_PIPE_MORE) < 0)) {
        b->why = NULL;
        return -1;
    }
    mta_pipe_ev *e = &b->batch->ev[b->batch->n];
    if (b->batch->n + PIPE_AHEAD < MTA_PIPE_EVENTS)
        __builtin_prefetch(e + PIPE_AHEAD, 1);
    e->kind = (uint8_t)ev->kind;
    e->time = ev->time;
    e->id = ev->id;
    if (ev->kind == MT_EVENT_ALLOC) {
        mt_alloc a;
        if (alloc_of(b, ev, &a) < 0)
            return -1;
        e->size = a.size;
        e->n_samples = a.n_samples;
        e->stack = a.stack;
        e->source = a.source;
        e->carried = a.carried;
        e->verdict = a.verdict;
    }
    b->batch->n++;
    return 0;
}

/* Reading thread: a warning of the reader takes its place among the
 * events, for the folding thread to pass on in order. */
static void pipe_warning(void *ctx, const char *msg)
{
    builder *b = ctx;
    if (!b->batch || (b->batch->n == MTA_PIPE_EVENTS && pipe_publish(b, MTA_PIPE_MORE) < 0))
        return; /* stopped */
    mta_batch *bt = b->batch;
    char *w = strdup(msg);
    if (!w || MTA_PUSH(bt->warnings, w) < 0) {
        free(w);
        return; /* (out of memory: the next allocation will say so) */
    }
    bt->ev[bt->n].kind = MTA_PIPE_WARNING;
    bt->ev[bt->n].id = bt->warnings.n - 1;
    bt->n++;
}

static int read_events(builder *b);

/* The reading thread: reads the trace to its end, then says how it ended
 * in the last batch (nothing when the folding thread stopped first). */
static void *read_main(void *arg)
{
    builder *b = arg;
    int rc = read_events(b);
    if (!b->batch)
        return NULL;
    if (rc == -1) {
        b->batch->message = strdup(mt_reader_error(b->r));
        b->batch->why = "out of memory"; /* (if that strdup failed) */
    } else if (rc < 0) {
        b->batch->why = b->why;
    }
    pipe_publish(b, rc == 0 ? MTA_PIPE_END : rc == -1 ? MTA_PIPE_READ_ERROR : MTA_PIPE_ERROR);
    return NULL;
}

/* Folding thread: the batches, each event into the fold queue as
 * fold_push would put it, until the reading thread's last. Returns 0 at
 * the trace's end, -1 with b->why, or -2 with the reader's error in
 * *message (malloc'd). */
static int fold_batches(builder *b, mta_pipe *p, char **message)
{
    mt_model *m = b->m;
    const mt_model_options *opts = b->opts;
    uint64_t size = mt_reader_size(b->r), next_progress = 1 << 20;
    for (;;) {
        mta_batch *bt = mta_pipe_take(p);
        b->why = "out of memory";
        if (p->defs && (DEFS_COPY(m->nodes, bt->nodes, 0) < 0 ||
                        DEFS_COPY(m->frames, bt->frames, 0) < 0 ||
                        DEFS_COPY(m->funcs, bt->funcs, 0) < 0)) {
            mta_pipe_release(p);
            return -1;
        }
        for (size_t i = 0; i < bt->n; i++) {
            const mta_pipe_ev *pe = &bt->ev[i];
            /* (the lines come from the other core's cache) */
            if (i + PIPE_AHEAD < bt->n)
                __builtin_prefetch(pe + PIPE_AHEAD);
            if (__builtin_expect(pe->kind == MTA_PIPE_WARNING, 0)) {
                const char *w = bt->warnings.v[pe->id];
                if (b->warn_fn)
                    b->warn_fn(b->warn_ctx, w);
                else
                    fprintf(stderr, "warning: %s\n", w);
                continue;
            }
            struct fold_q *e = fold_slot(b);
            if (!e) {
                mta_pipe_release(p);
                return -1;
            }
            e->kind = pe->kind;
            e->time = pe->time;
            e->id = pe->id;
            if (pe->kind == MT_EVENT_ALLOC) {
                e->a.time = pe->time;
                e->a.collect = MT_TIME_NEVER;
                e->a.promote = MT_TIME_NEVER;
                e->a.size = pe->size;
                e->a.n_samples = pe->n_samples;
                e->a.stack = pe->stack;
                e->a.source = pe->source;
                e->a.carried = pe->carried;
                e->a.verdict = pe->verdict;
            }
            fold_entered(b, e);
        }
        if (opts && opts->on_progress && bt->offset >= next_progress) {
            opts->on_progress(opts->progress_ctx, bt->offset, size);
            next_progress = bt->offset + (1 << 20);
        }
        int status = bt->status, rc = 0;
        if (status == MTA_PIPE_READ_ERROR) {
            *message = bt->message;
            bt->message = NULL;
            b->why = bt->why;
            rc = *message ? -2 : -1;
        } else if (status == MTA_PIPE_ERROR) {
            /* as fold_push: the queue moves on before the record fails */
            rc = -1;
            if (fold_slot(b))
                b->why = bt->why;
        }
        mta_pipe_release(p);
        if (status != MTA_PIPE_MORE)
            return rc;
    }
}

/* One event of the trace, in file order. Returns 0, or -1 with b->why. */
static inline __attribute__((always_inline)) int add_event(builder *b, const mt_event *ev)
{
    mt_model *m = b->m;
    if (b->pipe)
        return pipe_emit(b, ev);
    if (m->folded)
        return fold_push(b, ev);
    if (ev->time < b->cur_time)
        m->monotone = 0;
    b->cur_time = ev->time;
    if (ev->time > m->end)
        m->end = ev->time;
    if (ev->kind == MT_EVENT_ALLOC) {
        size_t idx = m->allocs.n;
        if (idx >= UINT32_MAX - 1) {
            b->why = "too many allocations (more than 2^32)";
            return -1;
        }
        b->why = "out of memory";
        if (!b->sparse_ids && ev->id != idx) {
            /* Ids are not 0, 1, 2, ...: switch to a lookup table. */
            if (mta_table_init(&b->ids, idx + 1024) < 0)
                return -1;
            for (size_t i = 0; i < idx; i++)
                if (mta_table_put(&b->ids, i, (uint32_t)i) < 0)
                    return -1;
            b->sparse_ids = 1;
        }
        if (b->sparse_ids && mta_table_put(&b->ids, ev->id, (uint32_t)idx) < 0)
            return -1;
        /* Every sum of sample counts (live memory, costs, peaks) is a
         * subset of this total, so bounding it keeps them all in range. */
        if (ev->n_samples > MTA_MAX_SAMPLES - b->total_samples) {
            b->why = "sample counts add up to more than 2^62 (a damaged or forged trace)";
            return -1;
        }
        b->total_samples += ev->n_samples;
        int64_t st = stack_of(b, ev);
        if (st < 0)
            return -1;
        double bytes = (double)ev->length * m->word_bytes + 0.5;
        mt_alloc a = {
            .time = ev->time,
            .collect = MT_TIME_NEVER,
            .promote = MT_TIME_NEVER,
            .size = bytes < 18446744073709549568.0 ? (uint64_t)bytes : UINT64_MAX,
            .n_samples = ev->n_samples,
            .stack = (mt_node_id)st,
            .source = (uint8_t)ev->source,
            .carried = ev->carried != 0,
            .verdict = (uint8_t)ev->verdict,
        };
        if (ev->source > MT_SOURCE_EXTERNAL)
            a.source = MT_SOURCE_EXTERNAL;
        if (MTA_PUSH(m->allocs, a) < 0)
            return -1;
        b->live += (int64_t)a.n_samples;
        return 0;
    }
    int64_t i = find_alloc(b, ev->id);
    if (ev->kind == MT_EVENT_PROMOTE)
        m->n_promotes++;
    else
        m->n_collects++;
    if (i < 0) {
        if (ev->kind != MT_EVENT_PROMOTE)
            warn_collect(b, ev->id);
        return 0;
    }
    if (b->n_pend == PEND_CHUNK && apply_pending(b) < 0) {
        b->why = "out of memory";
        return -1;
    }
    if (b->n_pend == b->cap_pend &&
        mta_grow((void **)&b->pend, &b->cap_pend, b->n_pend + 1, sizeof *b->pend) < 0) {
        b->why = "out of memory";
        return -1;
    }
    b->pend[b->n_pend].time = ev->time;
    b->pend[b->n_pend].alloc = (uint32_t)i;
    b->pend[b->n_pend].kind = ev->kind;
    b->n_pend++;
    return 0;
}

/* The builder's scaffolding, which the finished model does not keep. */
static void builder_free(builder *b)
{
    mta_table_destroy(&b->code_frames);
    mta_table_destroy(&b->children);
    free(b->first_child.v);
    free(b->next_sibling.v);
    free(b->n_kids.v);
    mta_table_destroy(&b->ids);
    free(b->func_slots);
    free(b->memo);
    free(b->code_memo);
    free(b->path_memo);
    free(b->pm_codes);
    free(b->pm_nodes);
    free(b->pend);
    for (size_t i = 0; i < b->n_prev; i++) {
        free(b->prev[i].path);
        free(b->prev[i].codes);
    }
    free(b->prev);
    free(b->shorts);
    mta_live_free(&b->live_blocks);
    free(b->displaced.v);
}

/* The tables that find the stacks of a builder's allocations, and the
 * trie's root. Returns 0, or -1 when out of memory. */
static int stacks_init(builder *b)
{
    if (mta_table_init(&b->code_frames, 1024) < 0 || mta_table_init(&b->children, 4096) < 0)
        return -1;
    b->func_mask = 255;
    if (!(b->memo = calloc(MEMO_SIZE, sizeof *b->memo)) ||
        !(b->code_memo = calloc(CODE_MEMO_SIZE, sizeof *b->code_memo)))
        return -1;
    if (!b->max_depth &&
        (!(b->path_memo = calloc((size_t)1 << PATH_MEMO_BITS, sizeof *b->path_memo)) ||
         !(b->pm_codes = malloc(PATH_MEMO_CAP * sizeof *b->pm_codes)) ||
         !(b->pm_nodes = malloc(PATH_MEMO_CAP * sizeof *b->pm_nodes))))
        return -1;
    if (!(b->func_slots = calloc(b->func_mask + 1, sizeof *b->func_slots)))
        return -1;
    if (b->max_depth && b->max_depth <= 2 && shorts_grow(b) < 0)
        return -1;
    mt_node root = {0, 0, 0};
    uint32_t zero32 = 0;
    uint16_t zero16 = 0;
    if (MTA_PUSH(b->m->nodes, root) < 0 || MTA_PUSH(b->first_child, zero32) < 0 ||
        MTA_PUSH(b->next_sibling, zero32) < 0 || MTA_PUSH(b->n_kids, zero16) < 0)
        return -1;
    return 0;
}

/* Reads the trace to its end into add_event. Returns 0 at the end, -1 on
 * the reader's error (mt_reader_error), -2 with b->why. */
static int read_events(builder *b)
{
    mt_reader *r = b->r;
    const mt_model_options *opts = b->opts;
    uint64_t size = mt_reader_size(r), next_progress = 1 << 20, n_read = 0;
    mt_event ev;
    int rc;
    /* Shallow models read AHEAD events in advance: the slot of each queued
     * allocation's stack is prefetched, so the processor overlaps those
     * cache misses instead of waiting for each in turn. */
    enum { AHEAD = 16, BIG_SHORTS = 1 << 16 };
    struct queued { mt_event ev; mt_location_code code[2]; } q[AHEAD];
    size_t qhead = 0, qn = 0;
    rc = 1;
    for (;;) {
        if (rc > 0)
            rc = mt_reader_next(r, &ev); /* once 0 (end) or -1, stays */
        if (rc <= 0 && qn == 0)
            break;
        /* (the queue pays off once the table outgrows the caches) */
        if (!b->shorts || (b->shorts_mask < BIG_SHORTS && qn == 0)) {
            if (rc <= 0)
                break;
            if (add_event(b, &ev) < 0)
                return -2;
        } else {
            if (rc > 0) {
                struct queued *e = &q[(qhead + qn++) % AHEAD];
                e->ev = ev;
                if (ev.kind == MT_EVENT_ALLOC) {
                    size_t len = ev.backtrace_length;
                    const mt_location_code *bt = ev.backtrace;
                    if (len > b->max_depth) {
                        bt += len - b->max_depth;
                        len = b->max_depth;
                    }
                    for (size_t k = 0; k < len; k++)
                        e->code[k] = bt[k];
                    e->ev.backtrace = e->code;
                    e->ev.backtrace_length = len;
                    uint64_t c0 = len > 0 ? bt[0] : 0, c1 = len > 1 ? bt[1] : 0;
                    __builtin_prefetch(&b->shorts[short_hash(c0, c1, len) & b->shorts_mask]);
                }
            }
            if (qn == AHEAD || (rc <= 0 && qn)) {
                if (add_event(b, &q[qhead].ev) < 0)
                    return -2;
                qhead = (qhead + 1) % AHEAD;
                qn--;
            }
        }
        if (rc <= 0)
            continue;
        /* (with two threads the folding thread reports the progress) */
        if (opts && opts->on_progress && !b->pipe && (++n_read & 1023) == 0 &&
            mt_reader_offset(r) >= next_progress) {
            opts->on_progress(opts->progress_ctx, mt_reader_offset(r), size);
            next_progress = mt_reader_offset(r) + (1 << 20);
        }
    }
    return rc < 0 ? -1 : 0;
}

/* Threads to read a model with: two (a reading thread that decodes and
 * finds the stacks, the caller's thread folding) for folded models when
 * more than one processor is ours, unless the options or the forced
 * route (mt_read_force) say otherwise. */
static int read_threads(const mt_model_options *opts)
{
    if (!opts || !opts->fold)
        return 1;
    return mta_read_threads(opts->read_threads);
}

int mta_read_threads(int requested)
{
    if (requested)
        return requested >= 2 ? 2 : 1;
    if (mt_read_forced() & MT_ROUTE_ONE_THREAD)
        return 1;
    if (mt_read_forced() & MT_ROUTE_TWO_THREADS)
        return 2;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) < 2)
        return 1;
    return 2;
}

/* Two threads, once the reading one is joined: the model takes over the
 * nodes, frames, functions and names the reading thread made (the same
 * as those the batches brought, if they did), and rb finds them in it. */
static int adopt_stacks(mt_model *m, builder *rb)
{
    mt_model *s = rb->m;
    free(m->nodes.v);
    free(m->frames.v);
    free(m->funcs.v);
    m->nodes = s->nodes;
    m->frames = s->frames;
    m->funcs = s->funcs;
    memset(&s->nodes, 0, sizeof s->nodes);
    memset(&s->frames, 0, sizeof s->frames);
    memset(&s->funcs, 0, sizeof s->funcs);
    rb->m = m;
    mta_pool *a = &m->strings, *sa = &s->strings;
    for (size_t i = 0; i < sa->n; i++) {
        if (a->n == a->cap && mta_grow((void **)&a->chunks, &a->cap, a->n + 1, sizeof(char *)) < 0)
            return -1; /* (the chunks left stay the other model's, freed with it) */
        a->chunks[a->n++] = sa->chunks[i];
        sa->chunks[i] = NULL;
    }
    return 0;
}

mt_model *mt_model_from_reader(mt_reader *r, const mt_model_options *opts, char **error)
{
    builder b, rb;
    memset(&b, 0, sizeof b);
    memset(&rb, 0, sizeof rb);
    b.r = r;
    b.opts = opts;
    b.max_depth = opts ? opts->max_depth : 0;
    mta_pipe pipe;
    memset(&pipe, 0, sizeof pipe);
    pthread_t reader;
    int started = 0;
    mt_model *m = calloc(1, sizeof *m), *shadow = NULL;
    if (m) {
        pthread_mutex_init(&m->lock, NULL);
        if (opts && opts->fold) {
            m->folded = 1;
            m->fold_filter = opts->fold_filter;
            m->fold_live_at = opts->fold_live_at;
            m->fold_peak = opts->fold_peak;
            m->on_fold = opts->on_fold;
            m->fold_ctx = opts->fold_ctx;
            m->on_alloc = opts->on_alloc;
        }
    }
    if (m && m->folded && !opts->fold_peak_known &&
        (m->fold_live_at == MT_TIME_PEAK || mt_filter_uses_peak(m->fold_filter))) {
        if (error)
            *error = strdup("trace: folding at the peak needs its time (fold_peak)");
        mt_model_free(m);
        return NULL;
    }
    const char *oom = "out of memory";
    const char *why = NULL;
    if (!m)
        goto fail_oom;
    b.m = m;
    if (copy_info(m, mt_reader_info(r)) < 0)
        goto fail_oom;
    m->monotone = 1;
    if (read_threads(opts) == 2) {
        /* The reading thread's builder, in a model of its own. */
        rb.r = r;
        rb.opts = opts;
        rb.max_depth = b.max_depth;
        if (!(shadow = calloc(1, sizeof *shadow)))
            goto fail_oom;
        pthread_mutex_init(&shadow->lock, NULL);
        shadow->word_bytes = m->word_bytes;
        rb.m = shadow;
        mt_node root = {0, 0, 0};
        if (stacks_init(&rb) < 0 || MTA_PUSH(m->nodes, root) < 0 || mta_pipe_init(&pipe) < 0)
            goto fail_oom;
        /* hooks read the model while it is built: it gets the nodes,
         * frames and functions before the events that use them */
        pipe.defs = m->on_fold || m->on_alloc;
        rb.pipe = &pipe;
        rb.batch = mta_pipe_free_batch(&pipe);
        rb.sent_nodes = 1;
        b.warn_fn = pipe_warning;
        b.warn_ctx = &rb;
        mt_reader_swap_warning(r, &b.warn_fn, &b.warn_ctx);
        if (mta_pipe_start(&reader, read_main, &rb) != 0) {
            mt_reader_swap_warning(r, &b.warn_fn, &b.warn_ctx);
            goto fail_oom;
        }
        started = 1;
        char *msg = NULL;
        int rc = fold_batches(&b, &pipe, &msg);
        if (rc < 0)
            mta_pipe_stop(&pipe);
        pthread_join(reader, NULL);
        started = 0;
        mt_reader_swap_warning(r, &b.warn_fn, &b.warn_ctx);
        if (rc == -2) {
            if (error)
                *error = msg;
            else
                free(msg);
            goto fail_quiet;
        }
        if (rc < 0) {
            why = b.why;
            goto fail;
        }
        if (adopt_stacks(m, &rb) < 0)
            goto fail_oom;
    } else {
        if (stacks_init(&b) < 0)
            goto fail_oom;
        int rc = read_events(&b);
        if (rc == -1) {
            if (error)
                *error = strdup(mt_reader_error(r));
            goto fail_quiet;
        }
        if (rc < 0) {
            why = b.why;
            goto fail;
        }
    }
    if (m->folded && fold_drain(&b) < 0) {
        why = b.why;
        goto fail;
    }
    if (apply_pending(&b) < 0)
        goto fail_oom;
    if (b.double_collect)
        warn_collect(&b, (mt_obj_id)b.double_alloc);
    m->end_live_samples = b.live;
    /* The recording may end after its last event (the process held its
     * memory, then exited): the packets say when. */
    if (mt_reader_end_time(r) > m->end)
        m->end = mt_reader_end_time(r);
    m->has_scan = mt_reader_scan(r, &m->scan_time);
    if (m->folded && fold_rest(&b) < 0) {
        why = m->fold_stopped ? "stopped by the caller" : oom;
        goto fail;
    }
    for (size_t i = 0; i < m->nodes.n; i++)
        if (m->nodes.v[i].depth > m->deepest)
            m->deepest = m->nodes.v[i].depth;
    if (m->deepest > MT_STACK_MAX_DEPTH) {
        /* the frame that stands for the cut part of deep stacks (select.c) */
        int64_t fn = intern_func(rb.m == m ? &rb : &b, MT_TRUNCATED_NAME, "");
        mt_frame fr = {.func = (mt_func_id)fn, .inline_count = 1};
        if (fn < 0 || MTA_PUSH(m->frames, fr) < 0)
            goto fail_oom;
        m->trunc_frame = (mt_frame_id)(m->frames.n - 1);
    }
    builder_free(&b);
    builder_free(&rb);
    mt_model_free(shadow);
    mta_pipe_destroy(&pipe);
    return m;

fail_oom:
    why = oom;
fail:
    if (error)
        *error = strf("%s: %s", "trace", why);
fail_quiet:
    if (started) {
        mta_pipe_stop(&pipe);
        pthread_join(reader, NULL);
        mt_reader_swap_warning(r, &b.warn_fn, &b.warn_ctx);
    }
    builder_free(&b);
    builder_free(&rb);
    mt_model_free(shadow);
    mta_pipe_destroy(&pipe);
    mt_model_free(m);
    return NULL;
}

mt_model *mt_model_load(const char *path, const mt_model_options *opts, char **error)
{
    if (mt_path_is_profile(path))
        return mta_profile_load(path, opts, error);
    mt_reader_options ro = {0};
    if (opts) {
        ro.on_warning = opts->on_warning;
        ro.warning_ctx = opts->warning_ctx;
    }
    mt_reader *r = mt_reader_open(path, &ro, error);
    if (!r)
        return NULL;
    char *err = NULL;
    mt_model *m = mt_model_from_reader(r, opts, &err);
    if (!m && err && strncmp(err, "trace: ", 7) == 0) {
        char *e2 = strf("%s: %s", path, err + 7);
        free(err);
        err = e2;
    }
    if (error)
        *error = err;
    else
        free(err);
    mt_reader_close(r);
    return m;
}

void mt_model_free(mt_model *m)
{
    if (!m)
        return;
    mta_pool_free(&m->strings);
    free(m->allocs.v);
    free(m->funcs.v);
    free(m->frames.v);
    free(m->nodes.v);
    free(m->events.v);
    free(m->live_after);
    free(m->collects.v);
    free(m->node_cost);
    free(m->node_first);
    free(m->fold_lt);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

/* -------------------------------------------------------------- accessors */

const mt_trace_info *mt_model_info(const mt_model *m) { return &m->info; }

int mt_model_scan(const mt_model *m, mt_timedelta *time)
{
    if (m->has_scan && time)
        *time = m->scan_time;
    return m->has_scan;
}
size_t mt_model_n_allocs(const mt_model *m) { return m->allocs.n; }
const mt_alloc *mt_model_allocs(const mt_model *m) { return m->allocs.v; }
size_t mt_model_n_funcs(const mt_model *m) { return m->funcs.n; }
const mt_func *mt_model_funcs(const mt_model *m) { return m->funcs.v; }
size_t mt_model_n_frames(const mt_model *m) { return m->frames.n; }
const mt_frame *mt_model_frames(const mt_model *m) { return m->frames.v; }
size_t mt_model_n_nodes(const mt_model *m) { return m->nodes.n; }
const mt_node *mt_model_nodes(const mt_model *m) { return m->nodes.v; }
double mt_model_bytes_per_sample(const mt_model *m) { return m->bps; }
mt_timedelta mt_model_end(const mt_model *m) { return m->end; }
/* The peak, found on first use: when the file's times never decrease,
 * allocations (file order) and collections (collection order) are merged
 * on the fly without storing anything; otherwise it comes with the sorted
 * event list. */
static void find_peak(mt_model *m)
{
    mta_peak_acc *acc = &m->peak_acc;
    mta_peak_init(acc);
    if (!m->monotone || __atomic_load_n(&m->events_ready, __ATOMIC_ACQUIRE)) {
        /* called under the lock: never build here (ensure_peak did) */
        if (!__atomic_load_n(&m->events_ready, __ATOMIC_ACQUIRE))
            return;
        m->peak_samples = 0;
        m->peak_time = 0;
        int64_t before = 0;
        uint64_t allocated = 0;
        for (size_t k = 0; k < m->events.n; k++) {
            if (!m->events.v[k].kind)
                allocated += mta_event_samples(m, &m->events.v[k]);
            if (k + 1 < m->events.n && m->events.v[k + 1].time == m->events.v[k].time)
                continue;
            if (m->live_after[k] > m->peak_samples) {
                m->peak_samples = m->live_after[k];
                m->peak_time = m->events.v[k].time;
            }
            mta_peak_time(acc, m->events.v[k].time, before, m->live_after[k], allocated);
            before = m->live_after[k];
            allocated = 0;
        }
        mta_peak_result(acc, m->bps, m->info.sample_rate, &m->peak_est);
        return;
    }
    const mt_alloc *al = m->allocs.v;
    size_t na = m->allocs.n, nc = m->collects.n, i = 0, j = 0;
    int64_t live = 0, peak = 0;
    mt_timedelta peak_t = 0;
    while (i < na || j < nc) {
        /* all events of the next time, allocations first */
        mt_timedelta ta = i < na ? al[i].time : MT_TIME_NEVER;
        mt_timedelta tc = j < nc ? al[m->collects.v[j]].collect : MT_TIME_NEVER;
        mt_timedelta t = ta <= tc ? ta : tc;
        int64_t before = live;
        uint64_t allocated = 0;
        while (i < na && al[i].time == t)
            allocated += al[i++].n_samples;
        live += (int64_t)allocated;
        while (j < nc && al[m->collects.v[j]].collect == t) {
            /* collections reach their records in random order */
            if (j + 16 < nc)
                __builtin_prefetch(&al[m->collects.v[j + 16]]);
            live -= (int64_t)al[m->collects.v[j++]].n_samples;
        }
        if (live > peak) {
            peak = live;
            peak_t = t;
        }
        mta_peak_time(acc, t, before, live, allocated);
    }
    m->peak_samples = peak;
    m->peak_time = peak_t;
    mta_peak_result(acc, m->bps, m->info.sample_rate, &m->peak_est);
}

static void ensure_peak(const mt_model *cm)
{
    mt_model *m = (mt_model *)cm; /* the lazily found part is behind the lock */
    if (__atomic_load_n(&m->peak_ready, __ATOMIC_ACQUIRE))
        return;
    int need_events = !m->monotone;
    if (need_events)
        mta_events(m); /* takes the lock itself */
    pthread_mutex_lock(&m->lock);
    if (!m->peak_ready) {
        find_peak(m);
        __atomic_store_n(&m->peak_ready, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&m->lock);
}

mt_timedelta mt_model_peak_time(const mt_model *m)
{
    ensure_peak(m);
    return m->peak_time;
}

double mt_model_peak_bytes(const mt_model *m)
{
    ensure_peak(m);
    return (double)m->peak_samples * m->bps;
}

void mt_model_peak(const mt_model *m, mt_peak *out)
{
    ensure_peak(m);
    *out = m->peak_est;
}

double mt_alloc_objects(const mt_model *m, const mt_alloc *a)
{
    return mta_alloc_objects(m, a);
}

mt_timedelta mt_model_resolve_time(const mt_model *m, mt_timedelta t)
{
    if (t == MT_TIME_END)
        return m->end;
    if (t == MT_TIME_PEAK)
        return mt_model_peak_time(m);
    return t;
}

double mt_model_live_at(const mt_model *m, mt_timedelta t)
{
    t = mt_model_resolve_time(m, t);
    if (t >= m->end)
        return (double)m->end_live_samples * m->bps;
    const mta_event *ev = mta_events(m);
    if (!ev)
        return 0;
    /* last event with time <= t */
    size_t lo = 0, hi = m->events.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ev[mid].time <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? (double)m->live_after[lo - 1] * m->bps : 0;
}

void mt_model_event_counts(const mt_model *m, uint64_t *allocs, uint64_t *promotes,
                           uint64_t *collects)
{
    if (allocs)
        *allocs = m->folded ? m->n_allocs_read : m->allocs.n;
    if (promotes)
        *promotes = m->n_promotes;
    if (collects)
        *collects = m->n_collects;
}

size_t mt_model_memory(const mt_model *cm)
{
    /* The events are built lazily, by whichever thread asks first
     * (mta_events): read their size under the same lock. */
    mt_model *m = (mt_model *)cm;
    pthread_mutex_lock(&m->lock);
    size_t lazy = m->events.cap * sizeof(mta_event) + m->events.n * sizeof(int64_t) +
                  m->collects.cap * sizeof(uint32_t);
    pthread_mutex_unlock(&m->lock);
    return sizeof *m + m->allocs.cap * sizeof(mt_alloc) + m->funcs.cap * sizeof(mt_func) +
           m->frames.cap * sizeof(mt_frame) + m->nodes.cap * sizeof(mt_node) + lazy +
           m->node_cap * (sizeof(mt_cost) + sizeof(uint64_t)) +
           m->strings.n * 65536;
}

size_t mt_model_stack(const mt_model *m, mt_node_id node, mt_frame_id *out, size_t cap)
{
    size_t depth = m->nodes.v[node].depth;
    for (size_t i = depth; i > 0; i--) {
        if (i - 1 < cap)
            out[i - 1] = m->nodes.v[node].frame;
        node = m->nodes.v[node].parent;
    }
    return depth;
}

size_t mt_model_find_funcs(const mt_model *m, const char *name, int exact, mt_func_id *out,
                           size_t cap)
{
    size_t found = 0;
    for (size_t i = 0; i < m->funcs.n; i++) {
        const char *fn = m->funcs.v[i].name;
        if (exact ? strcmp(fn, name) == 0 : strstr(fn, name) != NULL) {
            if (found < cap)
                out[found] = (mt_func_id)i;
            found++;
        }
    }
    return found;
}

int mt_model_is_folded(const mt_model *m) { return m->folded; }

int mt_model_folded_by_source(const mt_model *m, mt_cost out[3])
{
    if (!m->folded)
        return 0;
    memcpy(out, m->fold_by_source, sizeof m->fold_by_source);
    return 1;
}
int mt_model_peak_known(const mt_model *m) { return !m->peak_unknown; }
