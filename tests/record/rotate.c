/*
 * rotate.c - unit test of rotation (MEMTRACE_ROTATE_SIZE, MEMTRACE_KEEP),
 * linked with the recorder's objects: 8 threads allocate and free at rate
 * 1 while the writer thread cuts the trace into pieces of 64 KiB and
 * deletes all but the last 3; then every piece left is read back: it
 * decodes to its end and is marked as ended, its carried blocks come
 * first, every collect names a block of the piece (carried or new), and
 * the last piece's live blocks at the test's site are exactly those the
 * threads still hold. Runs under ASan and TSan too (the writer thread
 * rotates while the program's threads allocate).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dlfcn.h>

#include "memtrace/record.h"
#include "memtrace/trace.h"

#include "../check.h"

enum { THREADS = 8, ROUNDS = 20000, SLOTS = 64, KEEP = 3 };
static void *keep[THREADS][SLOTS];

__attribute__((noinline)) static void *rotated_site(size_t n)
{
    void *p = malloc(n);
    __asm__ volatile("" : : "r"(p) : "memory");
    return p;
}

/* Raw frames are "rotate+0xOFFSET" (docs/format.md): is this return
 * address inside rotated_site? */
static int is_site(const mt_location *l)
{
    Dl_info di;
    const char *plus = strstr(l->defname, "+0x");
    if (l->line != 0 || !plus || !dladdr((void *)rotated_site, &di) || !di.dli_fbase)
        return 0;
    uintptr_t pc = (uintptr_t)di.dli_fbase + (uintptr_t)strtoull(plus + 3, NULL, 16) - 1;
    return pc >= (uintptr_t)rotated_site && pc < (uintptr_t)rotated_site + 256;
}

static void *worker(void *arg)
{
    int me = (int)(intptr_t)arg;
    unsigned r = (unsigned)me * 2654435761u + 7;
    for (int i = 0; i < ROUNDS; i++) {
        r = r * 1103515245u + 12345u;
        int s = (int)((r >> 16) % SLOTS);
        free(keep[me][s]);
        keep[me][s] = rotated_site(16 + (r >> 8) % 200);
        if (i % 1000 == 0)
            usleep(1000);   /* let the writer keep up: pieces stay near their bound */
    }
    return NULL;
}

struct piece {
    int ok, ended;
    size_t carried, allocs, collects, bad, live_site;
    long size;
};

static void read_piece(const char *path, struct piece *p)
{
    memset(p, 0, sizeof *p);
    FILE *f = fopen(path, "rb");
    if (f) {
        fseek(f, 0, SEEK_END);
        p->size = ftell(f);
        fclose(f);
    }
    char *err = NULL;
    mt_reader *r = mt_reader_open(path, NULL, &err);
    if (!r) {
        printf("  %s: %s\n", path, err);
        free(err);
        return;
    }
    size_t cap = 1 << 16;
    unsigned char *live = calloc(cap, 1), *site = calloc(cap, 1);
    mt_event ev;
    int rc;
    while ((rc = mt_reader_next(r, &ev)) == 1) {
        if (ev.kind == MT_EVENT_ALLOC) {
            if (ev.carried)
                p->bad += p->allocs > 0;   /* carried blocks come first */
            p->carried += ev.carried != 0;
            p->allocs += !ev.carried;
            if (ev.id >= cap) {
                size_t nc = cap;
                while (ev.id >= nc)
                    nc *= 2;
                live = realloc(live, nc);
                site = realloc(site, nc);
                memset(live + cap, 0, nc - cap);
                memset(site + cap, 0, nc - cap);
                cap = nc;
            }
            const mt_location *locs;
            size_t n;
            live[ev.id] = 1;
            site[ev.id] = ev.backtrace_length &&
                          mt_reader_lookup(r, ev.backtrace[ev.backtrace_length - 1], &locs,
                                           &n) == 0 && n > 0 && is_site(&locs[n - 1]);
            p->live_site += site[ev.id];
        } else if (ev.kind == MT_EVENT_COLLECT) {
            p->collects++;
            if (ev.id >= cap || !live[ev.id]) {
                p->bad++;
            } else {
                live[ev.id] = 0;
                p->live_site -= site[ev.id];
            }
        }
    }
    p->ok = rc == 0;
    p->ended = mt_reader_ended(r);
    if (rc < 0)
        printf("  %s\n", mt_reader_error(r));
    free(live);
    free(site);
    mt_reader_close(r);
}

int main(void)
{
    const char *dir = getenv("MT_TMP");
    char base[4000], path[4096];
    snprintf(base, sizeof base, "%s/rotate.ctf", dir && *dir ? dir : "/tmp");
    setenv("MEMTRACE", base, 1);
    setenv("MEMTRACE_RATE", "1", 1);
    setenv("MEMTRACE_ROTATE_SIZE", "64k", 1);
    setenv("MEMTRACE_KEEP", "3", 1);
    setenv("MEMTRACE_RSS_MS", "0", 1);
    setenv("MEMTRACE_FLUSH_MS", "50", 1);
    unsetenv("MEMTRACE_ROOT");
    CHECK(memtrace_trace_if_requested() == 1, "tracing starts with rotation");
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < THREADS / 2; i++)   /* half the threads' blocks stay live */
        for (int s = 0; s < SLOTS; s++) {
            free(keep[i][s]);
            keep[i][s] = NULL;
        }
    CHECK(memtrace_stop_tracing() == 0, "stop tracing");

    snprintf(path, sizeof path, "%s", base);
    CHECK(access(path, F_OK) != 0, "no FILE itself: only pieces");
    int last = 0, present = 0;
    for (int k = 1; k < 100000; k++) {
        snprintf(path, sizeof path, "%s.part%04d", base, k);
        if (access(path, F_OK) == 0) {
            present++;
            last = k;
        } else if (last) {
            break;
        }
    }
    CHECK(last > KEEP, "the trace was cut into %d pieces", last);
    CHECK(present == KEEP, "MEMTRACE_KEEP=%d: %d pieces left", KEEP, present);
    for (int k = last - present + 1; k <= last; k++) {
        struct piece p;
        snprintf(path, sizeof path, "%s.part%04d", base, k);
        read_piece(path, &p);
        CHECK(p.ok && p.ended, "piece %d decodes to its end and is marked ended", k);
        CHECK(p.bad == 0, "piece %d: carried blocks first, every collect known (%zu bad)", k,
              p.bad);
        CHECK(p.carried > 0, "piece %d starts with %zu carried blocks", k, p.carried);
        /* a piece ends at the first flush past the bound: a packet or
         * two more, and its carried blocks besides */
        CHECK(k == last || p.size < 65536 + 3 * 32768 + 40 * (long)p.carried,
              "piece %d: %ld bytes, near the 64 KiB bound", k, p.size);
        if (k == last)
            CHECK(p.live_site == (size_t)(THREADS - THREADS / 2) * SLOTS,
                  "last piece: %zu blocks of the site live at its end (%d held)", p.live_site,
                  (THREADS - THREADS / 2) * SLOTS);
    }
    return failures ? 1 : 0;
}
