/*
 * defined.h - where a function is defined in the process's global scope,
 * the way the loader binds a call to it (defined.c). Used when the
 * recorder was loaded by dlopen (attach) and so has no "next" object.
 */
#ifndef MT_RECORD_DEFINED_H
#define MT_RECORD_DEFINED_H

#include "thread.h"

/* The first definition of name in the loaded objects, in load order (the
 * executable, then its libraries as the loader searches them), skipping
 * undefined symbols (an executable built without -fPIE that takes a
 * function's address has an undefined symbol whose value is its own PLT
 * stub: dlsym(RTLD_DEFAULT) returns that stub, which calls through the
 * GOT slot attach redirects) and every copy of the recorder. NULL if no
 * object defines it. */
MT_HIDDEN void *mtr_global_definition(const char *name);

/* 1 if f is the address of a symbol some loaded object defines (not a PLT
 * stub, not an undefined symbol's canonical address), else 0. */
MT_HIDDEN int mtr_is_definition(const void *f);

#endif
