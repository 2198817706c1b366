/*
 * got.h - rebinding one loaded module's calls to a few named functions by
 * writing new targets into its GOT slots (its R_X86_64_JUMP_SLOT and
 * R_X86_64_GLOB_DAT relocations that name them). Used on libraries the
 * recorder loads privately (libunwind), never on the program's modules.
 */
#ifndef MT_RECORD_GOT_H
#define MT_RECORD_GOT_H

#include <stddef.h>

#include "thread.h"

/* For each i < n, points the module's slots for names[i] at targets[i]
 * (a read-only RELRO page is made writable for the write and read-only
 * again). handle: from dlopen. Returns the number of slots written. */
MT_HIDDEN int mtr_got_rebind(void *handle, const char *const *names, void *const *targets,
                             size_t n);

#endif
