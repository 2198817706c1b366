/*
 * cache.h - the viewer's memory: the caches of selections and finished
 * answers, and the memory budget that heavy requests share (cache.c).
 *
 * Everything the server keeps or computes beyond the loaded model counts
 * against one budget in bytes (`memtrace view --memory`): cached selections
 * and answers (estimated from their sizes) and the requests being answered
 * (estimated from the model's size before they start). A request that does
 * not fit waits for others to finish (first come, first served), idle cache
 * entries being given back first; after VCACHE_WAIT_SECONDS, or when too many wait already, it is
 * refused (the server answers 503 with Retry-After). A request always runs
 * when no other one does, whatever its estimate, and a small one (info)
 * never waits.
 */
#ifndef MT_VIEWER_CACHE_H
#define MT_VIEWER_CACHE_H

#include <stddef.h>

#include "memtrace/analyze.h"

#define VCACHE_SEL_SLOTS 8          /* selections kept */
#define VCACHE_ANSWER_SLOTS 64      /* answers kept */
#define VCACHE_WAIT_SECONDS 20      /* longest wait for room before 503 */
#define VCACHE_MAX_WAITING 64       /* more waiting requests: 503 at once */
#define VCACHE_RETRY_AFTER 5        /* seconds, in the 503 answer */

typedef struct vcache vcache;

/* budget: bytes; 0 = no limit. */
vcache *vcache_new(const mt_model *m, size_t budget);
void vcache_free(vcache *c);

/* ---- selections: shared, reference-counted, built once per filter ---- */
typedef struct vcache_sel vcache_sel;
/* Builds the selection for a filter, outside the cache's lock; NULL when
 * out of memory or, with a malloc'd *err, when the filter cannot be
 * applied (e.g. a regex over one of its limits). It may hand over in *aux
 * something kept and freed with the selection (vcache_set_aux_free; the
 * filter outlives it), of *aux_bytes bytes (counted in the budget). */
typedef mt_selection *(*vcache_build_fn)(void *ctx, const mt_filter *f, void **aux,
                                         size_t *aux_bytes, char **err);
/* Find or build (with build) the selection for a parsed filter whose key is
 * key: its canonical text and whatever else changes the selection (both
 * handed over). NULL when out of memory or when build failed (*err). */
vcache_sel *vcache_sel_get(vcache *c, mt_filter *f, char *key, vcache_build_fn build,
                           void *ctx, char **err);
const mt_selection *vcache_sel_selection(const vcache_sel *e);
const char *vcache_sel_key(const vcache_sel *e);
void *vcache_sel_aux(const vcache_sel *e);
/* How the builders' aux are freed (before serving). */
void vcache_set_aux_free(vcache *c, void (*aux_free)(void *));
void vcache_sel_release(vcache *c, vcache_sel *e);

/* ---- answers: finished JSON bodies by endpoint and parameters ---- */
/* A kept answer for key: a malloc'd copy of its body. When there is none,
 * returns NULL and, if there is room, marks key pending for this request
 * (*claimed = 1): the request must then call vcache_answer_fill, and other
 * requests for the same key wait for it rather than compute it again. */
char *vcache_answer_claim(vcache *c, const char *key, size_t *len, int *claimed);
/* Store the answer of a claimed key (body NULL: none, e.g. an error). */
void vcache_answer_fill(vcache *c, const char *key, const char *body, size_t len);

/* ---- the budget ---- */
/* Reserve estimate bytes for a request, waiting for room if needed.
 * Returns 0 (call vcache_done with the same estimate when finished), or -1
 * when the server is too busy: *why gets a static reason. */
int vcache_admit(vcache *c, size_t estimate, const char **why);
void vcache_done(vcache *c, size_t estimate);
size_t vcache_budget(const vcache *c);
/* Change the budget (0: none); before serving. */
void vcache_set_budget(vcache *c, size_t budget);

#endif
