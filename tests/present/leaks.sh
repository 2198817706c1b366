#!/bin/sh
# leaks.sh - `memtrace leaks` on a recorded service (tests/record/progs/
# growing.c): the leaking site is the one suspect, memory loaded at start, a
# bounded cache and churn are not; the same program with the leak bounded
# has no suspect; the OCaml fixture leak.ctf names its two leaking sites;
# --json carries the figures; --plan's advice; clear errors.
set -u
: "${MT_BUILD:=build}" "${MT_BIN:=build/memtrace}" "${MT_TMP:=/tmp}"
: "${MT_FIXTURES:=tests/fixtures/memtrace}"
# Traces are recorded with the plain build's recorder; the reports run on
# the stage's own build.
case ${MT_STAGE:-plain} in
plain) REC=$MT_BIN; P=$MT_BUILD/tests/record/progs/growing ;;
asan) REC=build/memtrace; P=build/tests/record/progs/growing; [ -x "$REC" ] || exit 77 ;;
*) echo "the recorder is not built for this stage"; exit 77 ;;
esac
[ -x "$P" ] || { echo "FAIL: $P not built (make tests-build)"; exit 1; }
T=$MT_TMP
. tests/lib.sh
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

"$REC" run --interval 4k -o "$T/growing.ctf" -- "$P" >/dev/null 2>&1 || { echo "FAIL: growing ran"; exit 1; }
"$MT_BIN" leaks --json --all --alpha 0.001 "$T/growing.ctf" >"$T/l.json" 2>"$T/l.err"
check "leaks --json exits 0" test $? -eq 0
sus=$(json "$T/l.json" '",".join(s["site"]["function"] for s in d["sites"] if s["suspect"])')
check "the leaking site is the one suspect (got '$sus')" test "$sus" = "leak_session"
for f in load_config cache_put handle; do
    v=$(json "$T/l.json" '[s["suspect"] for s in d["sites"] if s["site"]["function"]=="'$f'"]')
    check "$f is listed and not a suspect ($v)" test "$v" = "[False]"
done
g=$(json "$T/l.json" '[(s["growth_bytes_per_s"]>0, s["live_end_bytes"]>5e6, s["kept"]>0.9) for s in d["sites"] if s["suspect"]][0]')
check "the suspect grows, holds its bytes at the end and keeps them ($g)" test "$g" = "(True, True, True)"
lc=$(json "$T/l.json" '[s["growth_bytes_per_s"] for s in d["sites"] if s["site"]["function"]=="load_config"][0]')
check "memory loaded once at start does not grow (growth $lc)" test "$lc" = "0"
"$MT_BIN" leaks "$T/growing.ctf" >"$T/l.txt" 2>&1
check "the text report names the suspect" grep -q "suspect .*leak_session (tests/record/progs/growing.c" "$T/l.txt"
check "the text report lists only suspects by default" test "$(grep -c 'cache_put' "$T/l.txt")" -eq 0
# read folded (one file: the default) or whole (the forced route, a pipe):
# the same bytes, filters with stack clauses and hidden frames included
for a in "--json --all --alpha 0.001" "--all -f inside:handle" "--all --json -f hide:main --from 0.1s" \
         "--all --json --raw -f size:>=1k"; do
    "$MT_BIN" leaks $a "$T/growing.ctf" >"$T/lf.out" 2>&1; rf=$?
    "$MT_BIN" --route=whole leaks $a "$T/growing.ctf" >"$T/lw.out" 2>&1; rw=$?
    "$MT_BIN" leaks $a /dev/stdin <"$T/growing.ctf" >"$T/lp.out" 2>&1; rp=$?
    check "leaks $a: folded, whole and piped give the same bytes (exit $rf $rw $rp)" \
        sh -c "[ $rf = $rw ] && [ $rf = $rp ] && cmp -s '$T/lf.out' '$T/lw.out' && cmp -s '$T/lf.out' '$T/lp.out'"
done

# the same service with its sessions bounded: nothing to suspect
"$REC" run --interval 4k -o "$T/bounded.ctf" -- "$P" 40000 bounded >/dev/null 2>&1 || { echo "FAIL: growing bounded ran"; exit 1; }
"$MT_BIN" leaks --alpha 0.001 --json "$T/bounded.ctf" >"$T/b.json"
n=$(json "$T/b.json" 'd["n_suspects"]')
check "bounded sessions: no suspect (got $n)" test "$n" = "0"
"$MT_BIN" leaks --alpha 0.001 "$T/bounded.ctf" >"$T/b.txt"
check "no suspect: the report says so and how big a leak it could have seen" \
    grep -q "a leak would have to grow by about" "$T/b.txt"

# with verdicts (run --leaks): the suspect's sessions hang from a global
# list, so it keeps growing yet nothing of it is lost; without, no figure
lb=$(json "$T/l.json" '[s["lost_bytes"] for s in d["sites"] if s["suspect"]]')
check "without verdicts a suspect's lost bytes are null ($lb)" test "$lb" = "[None]"
if [ "${MT_STAGE:-plain}" = plain ]; then
    "$REC" run --leaks --interval 4k -o "$T/v.ctf" -- "$P" >/dev/null 2>&1
    "$MT_BIN" leaks --json "$T/v.ctf" >"$T/v.json"
    lb=$(json "$T/v.json" '[s["lost_bytes"] for s in d["sites"] if s["suspect"]]')
    check "with verdicts: the growing but reachable site has 0 bytes lost at exit ($lb)" test "$lb" = "[0]"
    "$MT_BIN" leaks "$T/v.ctf" >"$T/v.txt"
    check "with verdicts the text report has a lost-at-exit column" grep -q "lost at exit" "$T/v.txt"
fi

# the OCaml fixture: its two leaking functions, nothing else
"$MT_BIN" leaks --json "$MT_FIXTURES/leak.ctf" >"$T/o.json"
sus=$(json "$T/o.json" '",".join(sorted(s["site"]["function"] for s in d["sites"] if s["suspect"]))')
check "leak.ctf: the suspects are make_item and leak_one (got '$sus')" \
    test "$sus" = "Dune__exe__Leak.leak_one,Dune__exe__Leak.make_item"

# --plan: an interval from a rate, and back
"$MT_BIN" leaks --plan 1MiB/h >"$T/plan.txt"
check "--plan 1MiB/h in an hour among 100 sites: sample every 25.0 KiB" grep -q "sample every 25.0 KiB or less: memtrace run --interval 25588" "$T/plan.txt"
"$MT_BIN" leaks --plan 60MiB/h --within 10min --sites 10 >"$T/plan2.txt"
check "--plan scales with the rate and the run (60MiB/h, 10min, 10 sites)" grep -q "sample every 3[0-9][0-9] KiB" "$T/plan2.txt"

# errors
"$MT_BIN" leaks --plan 1MiB >/dev/null 2>"$T/e1"
rc=$?
check "--plan without a time unit: usage error (exit $rc)" test $rc -eq 2
check "... saying what a rate looks like" grep -q "expected a rate such as 1MiB/h" "$T/e1"
"$MT_BIN" leaks --from 1h "$T/growing.ctf" >/dev/null 2>"$T/e2"
rc=$?
check "--from after the trace's end: exit 1 (got $rc)" test $rc -eq 1
check "... saying so" grep -q "at or after the trace's end" "$T/e2"
"$MT_BIN" leaks "$T/missing.ctf" >/dev/null 2>"$T/e3"
check "a missing file: exit 1 with the file named" sh -c "test $? -eq 1 && grep -q missing.ctf '$T/e3'"
finish
