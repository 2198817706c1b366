/*
 * fuzz_reader.c - libFuzzer target for the trace reader (and, through
 * re-encoding, the writer). Any byte string must give events or a clean
 * error: no crash, no sanitizer report, no hang, bounded memory.
 *
 *   make fuzz                        # builds build/fuzz/fuzz_reader (clang)
 *   mkdir -p /tmp/corpus && build/fuzz/fuzz_reader -max_total_time=600 \
 *       -rss_limit_mb=1024 /tmp/corpus tests/fixtures/memtrace
 */
#include <stdint.h>
#include <stdlib.h>

#include "memtrace/trace.h"

static void ignore(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
}

static int discard(void *ctx, const void *buf, size_t len)
{
    (void)buf;
    *(size_t *)ctx += len;
    return 0;
}

static int resolve(void *ctx, mt_location_code code, const mt_location **locs, size_t *n)
{
    return mt_reader_lookup(ctx, code, locs, n);
}

static void run(const uint8_t *data, size_t size, int skip)
{
    mt_reader_options o = {.on_warning = ignore, .skip_backtraces = skip};
    char *err = NULL;
    mt_reader *r = mt_reader_open_memory(data, size, "fuzz", &o, &err);
    if (!r) {
        free(err);
        return;
    }
    const mt_trace_info *info = mt_reader_info(r);
    size_t written = 0;
    mt_writer_options wo = {.version = info->version >= 3 ? 3 : 2, .resolve = resolve,
                            .resolve_ctx = r, .write = discard, .write_ctx = &written};
    mt_writer *w = skip ? NULL : mt_writer_open(-1, info, &wo, NULL);
    mt_event ev;
    volatile size_t sink = 0;
    while (mt_reader_next(r, &ev) == 1) {
        for (size_t i = 0; i < ev.backtrace_length; i++) {
            const mt_location *l;
            size_t n;
            if (mt_reader_lookup(r, ev.backtrace[i], &l, &n) == 0 && n > 0)
                sink += l[0].line + l[n - 1].end_char;
        }
        if (w && ev.domain == info->initial_domain && ev.backtrace_length < 100000)
            mt_writer_put_event(w, info->start_time, &ev);
    }
    (void)mt_reader_error(r);
    if (w)
        mt_writer_close(w);
    mt_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run(data, size, 0);
    run(data, size, 1);
    return 0;
}
