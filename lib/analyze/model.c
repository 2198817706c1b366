/*
 * model.c - the model's accessors (model.h): its parts, its peak (found
 * on first use from the allocation table, or while a folded model was
 * read), live memory at a time, what it holds in memory, its end; a new
 * model's parts (mta_model_new), whole or folded.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "model.h"

double mt_noise(uint64_t k)
{
    return k ? 1.0 / sqrt((double)k) : 1.0;
}

double mt_noise_at(uint64_t k, double rate)
{
    if (rate >= 1)
        return 0;
    return k ? sqrt((1 - (rate > 0 ? rate : 0)) / (double)k) : 1.0;
}

mt_model *mta_model_new(const mt_model_options *opts)
{
    mt_model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    pthread_mutex_init(&m->lock, NULL);
    if (!opts || !opts->fold) {
        if (!(m->whole = mta_alloctab_new())) {
            mt_model_free(m);
            return NULL;
        }
        return m;
    }
    mta_folded *f = m->fold = mta_folded_new();
    if (!f) {
        mt_model_free(m);
        return NULL;
    }
    f->filter = opts->fold_filter;
    f->live_at = opts->fold_live_at;
    f->peak = opts->fold_peak;
    f->on_fold = opts->on_fold;
    f->ctx = opts->fold_ctx;
    f->on_alloc = opts->on_alloc;
    return m;
}

void mt_model_free(mt_model *m)
{
    if (!m)
        return;
    if (!m->shares_stacks) {
        mta_stacks_free(&m->stacks);
        mta_alloctab_free(m->whole);
    }
    mta_folded_free(m->fold);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

const mt_trace_info *mt_model_info(const mt_model *m) { return &m->info; }

int mt_model_scan(const mt_model *m, mt_timedelta *time)
{
    if (m->has_scan && time)
        *time = m->scan_time;
    return m->has_scan;
}
size_t mt_model_n_allocs(const mt_model *m) { return mta_n_allocs(m); }
const mt_alloc *mt_model_allocs(const mt_model *m) { return m->whole ? m->whole->allocs.v : NULL; }
size_t mt_model_n_funcs(const mt_model *m) { return m->stacks.funcs.n; }
const mt_func *mt_model_funcs(const mt_model *m) { return m->stacks.funcs.v; }
size_t mt_model_n_frames(const mt_model *m) { return m->stacks.frames.n; }
const mt_frame *mt_model_frames(const mt_model *m) { return m->stacks.frames.v; }
size_t mt_model_n_nodes(const mt_model *m) { return m->stacks.nodes.n; }
const mt_node *mt_model_nodes(const mt_model *m) { return m->stacks.nodes.v; }
mt_timedelta mt_model_end(const mt_model *m) { return m->end; }

const mta_event *mta_events(const mt_model *m, size_t *n)
{
    static const mta_event none[1];
    if (!m->whole) {
        *n = 0;
        return none;
    }
    return mta_alloctab_events(m->whole, m->monotone, n);
}

/* The peak of a whole model (called under the lock). When the file's
 * times never decrease, allocations (file order) and collections
 * (collection order) are merged on the fly without storing anything;
 * otherwise it comes with the sorted event list (ensure_peak built it). */
static void find_peak(mt_model *m)
{
    if (!m->whole)
        return;
    if (mta_alloctab_peak(m->whole, m->monotone, &m->peak_acc, &m->peak_samples,
                          &m->peak_time) < 0)
        return;
    mta_peak_result(&m->peak_acc, m->scale.bytes_per_sample, m->scale.sample_rate, &m->peak_est);
}

static void ensure_peak(const mt_model *cm)
{
    mt_model *m = (mt_model *)cm; /* the lazily found part is behind the lock */
    if (__atomic_load_n(&m->peak_ready, __ATOMIC_ACQUIRE))
        return;
    if (!m->monotone) {
        size_t n;
        mta_events(m, &n); /* takes the table's lock itself */
    }
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
    return (double)m->peak_samples * m->scale.bytes_per_sample;
}

void mt_model_peak(const mt_model *m, mt_peak *out)
{
    ensure_peak(m);
    *out = m->peak_est;
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
        return (double)m->end_live_samples * m->scale.bytes_per_sample;
    if (!m->whole)
        return 0;
    int64_t live;
    if (mta_alloctab_live_at(m->whole, m->monotone, t, &live) < 0)
        return 0;
    return (double)live * m->scale.bytes_per_sample;
}

void mt_model_event_counts(const mt_model *m, uint64_t *allocs, uint64_t *promotes,
                           uint64_t *collects)
{
    if (allocs)
        *allocs = m->fold ? m->fold->n_allocs_read : mta_n_allocs(m);
    if (promotes)
        *promotes = m->n_promotes;
    if (collects)
        *collects = m->n_collects;
}

size_t mt_model_memory(const mt_model *m)
{
    size_t folded = m->fold ? sizeof *m->fold +
                                  m->fold->node_cap * (sizeof(mt_cost) + sizeof(uint64_t))
                            : 0;
    if (m->shares_stacks)   /* the rest is its base's */
        return sizeof *m + folded;
    return sizeof *m + mta_stacks_memory(&m->stacks) +
           (m->whole ? mta_alloctab_memory(m->whole) : 0) + folded;
}

size_t mt_model_stack(const mt_model *m, mt_node_id node, mt_frame_id *out, size_t cap)
{
    return mta_stacks_path(&m->stacks, node, out, cap);
}

size_t mt_model_find_funcs(const mt_model *m, const char *name, int exact, mt_func_id *out,
                           size_t cap)
{
    size_t found = 0;
    for (size_t i = 0; i < m->stacks.funcs.n; i++) {
        const char *fn = m->stacks.funcs.v[i].name;
        if (exact ? strcmp(fn, name) == 0 : strstr(fn, name) != NULL) {
            if (found < cap)
                out[found] = (mt_func_id)i;
            found++;
        }
    }
    return found;
}

int mt_model_is_folded(const mt_model *m) { return m->fold != NULL; }

int mt_model_folded_by_source(const mt_model *m, mt_cost out[3])
{
    if (!m->fold)
        return 0;
    memcpy(out, m->fold->by_source, sizeof m->fold->by_source);
    return 1;
}
int mt_model_peak_known(const mt_model *m) { return !m->peak_unknown; }
