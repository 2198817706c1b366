#!/bin/sh
# check.sh - MT_ASSERT (lib/common/check.h): with MT_CHECKS=1 a broken
# invariant stops the program with SIGABRT after one line on stderr,
# "memtrace: assertion failed: FILE:LINE: CONDITION", written without stdio
# (so from a signal handler too, and with stdout closed); without it the
# condition is compiled out (not evaluated, not in the binary). Then the
# build under test: a build made with CHECKS=1 (every build `make test`
# makes) checks its invariants (the recorder's lock released twice, the
# live-memory curve fed a time that goes back through the public API),
# a release build carries none of them.
set -u
. tests/lib.sh
T=$MT_TMP
CC=${CC:-cc}

# 1. The header alone, both ways: a condition with a side effect shows
#    whether it was evaluated.
cat >"$T/tiny.c" <<'EOF'
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
static int evaluated;
static int broken(void) { evaluated = 1; return 0; }
static void on_usr1(int sig) { (void)sig; MT_ASSERT(broken() || sig == 0); }
int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "handler") == 0) {
        signal(SIGUSR1, on_usr1);
        close(1);                       /* no stdio needed */
        raise(SIGUSR1);
    } else {
        MT_ASSERT(argc > 1 && broken());
    }
    printf("went on, evaluated=%d\n", evaluated);
    return 0;
}
EOF
line=$(grep -n 'MT_ASSERT(argc > 1' "$T/tiny.c" | cut -d: -f1)
hline=$(grep -n 'MT_ASSERT(broken() || sig' "$T/tiny.c" | cut -d: -f1)
$CC -std=gnu11 -Wall -Wextra -Werror -Ilib/common -DMT_CHECKS=1 -o "$T/tiny-checks" "$T/tiny.c" ||
    fail "tiny program builds with MT_CHECKS=1"
$CC -std=gnu11 -Wall -Wextra -Werror -Ilib/common -o "$T/tiny-release" "$T/tiny.c" ||
    fail "tiny program builds without MT_CHECKS"

"$T/tiny-checks" >"$T/out" 2>"$T/err"; rc=$?
want="memtrace: assertion failed: $T/tiny.c:$line: argc > 1 && broken()"
if [ $rc = 134 ] && [ "$(head -n 1 "$T/err")" = "$want" ] && [ ! -s "$T/out" ]; then
    pass "MT_CHECKS=1: a broken invariant aborts (status $rc) with exactly: $want"
else
    fail "MT_CHECKS=1: status $rc (want 134, SIGABRT), stderr: $(head -n 1 "$T/err" | head -c 300)"
fi
"$T/tiny-checks" handler >"$T/out" 2>"$T/err"; rc=$?
want="memtrace: assertion failed: $T/tiny.c:$hline: broken() || sig == 0"
if [ $rc = 134 ] && [ "$(head -n 1 "$T/err")" = "$want" ]; then pass "MT_CHECKS=1: from a signal handler with stdout closed, the same line and SIGABRT (status $rc)"; else fail "MT_CHECKS=1: from a signal handler with stdout closed, the same line and SIGABRT (status $rc)"; fi

"$T/tiny-release" >"$T/out" 2>"$T/err"; rc=$?
if [ $rc = 0 ] && [ "$(cat "$T/out")" = "went on, evaluated=0" ] && [ ! -s "$T/err" ]; then pass "without MT_CHECKS: the program goes on, the condition never evaluated (status $rc: $(cat "$T/out"))"; else fail "without MT_CHECKS: the program goes on, the condition never evaluated (status $rc: $(cat "$T/out"))"; fi
n=$(grep -c 'argc > 1 && broken' "$T/tiny-release")
if [ "$n" = 0 ]; then pass "without MT_CHECKS: the condition's text is not in the binary ($n matches)"; else fail "without MT_CHECKS: the condition's text is not in the binary ($n matches)"; fi

# 2. The build under test: its flags say whether it checks (Makefile:
#    $(BUILD)/gen/cflags, the compiler line of every object).
flags=$MT_BUILD/gen/cflags
[ -f "$flags" ] || { fail "$flags missing (the Makefile writes it)"; finish; }
case " $(cat "$flags") " in
    *" -DMT_CHECKS=1 "*) checks=1 ;;
    *) checks=0 ;;
