/*
 * fuzz_filter.c - libFuzzer target for the filter language: any byte
 * string must parse into a filter or give an error that points into the
 * text; a filter's canonical form must parse back to itself; and applying
 * it to a small model (names of every kind, long ones for regexes that
 * backtrack) must finish, within the regex limits, with a selection or a
 * clean error. No crash, no sanitizer report, no hang, bounded memory.
 *
 *   make fuzz                        # builds build/fuzz/fuzz_filter (clang)
 *   mkdir -p /tmp/fcorpus && build/fuzz/fuzz_filter -dict=fuzz/filter.dict \
 *       -max_total_time=600 -rss_limit_mb=1024 /tmp/fcorpus
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/analyze/load.h"
#include "memtrace/analyze.h"

static mt_model *model;

/* The trace the filters are applied to, written into memory. */
static char *trace;
static size_t trace_len;

static int to_memory(void *ctx, const void *buf, size_t len)
{
    (void)ctx;
    char *n = realloc(trace, trace_len + len);
    if (!n)
        return -1;
    memcpy(n + trace_len, buf, len);
    trace = n;
    trace_len += len;
    return 0;
}

static mt_location locs[8];
static char long_a[2001];

static int resolve(void *ctx, mt_location_code code, const mt_location **l, size_t *n)
{
    (void)ctx;
    size_t i = (size_t)(code >> 4) - 1;
    if (i >= sizeof locs / sizeof locs[0])
        return -1;
    *l = &locs[i];
    *n = 1;
    return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    memset(long_a, 'a', sizeof long_a - 1);
    static const char *const names[] = {"main", "parse_message", "caml_alloc", "Stdlib__List.map",
                                        "operator new(unsigned long)", "x\033[2Jy", long_a,
                                        "std::vector<int>::push_back"};
    for (size_t i = 0; i < 8; i++)
        locs[i] = (mt_location){.filename = i % 2 ? "a.c" : "lib/b.ml", .defname = names[i],
                                .line = (uint32_t)i + 1};
    mt_trace_info info = {.version = 2, .sample_rate = 0.01, .word_size = 8,
                          .executable_name = "fuzz", .host_name = "h",
                          .ocaml_runtime_params = "", .pid = 1, .start_time = 1000000};
    mt_writer_options wo = {.resolve = resolve, .write = to_memory};
    mt_writer *w = mt_writer_open(-1, &info, &wo, NULL);
    if (!w)
        abort();
    for (unsigned i = 0; i < 64; i++) {
        mt_location_code bt[4] = {0x10, 0x10 + 16 * (1 + i % 7), 0x10 + 16 * (1 + (i / 7) % 7),
                                  0x10 + 16 * (1 + (i * 5) % 7)};
        mt_obj_id id;
        mt_writer_put_alloc(w, 1000000 + i * 1000, 1 + i * 37, 1 + i % 3, MT_SOURCE_EXTERNAL, bt,
                            1 + i % 4, &id);
        if (i % 3 == 0)
            mt_writer_put_collect(w, 1000000 + i * 1000 + 500, id);
    }
    if (mt_writer_close(w) < 0)
        abort();
    mt_reader *r = mt_reader_open_memory(trace, trace_len, "fuzz", NULL, NULL);
    model = r ? mt_model_from_reader(r, NULL, NULL) : NULL;
    if (r)
        mt_reader_close(r);
    if (!model)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    char *err = NULL;
    size_t pos = 0;
    mt_filter *f = mt_filter_parse(text, &err, &pos);
    if (!f) {
        /* an error names a place inside the text */
        if (!err || pos > strlen(text))
            abort();
        free(err);
        free(text);
        return 0;
    }
    char *canon = mt_filter_to_string(f);
    mt_filter *g = canon ? mt_filter_parse(canon, NULL, NULL) : NULL;
    char *again = g ? mt_filter_to_string(g) : NULL;
    if (!canon || !again || strcmp(canon, again) != 0) {
        fprintf(stderr, "canonical form does not round-trip: '%s' -> '%s'\n", canon ? canon : "",
                again ? again : "");
        abort();
    }
    mt_selection *s = mt_select_err(model, f, MT_TIME_END, &err);
    if (s) {
        mt_cost total = mt_selection_total(s);
        if (total.allocs > mt_model_n_allocs(model))
            abort();
        mt_tree *t = mt_query_tree(s, MT_TREE_BOTTOM_UP, MT_METRIC_ALLOC_BYTES, 0);
        mt_tree_free(t);
        mt_selection_free(s);
    } else if (!err || strncmp(err, "filter: ", 8) != 0) {
        abort(); /* only out of memory has no message */
    }
    free(err);
    free(canon);
    free(again);
    mt_filter_free(g);
    mt_filter_free(f);
    free(text);
    return 0;
}
