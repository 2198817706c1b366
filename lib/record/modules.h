/*
 * modules.h - the table of the running process's loaded modules, which
 * turns its return addresses into raw, module-relative frames for the
 * trace writer's location resolver (it lists modules; it does not
 * symbolize): the
 * module's path as file name, "module+0xoffset" as function name, no line,
 * and an 18-bit fingerprint of the module (build-id, else file size) in the
 * location's character columns. `memtrace symbolize` (lib/symbolize/) later
 * turns them into functions, files, lines and inlined frames, outside the
 * profiled process. Runs only in the tracer's writer context, never in an
 * allocation path; uses nothing but the C library and the dynamic loader's
 * dl_iterate_phdr.
 */
#ifndef MT_RECORD_MODULES_H
#define MT_RECORD_MODULES_H

#include "memtrace/trace.h"
#include "thread.h"

typedef struct mtr_modules mtr_modules;

MT_HIDDEN mtr_modules *mtr_modules_new(void);
/* An mt_location_resolver: ctx is the module table, code a return address.
 * Gives one raw location, or -1 for an address outside every module. */
MT_HIDDEN int mtr_modules_resolve(void *ctx, mt_location_code code,
                             const mt_location **locs, size_t *n);
/* frames (n return addresses, innermost first) -> out (n codes, caller
 * first): an address keeps its value as code until its range is unloaded;
 * then it gets codes of its own (modules.c, "Codes"). ctx may be NULL. */
MT_HIDDEN void mtr_modules_codes(mtr_modules *s, const uint64_t *frames, size_t n, uint64_t *out);
/* exec.c's dlclose, after the real one: a module may be gone. */
MT_HIDDEN void mtr_modules_unloaded(void);

#endif
