/*
 * check.h - the checks of the codec's unit tests: a "PASS: what" line per
 * check passed and "FAIL: what  (file:line: condition)" per check failed,
 * as tests/run.sh reads them; CHECK_QUIET says only the failures (checks
 * made once per event). main returns failures != 0.
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

#define CHECK(cond, ...) check_line(!!(cond), 0, __FILE__, __LINE__, #cond, __VA_ARGS__)
#define CHECK_QUIET(cond, ...) check_line(!!(cond), 1, __FILE__, __LINE__, #cond, __VA_ARGS__)

#endif
