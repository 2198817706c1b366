#!/bin/sh
# leaks_file.sh - the reader's side of the leak verdicts (TRACE.leaks beside
# a trace; docs/format.md, "Leak verdicts"): a good file gives allocations
# their verdicts (stats counts them); a file of another recording, a line
# that is not a verdict, a line longer than the recorder writes, ids that
# go back, a symbolic link: a warning naming
# the file (and line), the lines before kept, never a failure; a trace
# without the file prints what it printed before.
set -u
: "${MT_BIN:?}" "${MT_FIXTURES:?}" "${MT_TMP:?}"
fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
T=$MT_TMP/t.ctf
cp "$MT_FIXTURES/rate1.ctf" "$T"
field() { grep -o "\"$1\":[0-9]*" "$MT_TMP/j" | cut -d: -f2; }
stats() { "$MT_BIN" stats --json "$T" >"$MT_TMP/j" 2>"$MT_TMP/w"; }

stats; cp "$MT_TMP/j" "$MT_TMP/before"
grep -q lost_bytes "$MT_TMP/j" && fail "no file: no lost_bytes field" || pass "no file: no lost_bytes field"

printf 'memtrace-leaks 1 11754 1795331518528353\nscan 1795331518529000 heap 1 1 0 5 0 0 0 1\n0 lost\n1 reachable\n' >"$T.leaks"
stats
[ "$(field lost_sampled_blocks)" = 1 ] && [ "$(field reachable_sampled_blocks)" = 1 ] && [ ! -s "$MT_TMP/w" ] &&
    pass "a good file: one lost, one reachable, no warning" || fail "a good file: $(cat "$MT_TMP/w")"
"$MT_BIN" top --by lost "$T" >/dev/null 2>&1 && pass "top --by lost reads it" || fail "top --by lost reads it"

printf 'memtrace-leaks 1 1 1795331518528353\nscan 1795331518529000 heap\n0 lost\n' >"$T.leaks"
stats
! grep -q lost_bytes "$MT_TMP/j" && grep -q "t.ctf.leaks: written by another recording" "$MT_TMP/w" &&
    pass "another recording's file: ignored with a warning" || fail "another recording's file: $(cat "$MT_TMP/w")"

printf 'memtrace-leaks 1 11754 1795331518528353\nscan 1795331518529000 heap\n0 lost\n1 reachable\nx y\n2 lost\n' >"$T.leaks"
stats
[ "$(field lost_sampled_blocks)" = 1 ] && grep -q "t.ctf.leaks: line 5: expected" "$MT_TMP/w" &&
    pass "a bad line: a warning with its number, the lines before kept" || fail "a bad line: $(cat "$MT_TMP/w")"

printf 'memtrace-leaks 1 11754 1795331518528353\nscan 1795331518529000 heap\n1 lost\n0 reachable\n' >"$T.leaks"
stats
[ "$(field lost_sampled_blocks)" = 1 ] && [ "$(field reachable_sampled_blocks)" = 0 ] &&
    grep -q "line 4: ids must increase" "$MT_TMP/w" &&
    pass "ids going back: a warning, the lines before kept" || fail "ids going back: $(cat "$MT_TMP/w")"

printf 'garbage\n' >"$T.leaks"
stats
grep -q "line 1: not a memtrace-leaks version 1 header" "$MT_TMP/w" && cmp -s "$MT_TMP/j" "$MT_TMP/before" &&
    pass "not a verdict file: a warning, the report as without one" || fail "not a verdict file: $(cat "$MT_TMP/w")"

{ printf 'memtrace-leaks 1 11754 1795331518528353\nscan 1795331518529000 heap\n0 lost\n'
  printf '%0300d\n' 0; printf '1 reachable\n'; } >"$T.leaks"
stats
[ "$(field lost_sampled_blocks)" = 1 ] && [ "$(field reachable_sampled_blocks)" = 0 ] &&
    grep -q "t.ctf.leaks: line 4: longer than any the recorder writes (255 bytes)" "$MT_TMP/w" &&
    pass "a line over 255 bytes: a warning with its number, the lines before kept" ||
    fail "a line over 255 bytes: $(cat "$MT_TMP/w")"

printf 'memtrace-leaks 1 11754 1795331518528353\nscan 1795331518529000 heap\n0 lost\n' >"$MT_TMP/real.leaks"
rm -f "$T.leaks"; ln -s "$MT_TMP/real.leaks" "$T.leaks"
stats
! grep -q lost_bytes "$MT_TMP/j" && [ -s "$MT_TMP/w" ] &&
    pass "a symbolic link: not followed, a warning" || fail "a symbolic link: $(cat "$MT_TMP/w")"
rm -f "$T.leaks"
[ "$fails" = 0 ]
