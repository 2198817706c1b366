/*
 * profile.h - a pprof profile read as a folded model (profile.c), for
 * mt_model_load. Internal to lib/analyze.
 */
#ifndef MTA_PROFILE_H
#define MTA_PROFILE_H

#include "memtrace/analyze.h"

/* The folded model of the pprof profile at path (opts->fold must be set:
 * a profile holds per-stack costs only), or NULL with *error set. */
mt_model *mta_profile_load(const char *path, const mt_model_options *opts, char **error);

#endif
