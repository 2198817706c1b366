/*
 * verdicts.c - unit test of lib/trace/verdicts.c, the reader of a trace's
 * leak verdicts (TRACE.leaks, docs/format.md "Leak verdicts"): each
 * allocation id gets the verdict its line gives and every other id none;
 * no file is no verdicts and no warning; a file of another recording, a
 * bad header or scan line give no verdicts and one warning naming the
 * file and the line; a bad, over-long or out-of-order line stops reading
 * there with one warning, keeping the verdicts before it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memtrace/trace.h"
#include "trace/verdicts.h"
#include "../check.h"

static char warned[1024];
static int nwarned;

static void on_warning(void *ctx, const char *msg)
{
    (void)ctx;
    nwarned++;
    snprintf(warned, sizeof warned, "%s", msg);
}

static char trace[4096], leaks[4200];

/* Writes TRACE.leaks with text, loads it for a trace of pid 4242 started
 * at 1000000 us. */
static mtt_verdicts *load(const char *text)
{
    nwarned = 0;
    warned[0] = '\0';
    unlink(leaks);
    if (text) {
        FILE *f = fopen(leaks, "w");
        if (!f)
            return NULL;
        fputs(text, f);
        fclose(f);
    }
    mt_trace_info info;
    memset(&info, 0, sizeof info);
    info.pid = 4242;
    info.start_time = 1000000;
    return mtt_verdicts_load(trace, &info, on_warning, NULL);
}

#define HEAD "memtrace-leaks 1 4242 1000000\nscan 2000000 heap 2 1 0 10 20 30 40 50\n"

int main(void)
{
    const char *tmp = getenv("MT_TMP");
    snprintf(trace, sizeof trace, "%s/t.ctf", tmp && *tmp ? tmp : "/tmp");
    snprintf(leaks, sizeof leaks, "%s.leaks", trace);
    FILE *f = fopen(trace, "w");   /* the trace: the side file goes with it */
    CHECK(f != NULL, "trace file %s made", trace);
    if (!f)
        return 1;
    fclose(f);

    mtt_verdicts *v = load(NULL);
    CHECK(!v && nwarned == 0, "no TRACE.leaks: no verdicts, no warning (%d)", nwarned);

    v = load(HEAD "2 lost\n5 reachable\n9 lost\n");
    CHECK(v != NULL && nwarned == 0, "a good file loads without a warning (%d: %s)", nwarned,
          warned);
    if (v) {
        CHECK(mtt_verdict_of(v, 2) == MT_VERDICT_LOST && mtt_verdict_of(v, 5) ==
                  MT_VERDICT_REACHABLE && mtt_verdict_of(v, 9) == MT_VERDICT_LOST,
              "ids 2, 5, 9: lost, reachable, lost");
        CHECK(mtt_verdict_of(v, 0) == MT_VERDICT_NONE && mtt_verdict_of(v, 3) == MT_VERDICT_NONE &&
                  mtt_verdict_of(v, 10) == MT_VERDICT_NONE,
              "ids without a line (0, 3, 10): no verdict");
        CHECK(mtt_verdicts_time(v) == 2000000, "the scan's time: %lld us",
              (long long)mtt_verdicts_time(v));
        mtt_verdicts_free(v);
    }

    v = load("memtrace-leaks 1 4243 1000000\nscan 2000000 heap\n2 lost\n");
    CHECK(!v && nwarned == 1 && strstr(warned, "written by another recording (pid 4243") &&
              strstr(warned, "t.ctf.leaks"),
          "another recording's file (pid 4243): ignored with one warning: %s", warned);
    v = load("memtrace-leaks 1 4242 999999\nscan 2000000 heap\n2 lost\n");
    CHECK(!v && nwarned == 1 && strstr(warned, "another recording"),
          "another start time: ignored: %s", warned);
    v = load("memtrace-leaks 2 4242 1000000\nscan 2000000 heap\n2 lost\n");
    CHECK(!v && nwarned == 1 && strstr(warned, "line 1: not a memtrace-leaks version 1 header"),
          "version 2: refused: %s", warned);
    v = load("memtrace-leaks 1 4242 1000000\nscan 999 heap\n2 lost\n");
    CHECK(!v && nwarned == 1 && strstr(warned, "line 2: not a scan line"),
          "a scan before the recording started: refused: %s", warned);

    v = load(HEAD "2 lost\n7 maybe\n9 lost\n");
    CHECK(v && nwarned == 1 && strstr(warned, "line 4: expected \"ID lost\" or \"ID reachable\""),
          "a bad line: one warning with its number: %s", warned);
    if (v) {
        CHECK(mtt_verdict_of(v, 2) == MT_VERDICT_LOST && mtt_verdict_of(v, 7) == MT_VERDICT_NONE &&
                  mtt_verdict_of(v, 9) == MT_VERDICT_NONE,
              "the verdicts before a bad line kept, none after it");
        mtt_verdicts_free(v);
    }
    v = load(HEAD "5 lost\n3 reachable\n");
    CHECK(v && nwarned == 1 && strstr(warned, "line 4: ids must increase") &&
              mtt_verdict_of(v, 5) == MT_VERDICT_LOST && mtt_verdict_of(v, 3) == MT_VERDICT_NONE,
          "ids that go back: stop there: %s", warned);
    mtt_verdicts_free(v);

    char big[1024];
    memset(big, '1', 300);
    strcpy(big + 300, " lost\n");
    char text[2048];
    snprintf(text, sizeof text, HEAD "4 reachable\n%s8 lost\n", big);
    v = load(text);
    CHECK(v && nwarned == 1 && strstr(warned, "line 4: longer than any the recorder writes") &&
              mtt_verdict_of(v, 4) == MT_VERDICT_REACHABLE && mtt_verdict_of(v, 8) == MT_VERDICT_NONE,
          "a line of 306 bytes: stop there: %s", warned);
    mtt_verdicts_free(v);

    unlink(leaks);
    unlink(trace);
    return failures != 0;
}
