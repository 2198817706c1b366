/*
 * control_proto.h - what the recorder and 'memtrace ctl' agree on to switch
 * a dormant recorder on and off: the control channel 'memtrace ctl' writes
 * its requests into (a memfd only the recorder reads, below), the signal
 * a plain kill toggles recording with (MEMTRACE_SIGNAL, default SIGUSR2;
 * sigqueue's value may say START or STOP) and how a signal is named.
 * Header only: the CLI includes it without linking any recorder code.
 */
#ifndef MEMTRACE_CONTROL_PROTO_H
#define MEMTRACE_CONTROL_PROTO_H

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "units.h"

#define MT_CTL_DEFAULT_SIGNAL SIGUSR2
#define MT_CTL_DEFAULT_SIGNAL_NAME "USR2"

enum { MT_CTL_TOGGLE = 0, MT_CTL_START = 1, MT_CTL_STOP = 2, MT_CTL_SCAN = 3 };

/* The control channel: a memfd (memfd_create(MT_CTL_CHANNEL_NAME,
 * MFD_CLOEXEC), MT_CTL_CHANNEL_SIZE bytes) that the recorder creates when
 * control is asked for and maps shared; its control thread reads it every
 * 100 ms. 'memtrace ctl' finds it among /proc/PID/fd (its link reads
 * MT_CTL_CHANNEL_LINK), opens it there (which only the process's owner or
 * root may: the same rule as for kill) and maps it too. A request never
 * reaches the program: no signal, nothing its handlers could see. Fields
 * are 64-bit words read and written atomically. */
#define MT_CTL_CHANNEL_NAME "memtrace-ctl"
#define MT_CTL_CHANNEL_LINK "/memfd:" MT_CTL_CHANNEL_NAME " (deleted)"
#define MT_CTL_CHANNEL_SIZE 4096
#define MT_CTL_CHANNEL_MAGIC 0x314c54434d54454dull   /* "MEMTCTL1" */
typedef struct mt_ctl_channel {
    uint64_t magic;          /* MT_CTL_CHANNEL_MAGIC once set up */
    uint64_t request;        /* by ctl: (sequence << 8) | MT_CTL_START, _STOP or _SCAN */
    uint64_t done;           /* by the recorder: the sequence last acted on */
    uint64_t recording;      /* by the recorder: 1 while a recording is under way */
    uint64_t scanned;        /* by the recorder: the sequence of the last scan that wrote
                              * its verdicts (before done says it acted) */
    uint64_t unscanned;      /* by the recorder: the sequence of the last scan that gave
                              * none, why_unscanned saying why (before done) */
    char why_unscanned[512]; /* by the recorder: one line, NUL-terminated */
} mt_ctl_channel;

/* "USR2", "SIGUSR2", "RTMIN+3", "12": the signal number, or 0 if s names
 * no signal a program may use for this (not KILL, STOP, SEGV and the like,
 * whose handlers matter to the program or cannot be caught). */
static inline int mt_ctl_signal_number(const char *s)
{
    static const struct { const char *name; int sig; } names[] = {
        { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "HUP", SIGHUP },
        { "PROF", SIGPROF }, { "URG", SIGURG }, { "WINCH", SIGWINCH },
        { "PWR", SIGPWR }, { "VTALRM", SIGVTALRM }, { "TTIN", SIGTTIN },
        { "TTOU", SIGTTOU },
    };
    if (!s || !*s)
        return 0;
    if (strncasecmp(s, "SIG", 3) == 0)
        s += 3;
    char *end;
    int sig = 0;
    /* (numbers are checked against the range of signals before any
     * arithmetic or narrowing: "RTMIN+4294967297" is no RTMIN+1) */
    if (*s >= '0' && *s <= '9') {
        long v = strtol(s, &end, 10);
        sig = *end || v < 1 || v > SIGRTMAX ? 0 : (int)v;
    } else if (strncasecmp(s, "RTMIN", 5) == 0) {
        long off = 0;
        if (s[5] == '+') {
            if (s[6] < '0' || s[6] > '9')
                return 0;
            off = strtol(s + 6, &end, 10);
            if (end == s + 6 || *end || off > SIGRTMAX - SIGRTMIN)
                return 0;
        } else if (s[5]) {
            return 0;
        }
        sig = SIGRTMIN + (int)off;
    } else {
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strcasecmp(s, names[i].name) == 0)
                sig = names[i].sig;
    }
    if (sig == SIGUSR1 || sig == SIGUSR2 || sig == SIGHUP || sig == SIGPROF || sig == SIGURG ||
        sig == SIGWINCH || sig == SIGPWR || sig == SIGVTALRM || sig == SIGTTIN ||
        sig == SIGTTOU || (sig >= SIGRTMIN && sig <= SIGRTMAX))
        return sig;
    return 0;
}

/* Rotation of long recordings (MEMTRACE_ROTATE_SIZE, MEMTRACE_ROTATE_TIME):
 * the smallest bounds accepted, and the largest size. Sizes and times are
 * read with lib/common/units.h. */
#define MT_ROTATE_MIN_SIZE 65536
#define MT_SIZE_MAX 1000000000000000000ull
#define MT_ROTATE_MIN_MS 1000

/* A size of at least min bytes and at most MT_SIZE_MAX: bytes, or -1. */
static inline long long mt_ctl_size_at_least(const char *s, unsigned long long min)
{
    uint64_t v;
    if (!s || mt_units_size(s, &v) != MT_UNITS_OK || v < min || v > MT_SIZE_MAX)
        return -1;
    return (long long)v;
}

/* A time of at least min_ms milliseconds (a bare number: seconds) and at
 * most 1e15 ms: milliseconds, or -1. */
static inline long long mt_ctl_time_ms_at_least(const char *s, long long min_ms)
{
    uint64_t us;
    if (!s || mt_units_duration(s, MT_US_PER_S, &us) != MT_UNITS_OK)
        return -1;
    long long ms = (long long)(us / 1000);
    return ms < min_ms || ms > 1000000000000000ll ? -1 : ms;
}

#endif
