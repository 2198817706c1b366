/*
 * tracer.c - unit test of the tracer API (memtrace_start_tracing /
 * memtrace_stop_tracing), linked with the recorder's objects: 16 threads
 * allocate and free while the writer thread drains and symbolizes; the
 * trace is then read back with the codec's reader and checked (header,
 * context, every collect after its allocation, allocation sites named).
 * Runs under TSan too.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>

#include "memtrace/record.h"
#include "memtrace/trace.h"

#include "../check.h"

enum { THREADS = 16, ROUNDS = 20000, SLOTS = 64 };
static void *keep[THREADS][SLOTS];

__attribute__((noinline)) static void *traced_site(size_t n);

/* The recorder writes raw frames "tracer+0xOFFSET" (docs/format.md): is
 * this one a return address inside traced_site? */
static int is_traced_site(const mt_location *l)
{
    Dl_info di;
    const char *plus = strstr(l->defname, "+0x");
    if (l->line != 0 || !plus || !dladdr((void *)traced_site, &di) || !di.dli_fbase)
        return 0;
    uintptr_t pc = (uintptr_t)di.dli_fbase + (uintptr_t)strtoull(plus + 3, NULL, 16) - 1;
    return pc >= (uintptr_t)traced_site && pc < (uintptr_t)traced_site + 256;
}

__attribute__((noinline)) static void *traced_site(size_t n)
{
    void *p = malloc(n);
    __asm__ volatile("" : : "r"(p) : "memory");
    return p;
}

static void *worker(void *arg)
{
    int me = (int)(intptr_t)arg;
    unsigned r = (unsigned)me * 2654435761u + 3;
    for (int i = 0; i < ROUNDS; i++) {
        r = r * 1103515245u + 12345u;
        int s = (int)((r >> 16) % SLOTS);
        free(keep[me][s]);
        keep[me][s] = traced_site(16 + (r >> 8) % 4000);
    }
    return NULL;
}

int main(void)
{
    const char *dir = getenv("MT_TMP");
    char path[4096];
    snprintf(path, sizeof path, "%s/tracer.ctf", dir && *dir ? dir : "/tmp");
    unsetenv("MEMTRACE");

    CHECK(memtrace_start_tracing("/nonexistent-dir/x.ctf", 0, NULL) != 0,
          "unwritable path: start fails");
    CHECK(memtrace_stop_tracing() != 0, "stop without a trace fails");
    CHECK(memtrace_start_tracing(path, 1.0 / 8192, "unit test") == 0, "start tracing");
    CHECK(memtrace_start_tracing(path, 1.0 / 8192, NULL) != 0, "second start fails");
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < THREADS / 2; i++)   /* half the threads' blocks stay live */
        for (int s = 0; s < SLOTS; s++)
            free(keep[i][s]);
    CHECK(memtrace_stop_tracing() == 0, "stop tracing");

    char *err = NULL;
    mt_reader *r = mt_reader_open(path, NULL, &err);
    CHECK(r != NULL, "trace readable (%s)", err ? err : "ok");
    if (!r)
        return 1;
    const mt_trace_info *info = mt_reader_info(r);
    CHECK(info->word_size == 8 && info->sample_rate == 1.0 / 8192, "word size 8, rate per byte");
    CHECK(info->context && strcmp(info->context, "unit test") == 0, "context");
    CHECK(info->version == 2, "format v2");
    size_t cap = 1 << 20, allocs = 0, collects = 0, bad = 0, named = 0;
    unsigned char *live = calloc(cap, 1);
    mt_event ev;
    int rc;
    while ((rc = mt_reader_next(r, &ev)) == 1) {
        if (ev.kind == MT_EVENT_ALLOC) {
            allocs++;
            if (ev.id < cap)
                live[ev.id] = 1;
            if (ev.source != MT_SOURCE_EXTERNAL || ev.n_samples < 1 || ev.backtrace_length < 1)
                bad++;
            const mt_location *locs;
            size_t n;
            if (ev.backtrace_length &&
                mt_reader_lookup(r, ev.backtrace[ev.backtrace_length - 1], &locs, &n) == 0 &&
                n > 0 && is_traced_site(&locs[n - 1]))
                named++;
        } else if (ev.kind == MT_EVENT_COLLECT) {
            collects++;
            if (ev.id >= cap || !live[ev.id])
                bad++;
            else
                live[ev.id] = 0;
        }
    }
    CHECK(rc == 0, "trace decodes to the end");
    CHECK(allocs > 1000, "%zu sampled allocations", allocs);
    CHECK(collects > allocs / 2 && collects < allocs, "%zu collects of %zu allocations", collects,
          allocs);
    CHECK(bad == 0, "events consistent (%zu bad)", bad);
    CHECK(named > allocs * 9 / 10, "allocation site named traced_site (%zu of %zu)", named, allocs);
    mt_reader_close(r);

    snprintf(path, sizeof path, "%s/tracer2.ctf", dir && *dir ? dir : "/tmp");
    CHECK(memtrace_start_tracing(path, 0, NULL) == 0, "start again after stop");
    for (int i = 0; i < 1000; i++)
        free(traced_site(100000));
    CHECK(memtrace_stop_tracing() == 0, "stop again");
    return failures ? 1 : 0;
}