esac
nlib=$(grep -c 'memtrace: assertion failed: ' "$MT_BUILD/libmemtrace.so")
nconds=$(grep -c 'was == 1 || was == 2' "$MT_BUILD/libmemtrace.so")
if [ $checks = 1 ]; then
    if [ "$nlib" -ge 1 ] && [ "$nconds" -ge 1 ]; then pass "this build checks (CHECKS=1): the recorder's library carries the assertions"; else fail "this build checks (CHECKS=1): the recorder's library carries the assertions"; fi
else
    if [ "$nlib" = 0 ] && [ "$nconds" = 0 ]; then pass "this build is a release build: no assertion in the recorder's library ($nlib, $nconds)"; else fail "this build is a release build: no assertion in the recorder's library ($nlib, $nconds)"; fi
fi

# The recorder's lock (lib/record/lock.h) released when nobody holds it,
# compiled with this build's own compiler line.
cat >"$T/lock.c" <<'EOF'
#include <stdio.h>
#include "lock.h"
int main(void)
{
    int w = 0;
    mtr_lock(&w);
    mtr_unlock(&w);
    mtr_unlock(&w);   /* the second release: the lock is free */
    printf("released twice\n");
    return 0;
}
EOF
# shellcheck disable=SC2046
$(cat "$flags") -Ilib/record -o "$T/lock" "$T/lock.c" 2>"$T/cc.err" ||
    fail "lock test builds: $(head -n 3 "$T/cc.err")"
"$T/lock" >"$T/out" 2>"$T/err"; rc=$?
if [ $checks = 1 ]; then
    if [ $rc = 134 ] && grep -q '^memtrace: assertion failed: lib/record/lock.h:[0-9]*: was == 1 || was == 2$' "$T/err"; then pass "CHECKS=1: the recorder's lock released twice aborts naming lib/record/lock.h (status $rc)"; else fail "CHECKS=1: the recorder's lock released twice aborts naming lib/record/lock.h (status $rc)"; fi
else
    if [ $rc = 0 ]; then pass "release: the lock released twice is not checked (status $rc)"; else fail "release: the lock released twice is not checked (status $rc)"; fi
fi

# The public API: mt_curve_acc_event (memtrace/stream.h) is given times
# that never decrease; a time that goes back is caught inside the analysis
# library as this build made it.
cat >"$T/curve.c" <<'EOF'
#include <stdio.h>
#include "memtrace/stream.h"
int main(void)
{
    mt_curve_acc *c = mt_curve_acc_new(16, 1000);
    if (!c)
        return 3;
    mt_curve_acc_event(c, 5000, 10, 10, 10);
    mt_curve_acc_event(c, 4000, -10, -10, 0);   /* back in time: a caller's bug */
    mt_curve_acc_free(c);
    printf("fed\n");
    return 0;
}
EOF
# shellcheck disable=SC2046
$(cat "$flags") -o "$T/curve" "$T/curve.c" "$MT_BUILD/libmemtrace-analyze.a" \
    "$MT_BUILD/libmemtrace-trace.a" -lpcre2-8 -lz -lm -lpthread 2>"$T/cc.err" ||
    fail "curve test builds: $(head -n 3 "$T/cc.err")"
"$T/curve" >"$T/out" 2>"$T/err"; rc=$?
if [ $checks = 1 ]; then
    if [ $rc = 134 ] && grep -q '^memtrace: assertion failed: lib/analyze/curveacc.c:[0-9]*: !c->open || t >= c->t$' "$T/err"; then pass "CHECKS=1: a curve fed a time that goes back aborts naming lib/analyze/curveacc.c (status $rc)"; else fail "CHECKS=1: a curve fed a time that goes back aborts naming lib/analyze/curveacc.c (status $rc)"; fi
else
    if [ $rc = 0 ] && [ "$(cat "$T/out")" = fed ]; then pass "release: the curve's time order is not checked (status $rc, $(cat "$T/out"))"; else fail "release: the curve's time order is not checked (status $rc, $(cat "$T/out"))"; fi
fi
finish
