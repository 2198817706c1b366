/*
 * compare.c - unit test of the comparison API (lib/analyze/compare.c) on
 * a fixture: a trace against itself differs nowhere; call-path names are
 * spelt out in full, sized with cap 0 and clipped (terminated) in short
 * buffers; entries of every key carry their function; the window parser's
 * answers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/load.h"
#include "memtrace/compare.h"
#include "../check.h"


int main(void)
{
    const char *dir = getenv("MT_FIXTURES");
    char path[1024];
    snprintf(path, sizeof path, "%s/wrap.ctf", dir ? dir : "tests/fixtures/memtrace");
    char *err = NULL;
    mt_model *m = mt_model_load(path, NULL, &err);
    if (!m) {
        printf("FAIL: load %s: %s\n", path, err ? err : "?");
        return 1;
    }
    mt_selection *s = mt_select(m, NULL, MT_TIME_END);
    mt_diff_side side = mt_diff_side_all(s, MT_TIME_END);
    for (int key = 0; key < 3; key++) {
        mt_diff_options o = {MT_METRIC_ALLOC_BYTES, (mt_diff_key)key, 0.05};
        mt_diff *d = mt_diff_compute(&side, &side, &o);
        CHECK(d != NULL, "computed");
        if (!d)
            continue;
        int zero = 1, names = 1, clip = 1, funcs = 1;
        for (size_t i = 0; i < d->n; i++) {
            const mt_diff_entry *e = &d->entries[i];
            zero &= e->delta == 0 && e->p == 1 && !e->significant;
            size_t len = mt_diff_entry_name(d, e, NULL, 0);
            char *full = malloc(len + 1);
            size_t len2 = mt_diff_entry_name(d, e, full, len + 1);
            names &= len2 == len && strlen(full) == len && len > 0;
            if (key == MT_DIFF_PATH)
                names &= (e->name == NULL) && strlen(e->function) <= len &&
                         !strcmp(full + len - strlen(e->function), e->function);
            char small[6];
            memset(small, 'x', sizeof small);
            mt_diff_entry_name(d, e, small, sizeof small);
            clip &= strlen(small) == (len < 5 ? len : 5) && !strncmp(small, full, strlen(small));
            funcs &= e->function && e->function[0];
            free(full);
        }
        char what[128];
        snprintf(what, sizeof what, "key %d: %zu entries, against itself nothing differs", key, d->n);
        CHECK(zero && d->n > 0 && d->n_significant == 0, "%s", what);
        snprintf(what, sizeof what, "key %d: names sized with cap 0 and spelt in full", key);
        CHECK(names, "%s", what);
        snprintf(what, sizeof what, "key %d: names clipped and terminated in a short buffer", key);
        CHECK(clip, "%s", what);
        snprintf(what, sizeof what, "key %d: every entry has its function", key);
        CHECK(funcs, "%s", what);
        mt_diff_free(d);
    }
    mt_diff_side w = {0};
    int r = -1;
    CHECK(mt_diff_parse_window("0-2s", &w, &r, NULL) == 0 && r == 1 && w.from == 0 && w.to == 2000000,
          "window 0-2s is a range");
    CHECK(mt_diff_parse_window("8s-", &w, &r, NULL) == 0 && r == 1 && w.from == 8000000 && w.to == MT_TIME_END,
          "window 8s- runs to the end");
    CHECK(mt_diff_parse_window("peak", &w, &r, NULL) == 0 && r == 0 && w.at == MT_TIME_PEAK,
          "window peak is a moment");
    CHECK(mt_diff_parse_window("3s-1s", &w, &r, &err) < 0 && err && strstr(err, "empty"),
          "window 3s-1s is refused with a reason");
    free(err);
    mt_selection_free(s);
    mt_model_free(m);
    return failures != 0;
}
