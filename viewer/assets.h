/*
 * assets.h - the web page's files (everything in viewer/web), compiled into the binary by
 * scripts/embed-assets.sh. The table ends with an entry whose path is NULL.
 */
#ifndef MT_VIEWER_ASSETS_H
#define MT_VIEWER_ASSETS_H

#include <stddef.h>

struct mt_viewer_asset {
    const char *path;            /* "/app.js" */
    const unsigned char *data;   /* NUL-terminated for convenience */
    size_t size;                 /* without the terminating NUL */
};

extern const struct mt_viewer_asset mt_viewer_assets[];

#endif
