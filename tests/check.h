/*
 * check.h - the checks of every C unit test (tests/LAYER/NAME.c): a
 * "PASS: what" line per check passed and "FAIL: what  (file:line:
 * condition)" per check failed, as tests/run.sh reads them; CHECK_QUIET
 * says only the failures (checks made once per event). main returns
 * failures != 0. The shell tests' counterpart is tests/lib.sh.
 */
#ifndef MT_TESTS_CHECK_H
#define MT_TESTS_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int failures;

static inline __attribute__((format(printf, 6, 7))) void
check_line(int ok, int quiet, const char *file, int line, const char *cond, const char *fmt, ...)
{
    if (ok && quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    printf(ok ? "PASS: " : "FAIL: ");
    vprintf(fmt, ap);
    va_end(ap);
    if (ok) {
        printf("\n");
    } else {
        printf("  (%s:%d: %s)\n", file, line, cond);
        failures++;
    }
}

/* The condition is evaluated before the message's arguments, which may
 * show what it set (an error message, a count). */
#define CHECK_AT(quiet, cond, ...)                                              \
    do {                                                                       \
        int check_ok_ = !!(cond);                                              \
        check_line(check_ok_, quiet, __FILE__, __LINE__, #cond, __VA_ARGS__); \
    } while (0)
#define CHECK(cond, ...) CHECK_AT(0, cond, __VA_ARGS__)
#define CHECK_QUIET(cond, ...) CHECK_AT(1, cond, __VA_ARGS__)

#endif
