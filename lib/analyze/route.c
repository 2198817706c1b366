/*
 * route.c - the route a read takes when tests or benchmarks force one
 * (mt_read_force: the CLI's global option --route; never the environment),
 * and the threads a pass reads with (mta_read_threads). A leaf of
 * lib/analyze: the planner (read.c), the builder (build.c, buildfold.c)
 * and the scans (scan.c) ask it, and it asks none of them.
 */
#include <sched.h>
#include <string.h>

#include "memtrace/analyze.h"
#include "route.h"

static unsigned forced;

int mt_read_force(const char *spec)
{
    unsigned f = 0;
    const char *p = spec;
    while (p && *p) {
        size_t n = strcspn(p, ",");
        static const struct { const char *name; unsigned flag; } names[] = {
            {"auto", 0},
            {"whole", MT_ROUTE_WHOLE},
            {"one-thread", MT_ROUTE_ONE_THREAD},
            {"two-threads", MT_ROUTE_TWO_THREADS},
            {"qsort", MT_ROUTE_QSORT},
        };
        size_t i;
        for (i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == n && !strncmp(p, names[i].name, n))
                break;
        if (i == sizeof names / sizeof names[0])
            return -1;
        f |= names[i].flag;
        p += n;
        if (*p == ',')
            p++;
    }
    if ((f & MT_ROUTE_ONE_THREAD) && (f & MT_ROUTE_TWO_THREADS))
        return -1;
    forced = f;
    return 0;
}

unsigned mt_read_forced(void)
{
    return forced;
}

int mta_read_threads(int requested)
{
    if (requested)
        return requested >= 2 ? 2 : 1;
    if (mt_read_forced() & MT_ROUTE_ONE_THREAD)
        return 1;
    if (mt_read_forced() & MT_ROUTE_TWO_THREADS)
        return 2;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) < 2)
        return 1;
    return 2;
}

