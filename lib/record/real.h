/*
 * real.h - the allocator underneath the recorder: the one the program would
 * have used without it. That is whatever defines malloc after us in the
 * program's symbol lookup order: glibc, or jemalloc, tcmalloc, mimalloc ...
 * linked into the program or preloaded after the recorder. Every block the
 * program gets, sampled or not, comes from it, through the very function the
 * program called (memalign from memalign, pvalloc from pvalloc), so its usable
 * size, alignment and realloc behaviour are the allocator's own.
 *
 * The functions are found with dlsym(RTLD_NEXT) on first use (or in the
 * recorder's constructor, whichever comes first). dlsym may itself allocate:
 * while a thread resolves, its own allocations come from a small static boot
 * buffer that is never handed to the real allocator (mtr_real_in_boot).
 * An entry point the allocator does not define (jemalloc has no pvalloc, old
 * glibcs no free_sized) is emulated with the ones it does define, never
 * taken from another allocator: a block must be freed by the allocator that
 * made it.
 */
#ifndef MT_RECORD_REAL_H
#define MT_RECORD_REAL_H

#include <stddef.h>
#include <stdint.h>

#include "thread.h"

struct mtr_allocator {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    void *(*memalign)(size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    size_t (*usable_size)(void *);
    void (*free_sized)(void *, size_t);
    void (*free_aligned_sized)(void *, size_t, size_t);
    /* The allocator's own mapped image when it is not the C library (0, 0
     * for glibc): the mappings it makes for its heap are malloc memory, not
     * the program's (mmap.c). */
    uintptr_t image_lo, image_hi;
};

/* Starts as boot stubs that resolve on first call. */
extern struct mtr_allocator mtr_real MT_HIDDEN;

/* Resolve now (idempotent; the recorder's constructor calls it). */
MT_HIDDEN void mtr_real_resolve(void);

/* Resolve again from the global scope (the recorder was loaded by dlopen:
 * attach.c). */
MT_HIDDEN void mtr_real_resolve_global(void);

/* 0 if every function in mtr_real is a definition (defined.h), not a PLT
 * stub that would call back through a slot attach redirects; else -1. */
MT_HIDDEN int mtr_real_checked(void);

/* 1 if p is a block of the boot buffer (never to reach the allocator). */
MT_HIDDEN int mtr_real_in_boot(const void *p);
/* The size asked for a boot block. */
MT_HIDDEN size_t mtr_real_boot_size(const void *p);
/* realloc of a boot block: a new block of the allocator, the boot block
 * left as it is. */
MT_HIDDEN void *mtr_real_boot_realloc(void *p, size_t size);

/* 0 if the program's malloc is not the recorder's (another malloc comes
 * first in the lookup order, e.g. LD_PRELOAD=libjemalloc.so:libmemtrace.so):
 * then nothing can be sampled. Defined in interpose.c. */
MT_HIDDEN int mtr_malloc_is_ours(void);

/* Once the allocator is resolved (the recorder's constructor): whether
 * operator new and delete may run malloc's and free's bodies directly
 * (interpose.c). */
MT_HIDDEN void mtr_interpose_init(void);


#endif
