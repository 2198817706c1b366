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

struct vfold;

/* With the default memory budget (MT_VIEWER_DEFAULT_MEMORY, see cache.h). */
vapi *vapi_new(const mt_model *m, const char *file, double load_seconds);
/* The same before the model is there: /api/status answers how far loading
 * is, other requests wait for vapi_ready (at most VAPI_LOAD_WAIT_SECONDS,
 * then 503) or fail after vapi_failed. */
#define VAPI_LOAD_WAIT_SECONDS 60
#define VAPI_REREADS_SHOWN 8     /* filters being read shown by /api/status */
vapi *vapi_new_loading(const char *file);
void vapi_progress(vapi *a, uint64_t done, uint64_t total);
/* The model is loaded. base: for a big trace, the unfiltered fold whose
 * model m is (filters then read the trace file again, big.h); NULL for a
 * whole model. Neither is owned. Returns 0, or -1 when out of memory. */
int vapi_ready(vapi *a, const mt_model *m, const struct vfold *base, double load_seconds);
void vapi_failed(vapi *a, const char *error);
/* Big traces: the memory a folded read of the trace took at its peak (the
 * live blocks' table, gone once read), reserved by a request that reads it
 * again for a filter; before vapi_ready. */
void vapi_set_reread_bytes(vapi *a, size_t bytes);
/* The budget for caches and requests in flight beyond the model, in bytes
 * (0: no limit). Call before serving. */
void vapi_set_budget(vapi *a, size_t budget);
void vapi_free(vapi *a);
/* Warnings of the loading (the trace's reader, FILE.rss's): vapi_warning,
 * an mt_warning_fn with the vapi as ctx, prints "PROG: warning: MSG" on
 * stderr (PROG as set, default "memtrace view") and keeps the first
 * VAPI_WARNINGS_KEPT for /api/info's "warnings". Only while nothing is
 * answered: before vapi_ready on a vapi loading, before serving on one
 * ready (requests read the list without the lock). */
#define VAPI_WARNINGS_KEPT 64
void vapi_set_prog(vapi *a, const char *prog);
void vapi_warning(void *ctx, const char *msg);
/* Resident memory to show instead of FILE.rss's (owned from now on). */
void vapi_set_rss(vapi *a, mt_rss *rss);
/* Selections skip this allocation plumbing (not owned; NULL: none). */
void vapi_set_plumbing(vapi *a, const mt_plumbing *p);
/* Start answering the first page's questions in the background. */
void vapi_warm_up(vapi *a);
/* Requests answered outside vapi_handle (the compare endpoints, compare.c)
 * count against the same budget: reserve an estimate of what the request
 * will use before it starts, waiting for room as vapi_handle's requests
 * do. Returns 0 (call vapi_release with the same bytes when done), or -1
 * with resp set to the 503 answer (Retry-After) when the server is busy. */
int vapi_reserve(vapi *a, size_t bytes, vresp *resp);
void vapi_release(vapi *a, size_t bytes);
/* What a selection of model m costs, as vapi_handle estimates it: about 80
 * bytes per allocation and 4 per trie node. */
size_t vapi_selection_bytes(const mt_model *m);
/* The server's callback (ctx is the vapi). */
void vapi_handle(void *ctx, const char *endpoint, const vreq *req, vresp *resp);

#endif
