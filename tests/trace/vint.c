/*
 * vint.c - memtrace's variable-length integers (lib/trace/buf.h) and the
 * sizes they carry: each value is written in the shortest form OCaml's
 * writer uses, with the bytes given here (tag 253: 16 bits, 254: a signed
 * 32-bit number, 255: 64 bits), and a C program's blocks of 2 GiB to 4 GiB
 * and past (their length in bytes needs tag 255: the 32-bit form would read
 * back negative) come back from a trace with their exact sizes.
 */
#include "sinktrace.h"
#include "../../lib/trace/buf.h"

/* v's encoding as the bytes in want (n of them), and back to v. */
static void encodes(uint64_t v, const uint8_t *want, unsigned n, const char *what)
{
    uint8_t b[9];
    memset(b, 0xaa, sizeof b);
    unsigned k = mt_put_vint(b, v);
    int same = k == n && memcmp(b, want, n) == 0;
    CHECK(same && mt_vint_size(b[0]) == n && (uint64_t)mt_get_vint(b) == v,
          "%s: %llu is written as %u bytes %02x %02x %02x %02x %02x... and read back", what,
          (unsigned long long)v, k, b[0], b[1], b[2], b[3], b[4]);
}

int main(void)
{
    static const uint8_t v0[] = {0}, v252[] = {252}, v253[] = {253, 0xfd, 0x00},
        vffff[] = {253, 0xff, 0xff}, v10000[] = {254, 0x00, 0x00, 0x01, 0x00},
        v7fff_ffff[] = {254, 0xff, 0xff, 0xff, 0x7f},
        v8000_0000[] = {255, 0x00, 0x00, 0x00, 0x80, 0, 0, 0, 0},
        v3gib[] = {255, 0x00, 0x00, 0x00, 0xc0, 0, 0, 0, 0},
        vffff_ffff[] = {255, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0},
        v1_0000_0000[] = {255, 0, 0, 0, 0, 0x01, 0, 0, 0};
    encodes(0, v0, 1, "zero in its tag byte");
    encodes(252, v252, 1, "252, the largest in the tag byte");
    encodes(253, v253, 3, "253 takes 16 bits");
    encodes(0xffff, vffff, 3, "65535, the largest in 16 bits");
    encodes(0x10000, v10000, 5, "65536 takes 32 bits");
    encodes(0x7fffffff, v7fff_ffff, 5, "2^31 - 1, the largest signed 32-bit number");
    encodes(0x80000000u, v8000_0000, 9, "2 GiB (2^31) takes 64 bits");
    encodes(3ull << 30, v3gib, 9, "3 GiB takes 64 bits");
    encodes(0xffffffffu, vffff_ffff, 9, "2^32 - 1 takes 64 bits");
    encodes(1ull << 32, v1_0000_0000, 9, "4 GiB (2^32) takes 64 bits");
    /* the 32-bit form is signed: what a reader makes of 3 GiB written so */
    CHECK(mt_get_vint((const uint8_t[]){254, 0x00, 0x00, 0x00, 0xc0}) == -(1ll << 30),
          "tag 254 is signed: 0xc0000000 in it reads -1 GiB (so sizes past 2^31 - 1 never use it)");

    /* A C program's blocks (sizes in bytes: 8-bit words) through a trace. */
    static sink s;
    static const uint64_t sizes[] = {0x7fffffffu, 0x80000000u, 3ull << 30, 0xffffffffu,
                                     1ull << 32, 5ull << 30, 1ull << 40};
    enum { N = sizeof sizes / sizeof sizes[0] };
    mt_writer *w = sink_writer_open(&s);
    mt_location_code bt[1] = {0x1234};
    for (int i = 0; i < N; i++)
        mt_writer_put_alloc(w, ST_START + 10 * (i + 1), sizes[i], 1 + i, MT_SOURCE_EXTERNAL,
                            bt, 1, NULL);
    CHECK(mt_writer_close(w) == 0, "a trace of blocks from 2 GiB - 1 to 1 TiB is written");
    char *err = NULL;
    mt_reader *r = mt_reader_open_memory(s.data, s.len, "t", NULL, &err);
    if (!r) {
        CHECK(0, "reader: %s", err ? err : "?");
        return 1;
    }
    mt_event ev;
    int i = 0, rc;
    while ((rc = mt_reader_next(r, &ev)) == 1) {
        if (ev.kind != MT_EVENT_ALLOC)
            continue;
        if (i < N)
            CHECK(ev.length == sizes[i] && ev.n_samples == (uint64_t)(1 + i),
                  "a block of %llu bytes reads back as %llu bytes, %llu samples",
                  (unsigned long long)sizes[i], (unsigned long long)ev.length,
                  (unsigned long long)ev.n_samples);
        i++;
    }
    CHECK(rc == 0 && i == N, "all %d blocks read back, no error (%d, %s)", N, i,
          rc < 0 ? mt_reader_error(r) : "ok");
    mt_reader_close(r);
    return failures ? 1 : 0;
}
