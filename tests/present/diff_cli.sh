#!/bin/sh
# diff_cli.sh - 'memtrace diff' on the fixtures: a trace against itself is
# "no difference" (exit 0, every change exactly 0) by every key and
# measure; --per-second divides by the duration; trouble (missing or
# damaged trace, bad arguments) exits 2 with a message, as diff(1).
set -u
: "${MT_BIN:=build/memtrace}" "${MT_FIXTURES:=tests/fixtures/memtrace}" "${MT_TMP:=/tmp}"
fails=0
check() { if eval "$2"; then echo "PASS: $1"; else echo "FAIL: $1"; fails=$((fails + 1)); fi; }
F=$MT_FIXTURES
for key in site function path; do
    for by in alloc count live; do
        "$MT_BIN" diff --json --key $key --by $by "$F/leak.ctf" "$F/leak.ctf" >"$MT_TMP/d.json" 2>"$MT_TMP/err"
        rc=$?
        check "leak.ctf against itself, $key by $by: exit 0" '[ $rc = 0 ]'
        check "leak.ctf against itself, $key by $by: every change 0, p 1" \
            "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not d[\"entries\"] or not all(e[\"delta\"] == 0 and e[\"p\"] == 1 and not e[\"significant\"] for e in d[\"entries\"]))' $MT_TMP/d.json"
    done
done
# Call paths are named as folded stacks are (function names, outermost
# first), with the same values.
for f in leak prodcons wrap; do
    "$MT_BIN" diff --json --key path "$F/$f.ctf" "$F/$f.ctf" 2>/dev/null | python3 -c '
import json, sys; d = json.load(sys.stdin)
print("\n".join(sorted("%s %.0f" % (e["name"], e["new"]) for e in d["entries"])))' >"$MT_TMP/paths.txt"
    "$MT_BIN" folded "$F/$f.ctf" | sort >"$MT_TMP/folded.txt"
    check "$f: --key path names and values are the folded stacks'" \
        'cmp -s "$MT_TMP/paths.txt" "$MT_TMP/folded.txt" && [ -s "$MT_TMP/folded.txt" ]'
done
# Version 2 and version 3 of one trace are the same allocations.
"$MT_BIN" diff "$F/prodcons.ctf" "$F/prodcons_v3.ctf" >/dev/null 2>&1
check "prodcons v2 against v3: exit 0" '[ $? = 0 ]'
# OCaml trace: an estimate per second is the estimate over the duration.
"$MT_BIN" diff --json "$F/leak.ctf" "$F/major.ctf" >"$MT_TMP/a.json" 2>/dev/null
"$MT_BIN" diff --json --per-second "$F/leak.ctf" "$F/major.ctf" >"$MT_TMP/p.json" 2>/dev/null
for i in 1 2; do
    f=$F/leak.ctf; [ $i = 2 ] && f=$F/major.ctf
    dur=$("$MT_BIN" stats --json "$f" | python3 -c 'import json,sys; print(json.load(sys.stdin)["duration_us"])')
    check "--per-second divides side $i by its duration" \
        "python3 -c 'import json,sys
a = json.load(open(sys.argv[1]))[\"total\"]; p = json.load(open(sys.argv[2]))[\"total\"]
k = \"base\" if sys.argv[3] == \"1\" else \"new\"
sys.exit(abs(p[k] * float(sys.argv[4]) / 1e6 - a[k]) > 1e-6 * a[k] or p[k + \"_samples\"] != a[k + \"_samples\"])' $MT_TMP/a.json $MT_TMP/p.json $i $dur"
done
# Trouble: exit 2 with a message naming the problem.
"$MT_BIN" diff "$F/leak.ctf" "$MT_TMP/missing.ctf" >/dev/null 2>"$MT_TMP/err"
check "missing trace: exit 2" '[ $? = 2 ]'
check "missing trace: named" 'grep -q "missing.ctf" "$MT_TMP/err"'
head -c 300 "$F/leak.ctf" >"$MT_TMP/cut.ctf"; printf 'garbage' >"$MT_TMP/bad.ctf"
"$MT_BIN" diff "$MT_TMP/bad.ctf" "$F/leak.ctf" >/dev/null 2>"$MT_TMP/err"
check "not a trace: exit 2 and a message" '[ $? = 2 ] && grep -q "bad.ctf" "$MT_TMP/err"'
"$MT_BIN" diff "$F/leak.ctf" >/dev/null 2>&1
check "one file without --windows: exit 2" '[ $? = 2 ]'
"$MT_BIN" diff --windows 0-1s 2s "$F/leak.ctf" >/dev/null 2>"$MT_TMP/err"
check "a range against a time: exit 2, explained" '[ $? = 2 ] && grep -q "two ranges" "$MT_TMP/err"'
"$MT_BIN" diff --windows 0-100ms 100ms-end --by live "$F/leak.ctf" >/dev/null 2>&1
check "ranges with a live measure: exit 2" '[ $? = 2 ]'
"$MT_BIN" diff --by samples "$F/leak.ctf" "$F/leak.ctf" >/dev/null 2>&1
check "--by samples: exit 2 (samples at two rates are not comparable)" '[ $? = 2 ]'
"$MT_BIN" diff --alpha 2 "$F/leak.ctf" "$F/leak.ctf" >/dev/null 2>&1
check "--alpha 2: exit 2" '[ $? = 2 ]'
"$MT_BIN" diff --filter 'size:>=' "$F/leak.ctf" "$F/leak.ctf" >/dev/null 2>&1
check "a bad filter: exit 2" '[ $? = 2 ]'
"$MT_BIN" diff --windows 0-100ms 100ms-end "$F/leak.ctf" >"$MT_TMP/w.txt" 2>&1
rc=$?
check "windows of leak.ctf: compared (exit 0 or 1)" '[ $rc -le 1 ] && grep -q "allocated in 0-100ms" "$MT_TMP/w.txt"'
exit $((fails != 0))
