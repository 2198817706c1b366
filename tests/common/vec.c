/*
 * vec.c - unit test of lib/common/vec.h: room for one more element, the
 * capacity doubling from its first size, the contents kept; room for at
 * least N (MT_VEC_RESERVE), nothing moved when it is there, a size past
 * memory refused with the array untouched.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "vec.h"

int main(void)
{
    int failures = 0;
    long *v = NULL;
    size_t n = 0, cap = 0, caps_seen = 0, last_cap = 0;
    int rc = 0;
    for (long i = 0; i < 1000; i++) {
        rc |= MT_VEC_ROOM(v, n, cap, 8);
        v[n++] = i * i;
        if (cap != last_cap) {
            caps_seen++;
            last_cap = cap;
        }
    }
    int ok = rc == 0 && cap == 1024 && caps_seen == 8;   /* 8, 16, ..., 1024 */
    printf("%s: 1000 elements: capacity 8 doubled to 1024 (%zu, %zu sizes)\n",
           ok ? "PASS" : "FAIL", cap, caps_seen);
    failures += !ok;
    ok = 1;
    for (size_t i = 0; i < n; i++)
        ok &= v[i] == (long)(i * i);
    printf("%s: contents kept across growth\n", ok ? "PASS" : "FAIL");
    failures += !ok;
    free(v);

    /* MT_VEC_RESERVE: room for at least need, doubling from first */
    long *w = NULL;
    size_t wcap = 0;
    rc = MT_VEC_RESERVE(w, 1000, wcap, 16);
    ok = rc == 0 && wcap == 1024;   /* 16 doubled six times */
    printf("%s: room for 1000 from nothing: capacity 16 doubled to 1024 (%zu)\n", ok ? "PASS" : "FAIL",
           wcap);
    failures += !ok;
    long *before = w;
    rc = MT_VEC_RESERVE(w, 1024, wcap, 16);
    ok = rc == 0 && wcap == 1024 && w == before;
    printf("%s: room already there: nothing moves\n", ok ? "PASS" : "FAIL");
    failures += !ok;
    rc = MT_VEC_RESERVE(w, SIZE_MAX / 4, wcap, 16);
    ok = rc == -1 && wcap == 1024 && w == before;
    printf("%s: more than memory can hold: -1, the array untouched\n", ok ? "PASS" : "FAIL");
    failures += !ok;
    free(w);
    return failures ? 1 : 0;
}
