/*
 * api.h - the viewer's JSON API: turns /api/<endpoint>?... requests into
 * analysis-engine queries and their answers into JSON. docs/viewer.md lists
 * the endpoints and their fields.
 */
#ifndef MT_VIEWER_API_H
#define MT_VIEWER_API_H

#include "memtrace/analyze.h"
#include "server.h"

typedef struct vapi vapi;

/* With the default memory budget (MT_VIEWER_DEFAULT_MEMORY, see cache.h). */
vapi *vapi_new(const mt_model *m, const char *file, double load_seconds);
/* The budget for caches and requests in flight beyond the model, in bytes
 * (0: no limit). Call before serving. */
void vapi_set_budget(vapi *a, size_t budget);
void vapi_free(vapi *a);
/* Selections skip this allocation plumbing (not owned; NULL: none). */
void vapi_set_plumbing(vapi *a, const mt_plumbing *p);
/* Start answering the first page's questions in the background. */
void vapi_warm_up(vapi *a);
/* The server's callback (ctx is the vapi). */
void vapi_handle(void *ctx, const char *endpoint, const vreq *req, vresp *resp);

#endif
