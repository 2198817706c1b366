/*
 * real.h - the allocator underneath the recorder.
 *
 * On glibc the recorder calls glibc's exported __libc_malloc & co directly:
 * no dlsym at start-up (dlsym itself allocates). Under ThreadSanitizer the
 * next allocator is TSan's own interceptor, found with dlsym(RTLD_NEXT); a
 * small static buffer serves the allocations dlsym makes meanwhile.
 */
#ifndef MT_RECORD_REAL_H
#define MT_RECORD_REAL_H

#include <stddef.h>

#include "thread.h"

#if !defined(__SANITIZE_THREAD__) && !defined(MT_UNDER_TSAN)

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

#define mtr_real_malloc __libc_malloc
#define mtr_real_calloc __libc_calloc
#define mtr_real_realloc __libc_realloc
#define mtr_real_free __libc_free
#define mtr_real_memalign __libc_memalign
MT_HIDDEN size_t mtr_real_usable_size(void *p);

#else

MT_HIDDEN void *mtr_real_malloc(size_t);
MT_HIDDEN void *mtr_real_calloc(size_t, size_t);
MT_HIDDEN void *mtr_real_realloc(void *, size_t);
MT_HIDDEN void mtr_real_free(void *);
MT_HIDDEN void *mtr_real_memalign(size_t, size_t);
MT_HIDDEN size_t mtr_real_usable_size(void *p);

#endif
#endif
