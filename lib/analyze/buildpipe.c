/*
 * buildpipe.c - the reading thread of a two-thread pass (folded models):
 * it decodes the trace and finds the stacks in an interner of its own,
 * and hands the events over in batches (pipe.c) with the nodes, frames
 * and functions they brought when the hooks need them as they come.
 */
#include <stdlib.h>
#include <string.h>

#include "build.h"

/* Reading thread: hands the batch over with its status, and takes the
 * next one (status MTA_PIPE_MORE). Returns 0, or -1 when the folding
 * thread stopped or the model's news did not fit in memory (then the
 * batch went with that error instead of its events). */
int mta_build_pipe_publish(builder *b, int status)
{
    mta_batch *bt = b->batch;
    const mta_stacks *s = b->st;
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
    /* the domains so far, for the events' indexes (a few bytes) */
    memcpy(bt->domain_ids, b->dom->ids, b->dom->n * sizeof *b->dom->ids);
    bt->n_domains = b->dom->n;
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

/* Reading thread: a warning of the reader takes its place among the
 * events, for the folding thread to pass on in order. */
void mta_build_pipe_warning(void *ctx, const char *msg)
{
    builder *b = ctx;
    if (!b->batch ||
        (b->batch->n == MTA_PIPE_EVENTS && mta_build_pipe_publish(b, MTA_PIPE_MORE) < 0))
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

/* The reading thread: reads the trace to its end, then says how it ended
 * in the last batch (nothing when the folding thread stopped first). */
void *mta_build_read_main(void *arg)
{
    builder *b = arg;
    int rc = mta_build_read(b);
    if (!b->batch)
        return NULL;
    if (rc == -1) {
        b->batch->message = strdup(mt_reader_error(b->r));
        b->batch->why = "out of memory"; /* (if that strdup failed) */
    } else if (rc < 0) {
        b->batch->why = b->why;
    }
    mta_build_pipe_publish(b, rc == 0    ? MTA_PIPE_END
                              : rc == -1 ? MTA_PIPE_READ_ERROR
                                         : MTA_PIPE_ERROR);
    return NULL;
}

