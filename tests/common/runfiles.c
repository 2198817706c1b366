/*
 * runfiles.c - unit test of the names of a run's files
 * (lib/common/runfiles.h): each name the recorder, 'memtrace run' and the
 * viewer write, spelled out by hand from its parts, and read back to the
 * same parts; the names beside a trace that are not the run's.
 */
#include <stdio.h>
#include <string.h>

#include "runfiles.h"

static int failures;

static void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "PASS" : "FAIL", what);
    failures += !ok;
}

int main(void)
{
    static const struct { mt_runname n; const char *name; } made[] = {
        {{0, 0, 0, 0, MT_RUNFILE_TRACE}, "app.ctf"},
        {{3, 0, 0, 0, MT_RUNFILE_TRACE}, "app.ctf-0003"},
        {{12345, 0, 0, 0, MT_RUNFILE_TRACE}, "app.ctf-12345"},
        {{0, 4242, 0, 0, MT_RUNFILE_TRACE}, "app.ctf.4242"},
        {{0, 4242, 2, 0, MT_RUNFILE_TRACE}, "app.ctf.4242.2"},
        {{1, 77, 0, 0, MT_RUNFILE_TRACE}, "app.ctf-0001.77"},
        {{0, 0, 0, 1, MT_RUNFILE_TRACE}, "app.ctf.part0001"},
        {{0, 0, 0, 10000, MT_RUNFILE_TRACE}, "app.ctf.part10000"},
        {{2, 77, 1, 5, MT_RUNFILE_TRACE}, "app.ctf-0002.77.1.part0005"},
        {{0, 0, 0, 0, MT_RUNFILE_RSS}, "app.ctf.rss"},
        {{0, 4242, 0, 3, MT_RUNFILE_RSS}, "app.ctf.4242.part0003.rss"},
        {{0, 0, 0, 0, MT_RUNFILE_INDEX}, "app.ctf.mtidx"},
        {{0, 0, 0, 0, MT_RUNFILE_LEAKS}, "app.ctf.leaks"},
        {{7, 0, 0, 0, MT_RUNFILE_LEAKS}, "app.ctf-0007.leaks"},
    };
    for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) {
        char out[128], what[256];
        int len = mt_runname_make(out, sizeof out, "app.ctf", &made[i].n);
        snprintf(what, sizeof what, "make %s (got %s)", made[i].name, out);
        check(len == (int)strlen(made[i].name) && !strcmp(out, made[i].name), what);
        mt_runname back;
        memset(&back, 0xff, sizeof back);
        int ok = mt_runname_parse("dir/app.ctf", made[i].name, &back) &&
                 back.period == made[i].n.period && back.pid == made[i].n.pid &&
                 back.again == made[i].n.again && back.piece == made[i].n.piece &&
                 back.kind == made[i].n.kind;
        snprintf(what, sizeof what, "parse %s back to its parts", made[i].name);
        check(ok, what);
    }
    /* a path: the directory of neither counts */
    check(mt_runname_parse("/tmp/a/app.ctf", "/var/b/app.ctf.12", NULL),
          "parse: directories are not compared");

    static const char *const not_ours[] = {
        "app.ct", "app.ctfx", "app.ctf.", "app.ctf-", "app.ctf-x", "app.ctf.x12",
        "app.ctf.12x", "app.ctf.12.", "app.ctf.part", "app.ctf.partx", "app.ctf.part0001x",
        "app.ctf.rss.rss", "app.ctf.mtidx.tmp.12", "app.ctf.tmp", "app.ctf.12.3.4",
        "other.ctf.12", "app.ctf.1234567890123",
    };
    for (size_t i = 0; i < sizeof not_ours / sizeof not_ours[0]; i++) {
        char what[128];
        snprintf(what, sizeof what, "not a run file: %s", not_ours[i]);
        check(!mt_runname_parse("app.ctf", not_ours[i], NULL), what);
    }

    /* a cut name says so */
    char small[8];
    mt_runname pid = {0, 4242, 0, 0, MT_RUNFILE_TRACE};
    check(mt_runname_make(small, sizeof small, "app.ctf", &pid) == -1, "make: too long: -1");

    size_t stem = 0;
    check(mt_runname_piece("d.x/app.ctf.12.part0007", &stem) == 7 && stem == 14,
          "piece: 7 of stem d.x/app.ctf.12");
    check(mt_runname_piece("app.ctf.part0007.rss", &stem) == 0, "piece: a sidecar is none");
    check(mt_runname_piece("app.ctf", &stem) == 0, "piece: none");

    char out[128];
    mt_runname_default(out, sizeof out, "sqlite3", 99);
    check(!strcmp(out, "sqlite3.99.ctf"), "default trace: CMD.PID.ctf");
    mt_runname_pprof(out, sizeof out, "/p", "svc.ctf", 99, 1700000000);
    check(!strcmp(out, "/p/svc.ctf.99.1700000000.pb.gz"), "pprof snapshot name");
    mt_runname_snapshot_copy(out, sizeof out, "/p", "svc.ctf", 99);
    check(!strcmp(out, "/p/.svc.ctf.99.snapshot.ctf"), "snapshot copy name");
    mt_runname_side(out, sizeof out, "/d/app.ctf.77", MT_RUNFILE_LEAKS);
    check(!strcmp(out, "/d/app.ctf.77.leaks"), "side: TRACE.leaks");
    mt_runname_side(out, sizeof out, "/d/app.ctf", MT_RUNFILE_INDEX);
    check(!strcmp(out, "/d/app.ctf.mtidx"), "side: TRACE.mtidx");
    check(mt_runname_side(small, sizeof small, "app.ctf", MT_RUNFILE_RSS) == -1,
          "side: too long: -1");
    /* FNV-1a 64 of "/data/runs/app.ctf", worked out apart */
    mt_runname_index_cached(out, sizeof out, "/c/memtrace", "/data/runs/app.ctf");
    check(!strcmp(out, "/c/memtrace/app.ctf-65185c52aa363f40.mtidx"),
          "index in the cache: DIR/NAME-HASH.mtidx");
    return failures ? 1 : 0;
}
