/*
 * load.h - the builder's ways in, behind mt_read (read.c), the only public
 * door: a model from one trace file (build.c), from an open reader, or
 * from several traces merged into one stream (merge.c). Internal to
 * lib/analyze (and to its tests, which drive the builder directly).
 */
#ifndef MTA_LOAD_H
#define MTA_LOAD_H

#include "memtrace/analyze.h"

/* Build the model of a trace file (or a pprof profile) in one pass.
 * Returns NULL on failure and, if error is not NULL, a malloc'd
 * "FILE: offset N: reason" to free. opts may be NULL. */
mt_model *mt_model_load(const char *path, const mt_model_options *opts, char **error);
/* Same from an already opened reader, read to its end (the caller closes it). */
mt_model *mt_model_from_reader(mt_reader *r, const mt_model_options *opts, char **error);
/* One model from n traces recorded at one sampling rate, merged by
 * absolute time (compare.h, "Several traces as one"); n == 1 without
 * by_process is mt_model_load. On failure NULL and a malloc'd message in
 * *error. */
mt_model *mt_model_load_many(const char *const *paths, size_t n, int by_process,
                             const mt_model_options *opts, char **error);
/* 1 when the model was built folded (mt_model_options.fold); a caller of
 * mt_read learns it from the request's sinks_fed. */
int mt_model_is_folded(const mt_model *m);

#endif
