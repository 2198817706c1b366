/*
 * build.c - builds the model of a trace in one pass (mt_model_from_reader,
 * mt_model_load): the whole model (every allocation, alloctab.h) or a
 * folded one (per-stack costs, fold.h), around the stack interner
 * (stacks.h). Folded models are read on two threads where two processors
 * are available: a reading thread decodes and finds the stacks
 * (buildpipe.c), the caller's thread folds (buildfold.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "load.h"
#include "route.h"
#include "profile.h"
#include "warn.h"

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
        if (*fields[i] && !(*fields[i] = mta_strdup(&m->stacks.strings, *fields[i])))
            return -1;
    m->scale = mt_scale_of(in);
    return 0;
}

void mta_build_warn_collect(builder *b, mt_obj_id id)
{
    if (b->warned_unknown)
        return;
    b->warned_unknown = 1;
    char msg[160];
    snprintf(msg, sizeof msg, "collection of unknown or already collected object %llu (ignored)",
             (unsigned long long)id);
    mt_warn(b->opts ? b->opts->on_warning : NULL, b->opts ? b->opts->warning_ctx : NULL, msg);
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

mt_model *mt_model_from_reader(mt_reader *r, const mt_model_options *opts, char **error)
{
    if (opts && opts->fold && !opts->fold_peak_known &&
        (opts->fold_live_at == MT_TIME_PEAK || mt_filter_uses_peak(opts->fold_filter))) {
        if (error)
            *error = strdup("trace: folding at the peak needs its time (fold_peak)");
        return NULL;
    }
    builder b, rb;
    memset(&b, 0, sizeof b);
    memset(&rb, 0, sizeof rb);
    b.r = r;
    b.opts = opts;
    b.max_depth = opts ? opts->max_depth : 0;
    mta_pipe pipe;
    memset(&pipe, 0, sizeof pipe);
    mta_stacks reading;            /* the reading thread's interner */
    memset(&reading, 0, sizeof reading);
    mta_domains reading_domains;   /* and its table of domains */
    memset(&reading_domains, 0, sizeof reading_domains);
    pthread_t reader;
    int started = 0;
    const char *oom = "out of memory";
    const char *why = NULL;
    mt_model *m = mta_model_new(opts);
    if (!m)
        goto fail_oom;
    b.m = m;
    b.st = &m->stacks;
    b.dom = &m->domains;
    b.sc = &m->scale;
    if (copy_info(m, mt_reader_info(r)) < 0)
        goto fail_oom;
    m->monotone = 1;
    if (read_threads(opts) == 2) {
        /* The reading thread's builder, with an interner of its own. */
        rb.r = r;
        rb.opts = opts;
        rb.max_depth = b.max_depth;
        rb.st = &reading;
        rb.dom = &reading_domains;
        rb.sc = &m->scale;
        mt_node root = {0, 0, 0};
        if (mta_build_stacks_init(&rb) < 0 || MTA_PUSH(m->stacks.nodes, root) < 0 ||
            mta_pipe_init(&pipe) < 0)
            goto fail_oom;
        /* hooks read the model while it is built: it gets the nodes,
         * frames and functions before the events that use them */
        pipe.defs = m->fold->on_fold || m->fold->on_alloc;
        rb.pipe = &pipe;
        rb.batch = mta_pipe_free_batch(&pipe);
        rb.sent_nodes = 1;
        b.warn_fn = mta_build_pipe_warning;
        b.warn_ctx = &rb;
        mt_reader_swap_warning(r, &b.warn_fn, &b.warn_ctx);
        if (mta_pipe_start(&reader, mta_build_read_main, &rb) != 0) {
            mt_reader_swap_warning(r, &b.warn_fn, &b.warn_ctx);
            goto fail_oom;
        }
        started = 1;
        char *msg = NULL;
        int rc = mta_build_fold_batches(&b, &pipe, &msg);
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
        /* the model takes over the nodes, frames, functions and names the
         * reading thread made (the same as those the batches brought, if
         * they did) */
        if (mta_stacks_adopt(&m->stacks, &reading) < 0)
            goto fail_oom;
    } else {
        if (mta_build_stacks_init(&b) < 0)
            goto fail_oom;
        int rc = mta_build_read(&b);
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
    if (m->fold && mta_build_fold_drain(&b) < 0) {
        why = b.why;
        goto fail;
    }
    if (m->whole && mta_build_apply_pending(&b) < 0)
        goto fail_oom;
    if (b.double_collect)
        mta_build_warn_collect(&b, (mt_obj_id)b.double_alloc);
    m->end_live_samples = b.live;
    /* The recording may end after its last event (the process held its
     * memory, then exited): the packets say when. */
    if (mt_reader_end_time(r) > m->end)
        m->end = mt_reader_end_time(r);
    m->has_scan = mt_reader_scan(r, &m->scan_time);
    if (m->fold && mta_build_fold_rest(&b) < 0) {
        why = m->fold->stopped ? "stopped by the caller" : oom;
        goto fail;
    }
    if (mta_stacks_seal(&m->stacks) < 0)
        goto fail_oom;
    mta_build_free(&b);
    mta_build_free(&rb);
    mta_stacks_free(&reading);
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
    mta_build_free(&b);
    mta_build_free(&rb);
    mt_model_free(m);
    mta_stacks_free(&reading);
    mta_pipe_destroy(&pipe);
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

