/*
 * check.h - MT_ASSERT(cond): an invariant the code relies on, checked in
 * builds made with MT_CHECKS=1 (`make CHECKS=1`, every build `make test`
 * makes: the plain one and the sanitizers') and compiled out otherwise
 * (the release build, `make`, what the packages ship): there the condition
 * is not evaluated, only type-checked.
 *
 * A failed assertion writes "memtrace: assertion failed: FILE:LINE: COND"
 * to stderr with write(2) from a buffer on the stack, then calls abort():
 * no stdio, no allocation, no lock, so it is safe anywhere in the recorder
 * (in a signal handler, under the recorder's lock, inside malloc).
 * Assert what the code guarantees itself, never what input may break: bad
 * input gets an error, not an assertion.
 * Header only.
 */
#ifndef MT_COMMON_CHECK_H
#define MT_COMMON_CHECK_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef MT_CHECKS
#define MT_CHECKS 0
#endif

/* Appends s to buf[*n..cap) (truncating). */
static inline void mt_check_put_(char *buf, size_t *n, size_t cap, const char *s)
{
    while (*s && *n < cap)
        buf[(*n)++] = *s++;
}

__attribute__((noreturn, cold, unused)) static void mt_assert_fail(const char *file, int line,
                                                                    const char *cond)
{
    char buf[512], num[16];
    size_t n = 0, k = 0;
    unsigned v = line > 0 ? (unsigned)line : 0;
    do
        num[k++] = (char)('0' + v % 10);
    while ((v /= 10) != 0 && k < sizeof num);
    mt_check_put_(buf, &n, sizeof buf - 1, "memtrace: assertion failed: ");
    mt_check_put_(buf, &n, sizeof buf - 1, file);
    mt_check_put_(buf, &n, sizeof buf - 1, ":");
    while (k > 0 && n < sizeof buf - 1)
        buf[n++] = num[--k];
    mt_check_put_(buf, &n, sizeof buf - 1, ": ");
    mt_check_put_(buf, &n, sizeof buf - 1, cond);
    buf[n++] = '\n';
    for (size_t off = 0; off < n;) {
        ssize_t w = write(2, buf + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;   /* a closed stderr: the abort below says enough */
        off += (size_t)w;
    }
    abort();
}

#if MT_CHECKS
#define MT_ASSERT(cond) \
    (__builtin_expect(!!(cond), 1) ? (void)0 : mt_assert_fail(__FILE__, __LINE__, #cond))
#else
#define MT_ASSERT(cond) ((void)sizeof(!(cond)))
#endif

#endif
