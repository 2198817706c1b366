/*
 * symbolize.h - turning return addresses of the running process into
 * source locations with libdw, for the trace writer's location resolver.
 * Runs only in the tracer's writer context, never in an allocation path.
 */
#ifndef MT_RECORD_SYMBOLIZE_H
#define MT_RECORD_SYMBOLIZE_H

#include "memtrace/trace.h"
#include "thread.h"

typedef struct mtr_symbolizer mtr_symbolizer;

MT_HIDDEN mtr_symbolizer *mtr_sym_new(void);
/* An mt_location_resolver: ctx is the symbolizer, code a return address.
 * Locations are listed outermost first (inlined frames). */
MT_HIDDEN int mtr_sym_resolve(void *ctx, mt_location_code code,
                             const mt_location **locs, size_t *n);

#endif
