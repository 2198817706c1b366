/*
 * diff.c - unit test of the diff report (lib/present/diff.c): the text
 * report of 'memtrace diff' never writes control characters from a
 * trace's function names to the terminal (a hostile trace could carry
 * escape sequences), C1 controls and bytes that are not
 * UTF-8 included: they appear as \xNN, through the one escaper; a name
 * that starts with "::" (a GitHub Actions workflow command) has its first
 * ':' escaped. JSON escapes them its own way, and stays valid UTF-8.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/load.h"
#include "memtrace/compare.h"

static int mem_write(void *ctx, const void *buf, size_t len)
{
    FILE *f = ctx;
    return fwrite(buf, 1, len, f) == len ? 0 : -1;
}

static const mt_location evil = {"file.c", "::error::evil\x1b[31mred\x07\xc2\x9b\xff", 7, 0, 0};

static int resolve(void *ctx, mt_location_code code, const mt_location **locs, size_t *n)
{
    (void)ctx;
    (void)code;
    *locs = &evil;
    *n = 1;
    return 0;
}

int main(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    mt_trace_info info = {2, 0.01, 8, "prog", "host", "", 1, 1000000, NULL, 0};
    mt_writer_options wo = {.version = 2, .resolve = resolve, .write = mem_write, .write_ctx = f};
    char *err = NULL;
    mt_writer *w = mt_writer_open(-1, &info, &wo, &err);
    mt_location_code bt[1] = {0x1234};
    for (int i = 0; i < 50; i++)
        mt_writer_put_alloc(w, 1000000 + i, 100, 1, MT_SOURCE_EXTERNAL, bt, 1, NULL);
    if (!w || mt_writer_close(w) < 0 || fflush(f) != 0) {
        printf("FAIL: writing the trace: %s\n", err ? err : "?");
        return 1;
    }
    mt_reader *r = mt_reader_open_memory(buf, len, "evil.ctf", NULL, &err);
    mt_model *m = r ? mt_model_from_reader(r, NULL, &err) : NULL;
    if (!m) {
        printf("FAIL: reading it back: %s\n", err ? err : "?");
        return 1;
    }
    mt_selection *s = mt_select(m, NULL, MT_TIME_END);
    mt_diff_side sd = mt_diff_side_all(s, MT_TIME_END);
    int fails = 0;
    for (int key = 0; key < 3; key++) {
        mt_diff_options o = {MT_METRIC_ALLOC_BYTES, (mt_diff_key)key, 0.05};
        mt_diff *d = mt_diff_compute(&sd, &sd, &o);
        for (int json = 0; json < 2; json++) {
            char *out = NULL;
            size_t olen = 0;
            FILE *of = open_memstream(&out, &olen);
            mt_diff_report_options ro = {0, json, 1, "a\x1b[2J", "b", "", 0};
            mt_report_diff(of, d, &ro);
            fclose(of);
            int raw = 0;
            for (size_t i = 0; i < olen; i++)
                raw |= out[i] == 0x1b || out[i] == 0x07 || (unsigned char)out[i] == 0xff ||
                       ((unsigned char)out[i] == 0xc2 && i + 1 < olen &&
                        (unsigned char)out[i + 1] == 0x9b);
            int shown = strstr(out, json ? "\"::error::evil\\u001b[31mred\\u0007\\u009b\\ufffd"
                                         : "\\x3a:error::evil\\x1b[31mred\\x07\\xc2\\x9b\\xff") != NULL;
            printf("%s: key %d, %s: no raw control character, the name shown escaped\n",
                   !raw && shown ? "PASS" : "FAIL", key, json ? "JSON" : "text");
            fails += raw || !shown;
            free(out);
        }
        mt_diff_free(d);
    }
    mt_selection_free(s);
    mt_model_free(m);
    mt_reader_close(r);
    fclose(f);
    free(buf);
    return fails != 0;
}
