/*
 * carried.c - blocks carried over from the previous piece of a rotated
 * recording, in the codec: mt_writer_set_carried puts the allocations
 * that follow in packets of their own, marked in a header field other
 * readers ignore (flush_duration, docs/format.md); the reader reports them
 * with ev.carried (and only them: new allocations and collects have 0),
 * a collect of a carried block finds it, the end mark still works after
 * them, a trace written without the call has no carried event (and is at
 * most a packet header shorter), and re-encoding an event keeps its mark (what recode
 * and symbolize rely on).
 */
#include "sinktrace.h"

enum { START = ST_START, CARRIED = 3000 };

/* A piece: CARRIED blocks carried in (more than a packet holds) if
 * carry, then two new ones; the first carried block and the first new
 * one are freed; the end. */
static void write_piece(sink *s, int carry)
{
    mt_writer *w = sink_writer_open(s);
    mt_location_code bt[2] = { 0x1234, 0x5678 };
    if (carry) {
        mt_writer_set_carried(w, 1);
        for (int i = 0; i < CARRIED; i++)
            mt_writer_put_alloc(w, START, 100 + i, 1, MT_SOURCE_EXTERNAL, bt, 2, NULL);
        mt_writer_set_carried(w, 0);
    } else {
        for (int i = 0; i < CARRIED; i++)
            mt_writer_put_alloc(w, START, 100 + i, 1, MT_SOURCE_EXTERNAL, bt, 2, NULL);
    }
    mt_obj_id a, b;
    mt_writer_put_alloc(w, START + 10, 7, 1, MT_SOURCE_EXTERNAL, bt, 1, &a);
    mt_writer_put_alloc(w, START + 20, 8, 1, MT_SOURCE_EXTERNAL, bt, 1, &b);
    mt_writer_put_collect(w, START + 30, 0);
    mt_writer_put_collect(w, START + 40, a);
    mt_writer_flush_until(w, START + 1000, 1);
    if (mt_writer_close(w) != 0)
        printf("FAIL: close\n");
}

struct counts {
    int allocs, carried, carried_after_new, collects, collects_marked, ended, ok;
};

static void read_piece(const sink *s, struct counts *c, sink *copy)
{
    memset(c, 0, sizeof *c);
    char *err = NULL;
    mt_reader *r = mt_reader_open_memory(s->data, s->len, "t", NULL, &err);
    if (!r) {
        printf("FAIL: reader: %s\n", err);
        return;
    }
    mt_writer *w = copy ? sink_writer_open(copy) : NULL;
    mt_event ev;
    int rc;
    while ((rc = mt_reader_next(r, &ev)) == 1) {
        if (ev.kind == MT_EVENT_ALLOC) {
            c->allocs++;
            c->carried += ev.carried != 0;
            c->carried_after_new += ev.carried && c->allocs > c->carried;
        } else {
            c->collects++;
            c->collects_marked += ev.carried != 0;
        }
        if (w && mt_writer_put_event(w, START, &ev) != 0)
            printf("FAIL: put_event: %s\n", mt_writer_error(w));
    }
    c->ok = rc == 0;
    c->ended = mt_reader_ended(r);
    if (w) {
        mt_writer_flush_until(w, START + 1000, 1);
        mt_writer_close(w);
    }
    mt_reader_close(r);
}

int main(void)
{
    static sink piece, plain, copy;
    struct counts c;

    write_piece(&piece, 1);
    read_piece(&piece, &c, &copy);
    CHECK(c.ok && c.allocs == CARRIED + 2, "a piece reads to its end (%d allocations)", c.allocs);
    CHECK(c.carried == CARRIED && c.carried_after_new == 0,
          "the %d carried blocks, over several packets, are reported carried, and only they "
          "(%d)", CARRIED, c.carried);
    CHECK(c.collects == 2 && c.collects_marked == 0,
          "collects, of a carried block and of a new one, found and unmarked (%d, %d)",
          c.collects, c.collects_marked);
    CHECK(c.ended, "the end mark after carried packets");
    CHECK(copy.len == piece.len && memcmp(copy.data, piece.data, piece.len) == 0,
          "mt_writer_put_event keeps the mark: the same bytes again (%zu, %zu)", copy.len,
          piece.len);

    write_piece(&plain, 0);
    read_piece(&plain, &c, NULL);
    CHECK(c.ok && c.carried == 0 && c.allocs == CARRIED + 2,
          "without mt_writer_set_carried: no carried event (%d)", c.carried);
    CHECK(piece.len >= plain.len && piece.len - plain.len <= 66,
          "the mark costs at most one packet header (%zu, %zu bytes)", piece.len, plain.len);
    return failures ? 1 : 0;
}
