/*
 * recconf.c - unit test of the recorder's configuration (lib/common/recconf.h):
 * the text form 'memtrace attach' writes, read back to the same settings;
 * each value's validation, as the environment variables and the CLI's
 * options use it; the refusals, with what they say.
 */
#include <stdio.h>
#include <string.h>

#include "recconf.h"

static int failures;

static void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "PASS" : "FAIL", what);
    failures += !ok;
}

static int refused(const char *text, const char *want)
{
    mt_recconf c;
    char why[160] = "";
    int rc = mt_recconf_parse(&c, text, why, sizeof why);
    if (rc == 0 || strcmp(why, want))
        printf("  '%s': rc %d, why '%s'\n", text, rc, why);
    return rc != 0 && !strcmp(why, want);
}

int main(void)
{
    mt_recconf c = { .rate = 1.0 / 65536, .depth = 7, .unwind = MT_UNWIND_FP, .leaks = 1,
                     .file = "/tmp/a dir/app.ctf" };
    char text[256];
    mt_recconf_format(text, sizeof text, &c);
    check(!strcmp(text, "rate=1.52587890625e-05 depth=7 unwind=fp leaks=1 file=/tmp/a dir/app.ctf"),
          "format: every setting, file last");
    mt_recconf r;
    char why[160];
    check(mt_recconf_parse(&r, text, why, sizeof why) == 0 && r.rate == 1.0 / 65536 &&
              r.depth == 7 && r.unwind == MT_UNWIND_FP && r.leaks == 1 &&
              !strcmp(r.file, "/tmp/a dir/app.ctf"),
          "parse: the same settings back (a file name with a space)");
    const mt_recconf d = { .file = "/t.ctf" };
    mt_recconf_format(text, sizeof text, &d);
    check(!strcmp(text, "file=/t.ctf"), "format: defaults left out");
    check(mt_recconf_parse(&r, text, why, sizeof why) == 0 && r.rate == 0 && r.depth == 0 &&
              r.unwind == 0 && r.leaks == 0 && !strcmp(r.file, "/t.ctf"),
          "parse: defaults are 0");
    check(mt_recconf_format(text, 12, &c) == -1, "format: too long is -1");

    double rate = 0;
    check(mt_recconf_rate("1", &rate) == 0 && rate == 1, "rate 1 is in (0, 1]");
    check(mt_recconf_rate("0", &rate) != 0 && mt_recconf_rate("1.5", &rate) != 0 &&
              mt_recconf_rate("nan", &rate) != 0 && mt_recconf_rate("1e-3x", &rate) != 0 &&
              mt_recconf_rate("", &rate) != 0,
          "rate: 0, above 1, nan, trailing text, empty refused");
    int depth = 0;
    check(mt_recconf_depth("1024", &depth) == 0 && depth == 1024 &&
              mt_recconf_depth("1025", &depth) != 0 && mt_recconf_depth("0", &depth) != 0 &&
              mt_recconf_depth("99999999999999999999", &depth) != 0,
          "depth: [1, 1024]");
    check(mt_recconf_unwind("auto") == MT_UNWIND_AUTO && mt_recconf_unwind("dwarf") ==
              MT_UNWIND_DWARF && mt_recconf_unwind("FP") < 0, "unwind: fp, dwarf, auto");
    mt_recconf e = {0};
    check(mt_recconf_set(&e, MT_RC_LEAKS, "0") == 0 && e.leaks == 0 &&
              mt_recconf_set(&e, MT_RC_LEAKS, "yes") == 0 && e.leaks == 1,
          "leaks: 0 off, any other value on (as MEMTRACE_LEAKS)");
    check(!strcmp(mt_recconf_env(MT_RC_FILE), "MEMTRACE") &&
              !strcmp(mt_recconf_env(MT_RC_RATE), "MEMTRACE_RATE") &&
              !strcmp(mt_recconf_env(MT_RC_DEPTH), "MEMTRACE_DEPTH"),
          "the variables users know");

    check(refused("rate=2 file=/x", "rate=2: expected a probability per byte in (0, 1]"),
          "parse: a bad rate says so");
    check(refused("depth=0 file=/x",
                  "depth=0: expected a number of frames per call stack in [1, 1024]"),
          "parse: a bad depth says so");
    check(refused("speed=3 file=/x", "unknown key 'speed'"), "parse: an unknown key");
    check(refused("rate=0.5", "no file="), "parse: no file");
    check(refused("0.5 /x", "'0.5 /x': expected KEY=VALUE"), "parse: the old form refused");
    check(refused("file=", "file=: expected a file name"), "parse: an empty file");
    return failures ? 1 : 0;
}
