#!/bin/sh
# check_runs.sh - 'memtrace check' on runs of tests/record/progs/diffsites.c,
# whose true totals it prints:
#  - a budget set exactly at the truth (the worst case for a false failure)
#    fails in at most alpha = 5% of runs: at most 5 of 30 (P(>= 6) < 1%);
#    a check that failed whenever the estimate is above would fail half;
#  - a budget 20% below the truth fails every time, with exit 1;
#  - --max-increase: the same program against itself at 0% allowed fails in
#    at most 5 of 30 pairs; a doubled site with 30% allowed fails;
#  - JUnit XML and GitHub Actions annotations; trouble exits 2.
. tests/record/progs/lib.sh
skip_under_tsan
# Under the sanitizer stage the CLI (MT_BIN) is sanitized, but a sanitized
# recorder cannot be preloaded into plain programs: record with the plain
# build's (the stage after it), or skip when there is none.
if [ "${MT_STAGE:-plain}" != plain ]; then
    [ -f build/libmemtrace.so ] && [ -d build/tests/record/progs ] || exit 77
    LIB=$PWD/build/libmemtrace.so PROGS=build/tests/record/progs
fi
P=$PROGS/diffsites
[ -x "$P" ] || { fail "$P not built"; finish; }
R=$(awk 'BEGIN { printf "%.17g", 1 / 16384 }')
preload "$T/base.ctf" "$R" "$P" >"$T/truth.txt" || fail "recorded"
alloc=$(awk '$1 == "TRUTH" { s += $3 } END { print s }' "$T/truth.txt")
live=$(awk '$1 == "TRUTH" { s += $4 } END { print s }' "$T/truth.txt")
runs=30 f_alloc=0 f_live=0 f_inc=0 bad=0 i=0
while [ $i -lt $runs ]; do
    preload "$T/a.ctf" "$R" "$P" >/dev/null || bad=$((bad + 1))
    "$MT_BIN" check --site site_ --max-alloc "$alloc" "$T/a.ctf" >"$T/out" 2>&1
    case $? in 0) ;; 1) f_alloc=$((f_alloc + 1)) ;; *) bad=$((bad + 1)) ;; esac
    "$MT_BIN" check --site site_ --max-live-end "$live" "$T/a.ctf" >"$T/out" 2>&1
    case $? in 0) ;; 1) f_live=$((f_live + 1)) ;; *) bad=$((bad + 1)) ;; esac
    preload "$T/b.ctf" "$R" "$P" >/dev/null || bad=$((bad + 1))   # a base of its own: pairs independent
    "$MT_BIN" check --site site_ --by alloc --max-increase 0% --base "$T/b.ctf" "$T/a.ctf" >"$T/out" 2>&1
    case $? in 0) ;; 1) f_inc=$((f_inc + 1)) ;; *) bad=$((bad + 1)) ;; esac
    i=$((i + 1))
done
check "every run recorded and checked (no exit 2)" [ "$bad" = 0 ]
check "allocated bytes at exactly the budget: $f_alloc of $runs runs fail (at most 5)" [ "$f_alloc" -le 5 ]
check "live bytes at the end at exactly the budget: $f_live of $runs runs fail (at most 5)" [ "$f_live" -le 5 ]
check "no increase, none allowed: $f_inc of $runs pairs fail (at most 5)" [ "$f_inc" -le 5 ]

under=$(awk -v a="$alloc" 'BEGIN { printf "%.0f", a * 0.8 }')
"$MT_BIN" check --site site_ --max-alloc "$under" "$T/base.ctf" >"$T/out" 2>&1
check "20% over the budget: exit 1" [ $? = 1 ]
check "20% over the budget: says exceeded and how sure" grep -q "FAIL .*exceeded (>99.99% sure" "$T/out"
under=$(awk -v a="$live" 'BEGIN { printf "%.0f", a * 0.8 }')
"$MT_BIN" check --site site_ --max-live-end "$under" --max-peak 1G "$T/base.ctf" >"$T/out" 2>&1
check "live at the end 20% over, peak far below: exit 1" [ $? = 1 ]
check "... one FAIL and one ok line" [ "$(grep -c '^  FAIL' "$T/out")" = 1 -a "$(grep -c '^  ok' "$T/out")" = 1 ]

# (at a 4 KiB interval: a doubling of one site is then about 8 standard errors)
R4=$(awk 'BEGIN { printf "%.17g", 1 / 4096 }')
preload "$T/base4.ctf" "$R4" "$P" >/dev/null
preload "$T/new.ctf" "$R4" "$P" 7 >/dev/null
"$MT_BIN" check --site site_07 --by alloc --max-increase 30% --base "$T/base4.ctf" "$T/new.ctf" >"$T/out" 2>&1
check "a doubled site, 30% allowed: exit 1" [ $? = 1 ]
"$MT_BIN" check --site site_07 --by alloc --max-increase 300% --base "$T/base4.ctf" "$T/new.ctf" >"$T/out" 2>&1
check "a doubled site, 300% allowed: exit 0" [ $? = 0 ]

# JUnit XML and CI annotations.
GITHUB_ACTIONS=true "$MT_BIN" check --site site_ --max-alloc 1M --max-live-end 1G --junit "$T/j.xml" --name 'unit <tests>' "$T/base.ctf" >"$T/out" 2>&1
check "junit run: exit 1" [ $? = 1 ]
check "GitHub Actions annotation for the failure" grep -q '^::error title=memtrace check::unit <tests>: allocated bytes' "$T/out"
check "JUnit XML: well formed, 2 tests, 1 failure, escaped name" python3 -c '
import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot(); s = r.find("testsuite")
cases = s.findall("testcase")
ok = s.get("tests") == "2" and s.get("failures") == "1" and len(cases) == 2
ok = ok and cases[0].find("failure") is not None and cases[1].find("failure") is None
ok = ok and s.get("name") == "memtrace check: unit <tests>"
sys.exit(not ok)' "$T/j.xml"

# Trouble.
"$MT_BIN" check --max-peak 1M "$T/missing.ctf" >/dev/null 2>&1
check "missing trace: exit 2" [ $? = 2 ]
"$MT_BIN" check "$T/base.ctf" >/dev/null 2>&1
check "no budget: exit 2" [ $? = 2 ]
"$MT_BIN" check --max-increase 10% "$T/base.ctf" >/dev/null 2>&1
check "--max-increase without --base: exit 2" [ $? = 2 ]
"$MT_BIN" check --max-peak 12parsecs "$T/base.ctf" >"$T/out" 2>&1
check "a bad size: exit 2, explained" [ $? = 2 ] && grep -q "expected a size" "$T/out"
"$MT_BIN" check --max-peak 1M --junit /nonexistent/dir/j.xml "$T/base.ctf" >/dev/null 2>&1
check "unwritable --junit: exit 2" [ $? = 2 ]
finish
