/*
 * own.c - the regions the recorder maps for itself, remembered in a
 * fixed table (no allocation) under a leaf lock, and their resident bytes
 * measured page by page with mincore for the ledger (own.h). Regions are
 * added and removed where the recorder maps and unmaps them: growing a
 * table, never on an allocation's fast path. Adding and removing only try
 * the lock (a short spin, never a sleep): a signal handler that maps memory
 * while its thread was in here must not wait for itself; a region not
 * remembered is only missing from the figure, and one whose memory is gone
 * is skipped (mincore refuses it).
 */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lock.h"
#include "own.h"

#define MAX_REGIONS 512

static struct { uintptr_t lo, len; } regions[MAX_REGIONS];
static int n_regions;
static int lock_word;

/* The lock, if it can be had within a short spin. 1 if taken. */
static int try_lock(void)
{
    for (int i = 0; i < MTR_LOCK_SPINS; i++) {
        int c = 0;
        if (__atomic_compare_exchange_n(&lock_word, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return 1;
        __builtin_ia32_pause();
    }
    return 0;
}

void mtr_own_add(const void *p, size_t len)
{
    if (!p || p == MAP_FAILED || !len || !try_lock())
        return;
    for (int i = 0; i < n_regions; i++)
        if (regions[i].lo == (uintptr_t)p) {   /* told twice (mmap.c and its caller) */
            mtr_unlock(&lock_word);
            return;
        }
    if (n_regions < MAX_REGIONS) {
        regions[n_regions].lo = (uintptr_t)p;
        regions[n_regions].len = len;
        n_regions++;
    }
    mtr_unlock(&lock_word);
}

void mtr_own_del(const void *p)
{
    if (!try_lock())
        return;
    for (int i = 0; i < n_regions; i++)
        if (regions[i].lo == (uintptr_t)p) {
            regions[i] = regions[--n_regions];
            break;
        }
    mtr_unlock(&lock_word);
}

long long mtr_own_resident(long long *mapped)
{
    static unsigned char vec[4096];   /* 16 MiB of pages per call */
    long page = sysconf(_SC_PAGESIZE);
    long long res = 0, span = 0;
    mtr_lock(&lock_word);
    for (int i = 0; i < n_regions; i++) {
        uintptr_t lo = regions[i].lo & ~(uintptr_t)(page - 1);
        uintptr_t hi = regions[i].lo + regions[i].len;
        span += (long long)(hi - lo);
        while (lo < hi) {
            size_t pages = (hi - lo + (uintptr_t)page - 1) / (uintptr_t)page;
            if (pages > sizeof vec)
                pages = sizeof vec;
            if (mincore((void *)lo, pages * (size_t)page, vec) != 0)
                break;   /* unmapped since (a removal that missed the lock) */
            for (size_t k = 0; k < pages; k++)
                res += (vec[k] & 1) ? page : 0;
            lo += pages * (uintptr_t)page;
        }
    }
    mtr_unlock(&lock_word);
    *mapped = span;
    return res;
}

void mtr_own_fork_prepare(void)
{
    mtr_lock(&lock_word);
}

void mtr_own_fork_parent(void)
{
    mtr_unlock(&lock_word);
}

void mtr_own_fork_child(void)
{
    lock_word = 0;   /* held by this thread across fork */
}
