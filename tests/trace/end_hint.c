/*
 * end_hint.c - mt_trace_end_hint, the end of a trace from its packets'
 * headers alone, gives what a reader's mt_reader_end_time gives once it
 * has read every event: on every fixture (formats 1 to 3, a packet of
 * another pid, a packet cut at the end), on traces cut at many places,
 * and it refuses what it cannot walk (a pipe, a damaged header) instead
 * of guessing.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memtrace/trace.h"
#include "../check.h"

static void quiet(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
}

/* The end a reader finds once every event is read; -1: unreadable. */
static int read_end(const char *path, mt_timedelta *end)
{
    mt_reader_options o = {.on_warning = quiet, .skip_backtraces = 1};
    mt_reader *r = mt_reader_open(path, &o, NULL);
    if (!r)
        return -1;
    mt_event ev;
    int rc;
    while ((rc = mt_reader_next(r, &ev)) == 1)
        ;
    *end = mt_reader_end_time(r);
    mt_reader_close(r);
    return rc;
}

static int copy_prefix(const char *from, const char *to, long n)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    if (!in || !out) {
        if (in)
            fclose(in);
        if (out)
            fclose(out);
        return -1;
    }
    for (long i = 0; i < n; i++) {
        int c = getc(in);
        if (c == EOF)
            break;
        putc(c, out);
    }
    fclose(in);
    return fclose(out);
}

int main(void)
{
    static const char *fixtures[] = {
        "leak", "major", "prodcons", "prodcons_v3", "rate1", "rate1_skips", "synth_edge",
        "upstream_lists_and_sets_v1", "upstream_ocamlopt_v2", "upstream_ocamlopt_v3", "wrap",
    };
    const char *tmp = getenv("MT_TMP") ? getenv("MT_TMP") : "/tmp";
    char cut[4096], fifo[4096];
    snprintf(cut, sizeof cut, "%s/end_hint_cut.ctf", tmp);
    snprintf(fifo, sizeof fifo, "%s/end_hint_fifo", tmp);
    for (size_t i = 0; i < sizeof fixtures / sizeof *fixtures; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/fixtures/memtrace/%s.ctf", fixtures[i]);
        mt_timedelta want = -1, got = -1;
        int rrc = read_end(path, &want), hrc = mt_trace_end_hint(path, &got);
        CHECK(rrc == 0 && hrc == 0 && got == want, "%s: the headers' end %lld = the reader's %lld",
              fixtures[i], (long long)got, (long long)want);
        /* cut at 40 places: the hint is the reader's end, or no hint */
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        int agree = 1;
        for (int k = 1; k <= 40; k++) {
            long n = (long)((double)st.st_size * k / 41);
            if (copy_prefix(path, cut, n) != 0)
                continue;
            if (read_end(cut, &want) == 0 && mt_trace_end_hint(cut, &got) == 0 && got != want)
                agree = 0;
        }
        CHECK(agree, "%s cut at 40 places: every hint is the reader's end", fixtures[i]);
    }
    /* a damaged header mid-file: no hint rather than a wrong one */
    const char *p = "tests/fixtures/memtrace/prodcons.ctf";
    struct stat st;
    if (stat(p, &st) == 0 && copy_prefix(p, cut, st.st_size) == 0) {
        mt_timedelta e;
        int fd = open(cut, O_RDWR);
        /* the second packet's magic (after the trace-info packet) */
        mt_reader *r = mt_reader_open(cut, NULL, NULL);
        uint64_t off = r ? mt_reader_offset(r) : 0;
        if (r)
            mt_reader_close(r);
        if (fd >= 0 && off > 0 && pwrite(fd, "XXXX", 4, (off_t)off) == 4) {
            close(fd);
            CHECK(mt_trace_end_hint(cut, &e) == -1, "a packet with a bad magic: no hint");
        } else {
            if (fd >= 0)
                close(fd);
            CHECK(0, "could not damage the copy");
        }
    }
    unlink(cut);
    /* a pipe: not walked */
    if (mkfifo(fifo, 0600) == 0) {
        if (fork() == 0) {
            int fd = open(fifo, O_WRONLY);
            int in = open(p, O_RDONLY);
            char buf[4096];
            ssize_t n;
            while ((n = read(in, buf, sizeof buf)) > 0)
                if (write(fd, buf, (size_t)n) != n)
                    break;
            _exit(0);
        }
        mt_timedelta e;
        CHECK(mt_trace_end_hint(fifo, &e) == -1, "a pipe: no hint");
        unlink(fifo);
    }
    return failures != 0;
}
