/*
 * top_callers.c - the callers `memtrace top` lists under a site
 * (mt_report_top) with each caller's share of that site's value: on a
 * trace where cache_put has 4 of the 8 samples allocated, 3 reached through
 * parse and 1 through load, the site reads 50.0 % of the total and its
 * callers 75.0 % and 25.0 % (of the site, not of the total); the JSON
 * carries the same figures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/present.h"
#include "../analyze/testtrace.h"

static int write_trace(const char *path)
{
    int fd;
    mt_writer *w = tt_writer_open(path, "callers-test", 1.0, tt_resolve, &fd);
    if (!w)
        return -1;
    mt_location_code via_parse[3] = {TT_MAIN, TT_PARSE, TT_CACHE_PUT},
                     via_load[3] = {TT_MAIN, TT_LOAD, TT_CACHE_PUT}, grow[2] = {TT_MAIN, TT_GROW};
    int rc = mt_writer_put_alloc(w, TT_START + 10, 1, 3, MT_SOURCE_EXTERNAL, via_parse, 3, NULL);
    rc |= mt_writer_put_alloc(w, TT_START + 20, 1, 1, MT_SOURCE_EXTERNAL, via_load, 3, NULL);
    rc |= mt_writer_put_alloc(w, TT_START + 30, 1, 4, MT_SOURCE_EXTERNAL, grow, 2, NULL);
    rc |= mt_writer_close(w);
    close(fd);
    return rc;
}

/* The line of text holding needle, copied into line (empty when none). */
static void line_of(const char *text, const char *needle, char *line, size_t cap)
{
    const char *p = strstr(text, needle);
    line[0] = 0;
    if (!p)
        return;
    const char *b = p, *e = strchr(p, '\n');
    while (b > text && b[-1] != '\n')
        b--;
    size_t n = (size_t)((e ? e : p + strlen(p)) - b);
    snprintf(line, cap, "%.*s", (int)(n < cap ? n : cap - 1), b);
}

static char *report(const mt_selection *s, int json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    mt_top_options o = {0};
    o.metric = MT_METRIC_ALLOC_BYTES;
    o.callers = 5;
    o.json = json;
    int rc = mt_report_top(f, s, &o);
    fclose(f);
    CHECK_QUIET(rc == 0, "mt_report_top%s", json ? " --json" : "");
    return buf;
}

int main(void)
{
    char path[4096];
    if (tt_scratch_file(path, sizeof path, "top-callers") < 0 || write_trace(path) != 0) {
        CHECK(0, "the test trace is written");
        return 1;
    }
    mt_model *m = tt_load(path, 0);
    mt_selection *s = m ? mt_select(m, NULL, MT_TIME_END) : NULL;
    if (!s) {
        CHECK(0, "the model and its selection");
        return 1;
    }
    char *text = report(s, 0), site[512], parse[512], load[512];
    line_of(text, "cache_put", site, sizeof site);
    line_of(text, "<- parse", parse, sizeof parse);
    line_of(text, "<- load", load, sizeof load);
    CHECK(strstr(site, " 50.0%") != NULL, "the site cache_put is 50.0%% of the total ('%s')", site);
    CHECK(strstr(parse, " 75.0%") != NULL,
          "its caller parse brings 75.0%% of the site's bytes ('%s')", parse);
    CHECK(strstr(load, " 25.0%") != NULL,
          "its caller load brings 25.0%% of the site's bytes ('%s')", load);
    free(text);
    text = report(s, 1);
    char *cp = text ? strstr(text, "\"cache_put\"") : NULL;
    CHECK(cp && strstr(cp, "\"share\":0.500000"), "--json: the site's share is 0.5");
    free(text);
    mt_selection_free(s);
    mt_model_free(m);
    remove(path);
    return failures ? 1 : 0;
}
