/*
 * recconf.h - the recorder's configuration as it crosses into the
 * profiled process, in one form with one parser and one validation:
 * which file, the sampling rate, the stack depth, how stacks are
 * unwound, and whether blocks get leak verdicts.
 *
 * Each setting has a key and an environment variable (docs/recorder.md):
 *     file    MEMTRACE           the trace (attach: an absolute path)
 *     rate    MEMTRACE_RATE      probability per byte, in (0, 1]
 *     depth   MEMTRACE_DEPTH     frames per call stack, in [1, 1024]
 *     unwind  MEMTRACE_UNWIND    fp, dwarf or auto
 *     leaks   MEMTRACE_LEAKS     1: leak verdicts (TRACE.leaks); 0: none
 * 'memtrace run' passes them as those variables; 'memtrace attach' as one
 * text, "rate=R depth=N unwind=M leaks=1 file=PATH" (each key optional
 * but file, which comes last and runs to the end: a path may hold
 * spaces), that memtrace_attach_start parses; a recording started by
 * 'memtrace ctl' takes the configuration its process was started with.
 * Every value, wherever it comes from, is read by mt_recconf_set.
 *
 * Header only and allocation-free: the recorder parses with it inside the
 * profiled program, the CLI validates its options and writes the text
 * with it.
 */
#ifndef MEMTRACE_COMMON_RECCONF_H
#define MEMTRACE_COMMON_RECCONF_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/record.h"

#define MT_RECCONF_DEPTH_DEFAULT 128
#define MT_RECCONF_DEPTH_MAX 1024

/* How call stacks are captured; 0: the default (dwarf). */
enum { MT_UNWIND_DEFAULT = 0, MT_UNWIND_FP, MT_UNWIND_DWARF, MT_UNWIND_AUTO };

typedef struct mt_recconf {
    double rate;        /* probability per byte; 0: MEMTRACE_DEFAULT_RATE */
    int depth;          /* frames per call stack; 0: MT_RECCONF_DEPTH_DEFAULT */
    int unwind;         /* MT_UNWIND_* */
    int leaks;          /* leak verdicts at the end of the recording */
    const char *file;   /* the trace; points into what it was read from */
} mt_recconf;

/* The settings, in the order the text form writes them. */
enum mt_recconf_key { MT_RC_RATE, MT_RC_DEPTH, MT_RC_UNWIND, MT_RC_LEAKS, MT_RC_FILE, MT_RC_KEYS };

/* A key's name in the text form. */
static inline const char *mt_recconf_name(enum mt_recconf_key k)
{
    return k == MT_RC_RATE ? "rate" : k == MT_RC_DEPTH ? "depth" : k == MT_RC_UNWIND ? "unwind"
         : k == MT_RC_LEAKS ? "leaks" : "file";
}

/* A key's environment variable. */
static inline const char *mt_recconf_env(enum mt_recconf_key k)
{
    return k == MT_RC_RATE ? "MEMTRACE_RATE" : k == MT_RC_DEPTH ? "MEMTRACE_DEPTH"
         : k == MT_RC_UNWIND ? "MEMTRACE_UNWIND" : k == MT_RC_LEAKS ? "MEMTRACE_LEAKS"
         : "MEMTRACE";
}

/* What a key's value must be, for messages ("KEY=VALUE: expected ..."). */
static inline const char *mt_recconf_expected(enum mt_recconf_key k)
{
    return k == MT_RC_RATE    ? "a probability per byte in (0, 1]"
         : k == MT_RC_DEPTH   ? "a number of frames per call stack in [1, 1024]"
         : k == MT_RC_UNWIND  ? "fp, dwarf or auto"
         : k == MT_RC_LEAKS   ? "1 (leak verdicts) or 0"
                              : "a file name";
}

/* Is r a sampling rate: a probability per byte in (0, 1]? */
static inline int mt_recconf_rate_ok(double r)
{
    return r > 0 && r <= 1;
}

/* s, whole, as a rate: 0 and *out, or -1. */
static inline int mt_recconf_rate(const char *s, double *out)
{
    char *end;
    double r = strtod(s, &end);
    if (end == s || *end || !mt_recconf_rate_ok(r))
        return -1;
    *out = r;
    return 0;
}

