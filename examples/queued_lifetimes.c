/*
 * queued_lifetimes.c - a custom analysis written against the trace reader
 * API (docs/api-trace.md): the lifetimes of objects allocated under some
 * function, e.g. items put in a queue. For each sampled allocation whose
 * backtrace passes through a function whose name contains PATTERN, print
 *
 *     <allocation time, s> <lifetime, s>
 *
 * where the lifetime runs to the object's collection, or to the last event
 * of the trace for objects never collected. If a queue backs up, lifetimes
 * grow with allocation time: plot with
 *
 *     queued_lifetimes app.ctf Queue.add | gnuplot -p -e "plot '-'"
 *
 * Build: cc -o queued_lifetimes queued_lifetimes.c $(pkg-config --cflags --libs memtrace)
 * (in this tree `make` builds it as build/examples/queued_lifetimes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memtrace/trace.h>

/* ---- object id -> allocation time, open addressing ---- */
typedef struct entry {
    mt_obj_id id;
    mt_timedelta time;
    int used;
} entry;

typedef struct table {
    entry *slots;
    size_t mask, count;
} table;

static size_t slot_of(const table *t, mt_obj_id id)
{
    return (size_t)(id * 0x9E3779B97F4A7C15ull >> 17) & t->mask;
}

static void table_put(table *t, mt_obj_id id, mt_timedelta time);

static void table_grow(table *t)
{
    table bigger = {calloc((t->mask + 1) * 2, sizeof(entry)), t->mask * 2 + 1, 0};
    if (!bigger.slots) {
        perror("queued_lifetimes");
        exit(1);
    }
    for (size_t i = 0; i <= t->mask; i++)
        if (t->slots[i].used)
            table_put(&bigger, t->slots[i].id, t->slots[i].time);
    free(t->slots);
    *t = bigger;
}

static void table_put(table *t, mt_obj_id id, mt_timedelta time)
{
    if ((t->count + 1) * 2 > t->mask + 1)
        table_grow(t);
    size_t i = slot_of(t, id);
    while (t->slots[i].used)
        i = (i + 1) & t->mask;
    t->slots[i] = (entry){id, time, 1};
    t->count++;
}

/* Removes id; returns 1 and its time if it was there. */
static int table_take(table *t, mt_obj_id id, mt_timedelta *time)
{
    size_t i = slot_of(t, id);
    for (; t->slots[i].used; i = (i + 1) & t->mask)
        if (t->slots[i].id == id)
            break;
    if (!t->slots[i].used)
        return 0;
    *time = t->slots[i].time;
    t->slots[i].used = 0;
    t->count--;
    /* Re-insert the rest of the cluster so lookups still find them. */
    for (size_t j = (i + 1) & t->mask; t->slots[j].used; j = (j + 1) & t->mask) {
        entry e = t->slots[j];
        t->slots[j].used = 0;
        t->count--;
        table_put(t, e.id, e.time);
    }
    return 1;
}

/* ---- does a location code pass through the function? cached per code ---- */
typedef struct verdict {
    mt_location_code code;
    signed char known, match;
} verdict;

static verdict verdicts[1 << 16]; /* small direct-mapped cache */

static int code_matches(const mt_reader *r, mt_location_code code, const char *pattern)
{
    verdict *v = &verdicts[(code * 0x9E3779B97F4A7C15ull) >> 48];
    if (v->known && v->code == code)
        return v->match;
    const mt_location *locs;
    size_t n = 0;
    int match = 0;
    if (mt_reader_lookup(r, code, &locs, &n) == 0)
        for (size_t i = 0; i < n && !match; i++)
            match = strstr(locs[i].defname, pattern) != NULL;
    *v = (verdict){code, 1, (signed char)match};
    return match;
}

static void print_lifetime(mt_timedelta alloc, mt_timedelta end)
{
    printf("%f %f\n", (double)alloc / 1e6, (double)(end - alloc) / 1e6);
}

static int by_id(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: queued_lifetimes TRACE [FUNCTION-PATTERN]\n"
                        "  (default pattern: Queue.add)\n");
        return 2;
    }
    const char *pattern = argc > 2 ? argv[2] : "Queue.add";
    char *err = NULL;
    mt_reader *r = mt_reader_open(argv[1], NULL, &err);
    if (!r) {
        fprintf(stderr, "queued_lifetimes: %s\n", err);
        free(err);
        return 1;
    }
    table allocs = {calloc(1024, sizeof(entry)), 1023, 0};
    mt_timedelta last = 0;
    mt_event ev;
    int rc;
    while ((rc = mt_reader_next(r, &ev)) == 1) {
        last = ev.time;
        if (ev.kind == MT_EVENT_ALLOC) {
            for (size_t i = 0; i < ev.backtrace_length; i++) {
                if (code_matches(r, ev.backtrace[i], pattern)) {
                    table_put(&allocs, ev.id, ev.time);
                    break;
                }
            }
        } else if (ev.kind == MT_EVENT_COLLECT) {
            mt_timedelta t;
            if (table_take(&allocs, ev.id, &t))
                print_lifetime(t, ev.time);
        }
    }
    if (rc < 0) {
        fprintf(stderr, "queued_lifetimes: %s\n", mt_reader_error(r));
        return 1;
    }
    /* Never collected: count them as collected when the trace ends. */
    entry *rest = malloc((allocs.count + 1) * sizeof *rest);
    size_t n = 0;
    for (size_t i = 0; i <= allocs.mask; i++)
        if (allocs.slots[i].used)
            rest[n++] = allocs.slots[i];
    qsort(rest, n, sizeof *rest, by_id);
    for (size_t i = 0; i < n; i++)
        print_lifetime(rest[i].time, last);
    free(rest);
    free(allocs.slots);
    mt_reader_close(r);
    return 0;
}
