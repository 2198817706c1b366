/*
 * names.h - where the qualified name sits in a demangled function name
 * (names.c). Internal.
 */
#ifndef MTA_NAMES_H
#define MTA_NAMES_H

#include <stddef.h>

/* name[start .. start+len) is the qualified name (no return type, no
 * argument list); args is the index of the argument list's '(' (or the
 * end of the qualified name when there is none). */
void mta_name_span(const char *name, size_t *start, size_t *len, size_t *args);

#endif