/* s, whole, as a depth in [1, MT_RECCONF_DEPTH_MAX]: 0 and *out, or -1. */
static inline int mt_recconf_depth(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < 1 || v > MT_RECCONF_DEPTH_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

/* "fp", "dwarf", "auto": MT_UNWIND_*, or -1. */
static inline int mt_recconf_unwind(const char *s)
{
    return !strcmp(s, "fp") ? MT_UNWIND_FP : !strcmp(s, "dwarf") ? MT_UNWIND_DWARF
         : !strcmp(s, "auto") ? MT_UNWIND_AUTO : -1;
}

/* The name of an unwind mode. */
static inline const char *mt_recconf_unwind_name(int mode)
{
    return mode == MT_UNWIND_FP ? "fp" : mode == MT_UNWIND_AUTO ? "auto" : "dwarf";
}

/* Sets key k from its value v (as an environment variable or the text
 * form gives it; for file, v is kept, not copied). leaks: "0" is off,
 * any other value on, as MEMTRACE_LEAKS has always been read. 0, or -1
 * when v is not what mt_recconf_expected(k) says (c unchanged). */
static inline int mt_recconf_set(mt_recconf *c, enum mt_recconf_key k, const char *v)
{
    int u;
    switch (k) {
    case MT_RC_RATE: return mt_recconf_rate(v, &c->rate);
    case MT_RC_DEPTH: return mt_recconf_depth(v, &c->depth);
    case MT_RC_UNWIND:
        if ((u = mt_recconf_unwind(v)) < 0)
            return -1;
        c->unwind = u;
        return 0;
    case MT_RC_LEAKS: c->leaks = strcmp(v, "0") != 0; return 0;
    case MT_RC_FILE:
        if (!*v)
            return -1;
        c->file = v;
        return 0;
    default: return -1;
    }
}

/* Reads the text form into c (zeroed first; c->file points into text).
 * 0, or -1 with why (what was wrong, cap bytes at most): an unknown key,
 * a bad value, no file. */
static inline int mt_recconf_parse(mt_recconf *c, const char *text, char *why, size_t cap)
{
    memset(c, 0, sizeof *c);
    const char *s = text;
    while (*s) {
        const char *eq = strchr(s, '=');
        const char *sp = strchr(s, ' ');
        if (!eq || (sp && sp < eq)) {
            snprintf(why, cap, "'%.40s': expected KEY=VALUE", s);
            return -1;
        }
        int k = -1;
        for (int i = 0; i < MT_RC_KEYS; i++) {
            const char *n = mt_recconf_name((enum mt_recconf_key)i);
            if (strlen(n) == (size_t)(eq - s) && !strncmp(s, n, (size_t)(eq - s)))
                k = i;
        }
        if (k < 0) {
            snprintf(why, cap, "unknown key '%.*s'", (int)(eq - s < 40 ? eq - s : 40), s);
            return -1;
        }
        if (k == MT_RC_FILE)   /* the rest */
            return mt_recconf_set(c, MT_RC_FILE, eq + 1) == 0
                       ? 0 : (snprintf(why, cap, "file=: expected a file name"), -1);
        char v[64];
        size_t n = sp ? (size_t)(sp - eq - 1) : strlen(eq + 1);
        if (n >= sizeof v) {
            snprintf(why, cap, "%s: value too long", mt_recconf_name((enum mt_recconf_key)k));
            return -1;
        }
        memcpy(v, eq + 1, n);
        v[n] = 0;
        if (mt_recconf_set(c, (enum mt_recconf_key)k, v) != 0) {
            snprintf(why, cap, "%s=%s: expected %s", mt_recconf_name((enum mt_recconf_key)k), v,
                     mt_recconf_expected((enum mt_recconf_key)k));
            return -1;
        }
        s = sp ? sp + 1 : eq + 1 + n;
    }
    snprintf(why, cap, "no file=");
    return -1;
}

/* Writes c in the text form (the settings that differ from their
 * defaults, then file). The length, or -1 if it does not fit in cap. */
static inline int mt_recconf_format(char *out, size_t cap, const mt_recconf *c)
{
    char depth[32] = "", rate[48] = "";
    if (c->rate)
        snprintf(rate, sizeof rate, "rate=%.17g ", c->rate);
    if (c->depth)
        snprintf(depth, sizeof depth, "depth=%d ", c->depth);
    int len = snprintf(out, cap, "%s%s%s%s%s%s%sfile=%s", rate, depth,
                       c->unwind ? "unwind=" : "", c->unwind ? mt_recconf_unwind_name(c->unwind) : "",
                       c->unwind ? " " : "", c->leaks ? "leaks=1" : "", c->leaks ? " " : "",
                       c->file ? c->file : "");
    return len < 0 || (size_t)len >= cap ? -1 : len;
}

#endif
