/*
 * viewer.h - the web viewer as the CLI sees it: serve one loaded model over
 * HTTP until a signal arrives. The JSON API is documented in docs/viewer.md.
 */
#ifndef MT_VIEWER_H
#define MT_VIEWER_H

#include "memtrace/analyze.h"

typedef struct mt_viewer_options {
    const char *host;        /* numeric address to bind; NULL: 127.0.0.1 */
    int port;                /* 0: any free port */
    int port_tries;          /* how many consecutive ports to try (>= 1) */
    const char *file;        /* the trace's file name, for the info panel */
    double load_seconds;     /* how long loading took, for the info panel */
    const mt_plumbing *plumbing; /* allocation plumbing to skip (NULL: raw stacks) */
    const char *const *allow_hosts;  /* extra names for Host/Origin (NULL-terminated) or NULL */
    size_t memory;           /* memory budget for answering requests, bytes;
                                0: MT_VIEWER_DEFAULT_MEMORY */
    const char *const *trace_files; /* a model of several traces (--merge): the
                                       files, whose .rss are joined (mt_rss_load_many);
                                       NULL: file's own .rss */
    size_t n_trace_files;
} mt_viewer_options;

#define MT_VIEWER_DEFAULT_MEMORY ((size_t)1 << 30)

/* Serve the model until SIGINT or SIGTERM. Prints the URL on stdout.
 * Returns 0, or 1 after printing an error (prefixed with prog) to stderr. */
int mt_viewer_serve(const mt_model *m, const mt_viewer_options *opts, const char *prog);

/* How mt_viewer_serve_file loads opts->file. */
typedef struct mt_viewer_load {
    int folded;                  /* 1: a big trace, served from folded models
                                    (docs/viewer.md, "Big traces") */
    int no_index;                /* big traces: no allocation index (each
                                    filter reads the trace again) */
    mt_progress_fn on_progress;  /* called from the loading thread; may be NULL */
    void *progress_ctx;
    /* called from the loading thread once loaded (m) or failed (m NULL,
     * error set; the server then stops and returns 1); may be NULL */
    void (*on_loaded)(void *ctx, const mt_model *m, double seconds, const char *error);
} mt_viewer_load;

/* Listen first, then load the trace opts->file while the server answers
 * /api/status (the page shows a progress bar); serve it until SIGINT or
 * SIGTERM. Returns as mt_viewer_serve (1 also when loading failed, its
 * error printed). */
int mt_viewer_serve_file(const mt_viewer_options *opts, const mt_viewer_load *load,
                         const char *prog);

#endif
