/*
 * endpoints.h - the viewer's API endpoints (endpoints.c), called by the
 * dispatcher in api.c with the selection for the request's filter.
 */
#ifndef MT_VIEWER_ENDPOINTS_H
#define MT_VIEWER_ENDPOINTS_H

#include "memtrace/analyze.h"
#include "big.h"
#include "json.h"
#include "server.h"

/* What an endpoint works on. */
typedef struct vctx {
    const mt_model *model;
    const mt_selection *sel;     /* the request's filter applied to the model */
    const char *filter;          /* its canonical text */
    const char *file;            /* the trace's file name */
    double load_seconds;
    const mt_rss *rss;           /* resident memory (FILE.rss), or NULL */
    const vfold *fold;           /* big traces: the filter's fold (sel is of its model) */
    const vfold *base;           /* big traces: the unfiltered fold; NULL: whole model */
    const char *const *warnings; /* the loading's warnings kept (api.h, vapi_warning) */
    size_t n_warnings, n_said;   /* kept, said in all */
} vctx;

/* Each writes its answer into j and returns 1, or fills resp with an error
 * (e.g. 400 for a bad parameter) and returns 0. */
typedef int (*vep_fn)(const vctx *cx, const vreq *req, vjson *j, vresp *resp);

int vep_info(const vctx *cx, const vreq *req, vjson *j, vresp *resp);
int vep_stats(const vctx *cx, const vreq *req, vjson *j, vresp *resp);
int vep_curve(const vctx *cx, const vreq *req, vjson *j, vresp *resp);
int vep_tree(const vctx *cx, const vreq *req, vjson *j, vresp *resp);
int vep_graph(const vctx *cx, const vreq *req, vjson *j, vresp *resp);
int vep_function(const vctx *cx, const vreq *req, vjson *j, vresp *resp);
int vep_hist(const vctx *cx, const vreq *req, vjson *j, vresp *resp);
int vep_hotspots(const vctx *cx, const vreq *req, vjson *j, vresp *resp);
int vep_filter(const vctx *cx, const vreq *req, vjson *j, vresp *resp);
int vep_leaks(const vctx *cx, const vreq *req, vjson *j, vresp *resp);   /* leaksview.c */

/* "id", "name", "short" and "file" of a function in the object being written. */
void vep_put_func(vjson *j, const mt_model *m, mt_func_id f);

#endif
