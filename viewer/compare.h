/*
 * compare.h - the viewer's compare mode (compare.c): two traces, or two
 * windows of one, served with the compare page (web/compare.html).
 */
#ifndef MT_VIEWER_COMPARE_H
#define MT_VIEWER_COMPARE_H

#include "viewer.h"

typedef struct mt_viewer_compare_options {
    const char *base_file;   /* name of the base side (opts->file names the new one) */
    const char *a, *b;       /* one trace: the windows shown first (may be NULL) */
} mt_viewer_compare_options;

/* Serve base against new_ (the same model for two windows of one trace)
 * until SIGINT or SIGTERM. Prints the URL of the compare page on stdout.
 * Returns 0, or 1 after printing an error to stderr. */
int mt_viewer_serve_compare(const mt_model *base, const mt_model *new_,
                            const mt_viewer_compare_options *co,
                            const mt_viewer_options *opts, const char *prog);

#endif
