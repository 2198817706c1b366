/*
 * restart.c - unit test of recordings started and stopped many times in
 * one process (what 'memtrace ctl' does): 130 recordings, each allocating
 * a block that stays live; the blocks of all earlier recordings are freed
 * during the last one. Each trace must hold only its own blocks: no
 * collection of a block it never saw (the sampler's generation number has
 * only 7 bits, so one recording in 127 shares it with an earlier one).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/record.h"
#include "memtrace/trace.h"

#include "../check.h"

enum { PERIODS = 130 };
static void *kept[PERIODS];

/* Events of one trace: allocations, collections, and collections of blocks
 * the trace never allocated or had already seen freed. -1 if unreadable. */
static int count(const char *path, int *allocs, int *collects, int *foreign)
{
    char *err = NULL;
    mt_reader *r = mt_reader_open(path, NULL, &err);
    if (!r) {
        printf("%s: %s\n", path, err ? err : "?");
        free(err);
        return -1;
    }
    *allocs = *collects = *foreign = 0;
    static unsigned char freed[4096];
    memset(freed, 0, sizeof freed);
    mt_event ev;
    int rc;
    while ((rc = mt_reader_next(r, &ev)) == 1) {
        if (ev.kind == MT_EVENT_ALLOC)
            (*allocs)++;
        else if (ev.kind == MT_EVENT_COLLECT) {
            (*collects)++;
            if (ev.id >= (mt_obj_id)*allocs || ev.id >= sizeof freed || freed[ev.id]++)
                (*foreign)++;
        }
    }
    mt_reader_close(r);
    return rc < 0 ? -1 : 0;
}

int main(void)
{
    const char *dir = getenv("MT_TMP");
    char path[4096];
    int bad_start = 0, bad_stop = 0;
    for (int k = 0; k < PERIODS; k++) {
        snprintf(path, sizeof path, "%s/restart-%03d.ctf", dir ? dir : "/tmp", k);
        if (memtrace_start_tracing(path, 1.0, "restart") != 0)
            bad_start++;
        /* Rate 1: every block is sampled (the first one may not be under
         * TSan, whose threads skip their first 256 KiB). */
        void *big = malloc(300 << 10);
        __asm__ volatile("" : : "r"(big) : "memory");
        free(big);
        kept[k] = malloc(100);
        __asm__ volatile("" : : "r"(kept[k]) : "memory");
        if (k == PERIODS - 1)
            for (int i = 0; i < PERIODS - 1; i++)
                free(kept[i]);
        if (memtrace_stop_tracing() != 0)
            bad_stop++;
    }
    CHECK(bad_start == 0 && bad_stop == 0, "%d recordings started and stopped (%d, %d failed)",
          PERIODS, bad_start, bad_stop);
    int allocs, collects, foreign;
    snprintf(path, sizeof path, "%s/restart-%03d.ctf", dir ? dir : "/tmp", PERIODS - 1);
    int rc = count(path, &allocs, &collects, &foreign);
    CHECK(rc == 0, "the last recording reads back");
    CHECK(rc == 0 && allocs >= 1 && collects == allocs - 1 && foreign == 0,
          "the last recording holds none of the %d earlier recordings' frees "
          "(%d allocations, %d collections, %d of unknown or already freed blocks)",
          PERIODS - 1, allocs, collects, foreign);
    int clean = 0;
    for (int k = 0; k < PERIODS - 1; k++) {
        snprintf(path, sizeof path, "%s/restart-%03d.ctf", dir ? dir : "/tmp", k);
        if (count(path, &allocs, &collects, &foreign) == 0 && foreign == 0 && allocs >= 1)
            clean++;
    }
    CHECK(clean == PERIODS - 1, "every earlier recording reads back with only its own blocks "
          "(%d of %d)", clean, PERIODS - 1);
    free(kept[PERIODS - 1]);
    return failures ? 1 : 0;
}
