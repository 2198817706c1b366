/*
 * sort.h - the recorder's sort: a heapsort in place, for its writer thread
 * (carry.c's live blocks, modules.c's segments). The C library's qsort may
 * take a scratch copy from the program's allocator (glibc before 2.37 does
 * for arrays above 1 KiB); this one allocates nothing. Not stable.
 */
#ifndef MT_RECORD_SORT_H
#define MT_RECORD_SORT_H

#include <stddef.h>

static inline void mtr_sort_swap_(char *a, char *b, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        char t = a[i];
        a[i] = b[i];
        b[i] = t;
    }
}

/* Element i of the heap base[0 .. n) sifted down to its place. */
static inline void mtr_sort_sift_(char *base, size_t i, size_t n, size_t size,
                                  int (*cmp)(const void *, const void *))
{
    for (;;) {
        size_t big = i, l = 2 * i + 1, r = l + 1;
        if (l < n && cmp(base + l * size, base + big * size) > 0)
            big = l;
        if (r < n && cmp(base + r * size, base + big * size) > 0)
            big = r;
        if (big == i)
            return;
        mtr_sort_swap_(base + i * size, base + big * size, size);
        i = big;
    }
}

/* As qsort(base, n, size, cmp). */
static inline void mtr_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    char *b = base;
    if (n < 2)
        return;
    for (size_t i = n / 2; i-- > 0;)
        mtr_sort_sift_(b, i, n, size, cmp);
    for (size_t end = n - 1; end > 0; end--) {
        mtr_sort_swap_(b, b + end * size, size);
        mtr_sort_sift_(b, 0, end, size, cmp);
    }
}

#endif
