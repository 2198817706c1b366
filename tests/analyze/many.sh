#!/bin/sh
# many.sh - several traces as one: a process tree (forker fork: app.ctf and
# one app.ctf.<pid> per child) given to the reports at once is aggregated:
# totals, samples and live bytes are the sums of the files', sites add up
# across processes, --by-process splits folded stacks (and call paths) by
# process with an outermost "[pid N exe]" frame, diff and check take
# several files per side; traces at two sampling rates are refused.
. tests/record/progs/lib.sh
skip_under_tsan
# Under the sanitizer stage the CLI (MT_BIN) is sanitized, but a sanitized
# recorder cannot be preloaded into plain programs: record with the plain
# build's (the stage after it), or skip when there is none.
if [ "${MT_STAGE:-plain}" != plain ]; then
    [ -f build/libmemtrace.so ] && [ -d build/tests/record/progs ] || exit 77
    LIB=$PWD/build/libmemtrace.so PROGS=build/tests/record/progs
fi
preload "$T/app.ctf" 0.0001 "$PROGS/forker" fork >/dev/null || fail "forker ran"
# (app.ctf.* also matches the resident-memory sidecars, FILE.rss: commands
# given several files skip them; the loops below take the traces only)
set -- "$T"/app.ctf $(ls "$T"/app.ctf.* | grep -v '\.rss$')
check "a process tree of 4 traces" [ $# = 4 ]
j() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
sum_alloc=0 sum_samples=0 sum_live=0
for f in "$@"; do
    a=$("$MT_BIN" stats --json "$f" | j 'd["total"]["alloc_bytes"]')
    k=$("$MT_BIN" stats --json "$f" | j 'd["total"]["samples"]')
    l=$("$MT_BIN" stats --json "$f" | j 'd["total"]["live_bytes"]')
    sum_alloc=$((sum_alloc + a)) sum_samples=$((sum_samples + k)) sum_live=$((sum_live + l))
done
"$MT_BIN" stats --json "$@" >"$T/all.json" 2>"$T/err"
check "stats of 4 files: read" [ $? = 0 ]
check "stats: allocated bytes are the sum of the files' ($sum_alloc)" [ "$(j 'd["total"]["alloc_bytes"]' <"$T/all.json")" = "$sum_alloc" ]
check "stats: samples are the sum ($sum_samples)" [ "$(j 'd["total"]["samples"]' <"$T/all.json")" = "$sum_samples" ]
check "stats: live bytes at the end are the sum, every free matched to its block ($sum_live)" [ "$(j 'd["total"]["live_bytes"]' <"$T/all.json")" = "$sum_live" ]
# A site of the children adds up over the three child traces.
kids=0
for f in $(ls "$T"/app.ctf.* | grep -v '\.rss$'); do
    v=$("$MT_BIN" top --json -n 0 "$f" | j '[s["value"] for s in d["sites"] if s["site"]["function"] == "child_work"][0]')
    kids=$(awk -v a="$kids" -v b="$v" 'BEGIN { printf "%.0f", a + b }')
done
got=$("$MT_BIN" top --json -n 0 "$@" | j '"%.0f" % [s["value"] for s in d["sites"] if s["site"]["function"] == "child_work"][0]')
check "top: child_work is the sum over the children ($got vs $kids)" [ "$got" = "$kids" ]
# --by-process: one outermost frame per process, with each file's total.
"$MT_BIN" folded --by-process "$@" >"$T/folded.txt"
for f in "$@"; do
    pid=$("$MT_BIN" info "$f" | awk '$1 == "pid:" { print $2 }')
    want=$("$MT_BIN" folded "$f" | awk '{ s += $NF } END { print s }')
    got=$(awk -v p="[pid $pid " 'index($0, p) == 1 { s += $NF } END { print s + 0 }' "$T/folded.txt")
    check "folded --by-process: process $pid has its file's weight ($got vs $want)" [ "$got" = "$want" ]
    # and its very stacks: the merge renumbers each trace's frames, reusing
    # the part an allocation shares with the trace's previous one
    "$MT_BIN" folded "$f" | sort >"$T/one.txt"
    awk -v p="[pid $pid " 'index($0, p) == 1 { sub(/^[^;]*;/, ""); print }' "$T/folded.txt" | sort >"$T/mine.txt"
    check "folded --by-process: process $pid has its file's stacks, line for line" cmp -s "$T/one.txt" "$T/mine.txt"
done
check "folded without --by-process has no process frames" sh -c "! \"$MT_BIN\" folded \"\$@\" | grep -q '^\[pid '" sh "$@"
# diff and check with several files per side.
args=""; for f in "$@"; do args="$args --base $f"; done
"$MT_BIN" diff --json $args "$@" >"$T/d.json"
check "diff of a process tree against itself: exit 0" [ $? = 0 ]
check "... every change 0" python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not d["entries"] or any(e["delta"] != 0 for e in d["entries"]))' "$T/d.json"
"$MT_BIN" diff --json --base "$T/app.ctf" "$T"/app.ctf.* >"$T/d2.json"
check "diff parent -> children: exit 1" [ $? = 1 ]
check "... the children's site appears with their summed bytes" python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); e=[e for e in d["entries"] if e["function"] == "child_work"][0]; sys.exit(abs(e["new"] - float(sys.argv[2])) > 1)' "$T/d2.json" "$kids"
"$MT_BIN" check --max-alloc "$sum_alloc" "$@" >"$T/c.txt"
check "check of 4 files: the budget of their sum holds" [ $? = 0 ]
"$MT_BIN" pprof -o "$T/all.pb.gz" "$@" && "$MT_BIN" plot -o "$T/all.svg" "$@" && "$MT_BIN" lifetimes "$@" >/dev/null
check "pprof, plot and lifetimes take several files" [ $? = 0 ]
# Two rates cannot be added up.
preload "$T/other.ctf" 0.001 "$PROGS/forker" child >/dev/null
"$MT_BIN" top "$T/app.ctf" "$T/other.ctf" >/dev/null 2>"$T/err"
check "traces at two rates: refused with a reason" [ $? != 0 ] && grep -q "another sampling rate" "$T/err"
finish
