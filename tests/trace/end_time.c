/*
 * end_time.c - the end of a recording in the codec: mt_writer_flush_until
 * makes a trace cover time after its last event (a process that held its
 * memory, then exited), with or without the end mark; the reader reports
 * both (mt_reader_end_time, mt_reader_ended), events read back unchanged,
 * packet times never go backwards, and a trace written without it ends at
 * its last event, unmarked.
 */
#include "sinktrace.h"

enum { START = ST_START };

/* Writes two allocations at +10 and +20 µs, then what `finish` does. */
static void write_trace(sink *s, void (*finish)(mt_writer *))
{
    mt_writer *w = sink_writer_open(s);
    mt_location_code bt[1] = { 0x1234 };
    mt_writer_put_alloc(w, START + 10, 100, 1, MT_SOURCE_EXTERNAL, bt, 1, NULL);
    mt_writer_put_alloc(w, START + 20, 100, 1, MT_SOURCE_EXTERNAL, bt, 1, NULL);
    if (finish)
        finish(w);
    if (mt_writer_close(w) != 0)
        printf("FAIL: close\n");
}

/* Reads back: number of events, last event time, end time, end mark. */
static void read_trace(const sink *s, int *events, long long *last, long long *end, int *ended)
{
    char *err = NULL;
    mt_reader *r = mt_reader_open_memory(s->data, s->len, "t", NULL, &err);
    *events = -1;
    if (!r) {
        printf("FAIL: reader: %s\n", err);
        return;
    }
    mt_event ev;
    int rc;
    *events = 0;
    *last = 0;
    while ((rc = mt_reader_next(r, &ev)) == 1) {
        (*events)++;
        *last = ev.time;
    }
    if (rc < 0) {
        printf("FAIL: %s\n", mt_reader_error(r));
        *events = -1;
    }
    *end = mt_reader_end_time(r);
    *ended = mt_reader_ended(r);
    mt_reader_close(r);
}

static void exit_later(mt_writer *w)
{
    mt_writer_flush_until(w, START + 5000000, 1);
}

static void idle_then_exit(mt_writer *w)
{
    /* what the recorder's periodic flushes do while the process is idle */
    mt_writer_flush_until(w, START + 1000000, 0);
    mt_writer_flush_until(w, START + 2000000, 0);
    mt_writer_flush_until(w, START + 3000000, 1);
}

static void killed(mt_writer *w)
{
    mt_writer_flush_until(w, START + 700000, 0);
    mt_writer_flush(w);
}

static void earlier(mt_writer *w)
{
    mt_writer_flush_until(w, START + 5, 1);   /* before the last event: no effect on time */
}

int main(void)
{
    static sink s;
    int n, ended;
    long long last, end;

    write_trace(&s, NULL);
    read_trace(&s, &n, &last, &end, &ended);
    CHECK(n == 2 && last == 20 && end == 20 && !ended,
          "plain trace: ends at its last event, unmarked (%d events, end %lld, mark %d)", n, end,
          ended);

    write_trace(&s, exit_later);
    read_trace(&s, &n, &last, &end, &ended);
    CHECK(n == 2 && last == 20 && end == 5000000 && ended,
          "flush_until(end): the trace lasts 5 s after 2 events at 20 us, marked "
          "(%d, %lld, %lld, %d)", n, last, end, ended);

    write_trace(&s, idle_then_exit);
    read_trace(&s, &n, &last, &end, &ended);
    CHECK(n == 2 && end == 3000000 && ended,
          "idle flushes then the end: end 3 s, marked (%d, %lld, %d)", n, end, ended);

    write_trace(&s, killed);
    read_trace(&s, &n, &last, &end, &ended);
    CHECK(n == 2 && end == 700000 && !ended,
          "flushes without the end (a killed process): end 0.7 s, unmarked (%d, %lld, %d)", n,
          end, ended);

    write_trace(&s, earlier);
    read_trace(&s, &n, &last, &end, &ended);
    CHECK(n == 2 && end == 20 && ended,
          "an end time before the last event is ignored (%d, %lld, %d)", n, end, ended);

    return failures ? 1 : 0;
}
