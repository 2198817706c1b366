#!/bin/sh
# reports.sh - the text reports: folded stacks, lifetimes, top, stats and
# plots, checked against an independent awk replay of the reference dumps,
# plus JSON/SVG well-formedness, --help and error handling.
set -u
: "${MT_BIN:=build/memtrace}" "${MT_FIXTURES:=tests/fixtures/memtrace}" "${MT_TMP:=/tmp}"
here=$(cd "$(dirname "$0")" && pwd)
. tests/lib.sh
expect=$here/../analyze/expect.awk
near() {
    if awk -v g="$2" -v w="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= 1e-9 * (w < 0 ? -w : w) + 1) }'
    then pass "$1"; else fail "$1: got '$2', want '$3'"; fi
}
F=$MT_FIXTURES
for name in leak major prodcons rate1 wrap upstream_ocamlopt_v2; do
    dump=$MT_TMP/$name.txt
    fixture_text "$name" > "$dump" || { fails=$((fails + 1)); continue; }
    awk -v what=totals -f "$expect" "$dump" > "$MT_TMP/want"
    want() { sed -n "s/^$1=//p" "$MT_TMP/want"; }
    # folded: well-formed lines whose weights add up to the estimate
    "$MT_BIN" folded "$F/$name.ctf" > "$MT_TMP/folded" 2>/dev/null
    if grep -qv '^[^ ;][^;]*\(;[^;]*\)* [0-9][0-9]*$' "$MT_TMP/folded"; then
        fail "$name: folded: malformed line: $(grep -v '^[^ ;][^;]*\(;[^;]*\)* [0-9][0-9]*$' "$MT_TMP/folded" | head -n 1)"
    fi
    near "$name: folded weights sum to the bytes allocated" \
        "$(awk '{ s += $NF } END { printf "%.0f", s }' "$MT_TMP/folded")" "$(want alloc_bytes)"
    "$MT_BIN" folded --at peak "$F/$name.ctf" > "$MT_TMP/folded" 2>/dev/null
    near "$name: folded --at peak sums to the peak live bytes" \
        "$(awk '{ s += $NF } END { printf "%.0f", s }' "$MT_TMP/folded")" "$(want peak_bytes)"
    # lifetimes: the lines of a replay of the dump; in its order (allocation
    # order) from the whole model, in the order blocks end when streaming
    awk '/^ev /{ t = $2 } /^ev .* alloc /{ split($4, kv, "="); id = kv[2]; at[id] = t; order[n++] = id }
         /^ev .* collect /{ split($4, kv, "="); if ((kv[2] in at) && !(kv[2] in ct)) ct[kv[2]] = t }
         END { for (i = 0; i < n; i++) { id = order[i]; c = (id in ct) ? ct[id] : t
               printf "%.6f %.6f\n", at[id] / 1e6, (c - at[id]) / 1e6 } }' "$dump" > "$MT_TMP/life.want"
    "$MT_BIN" --route=whole lifetimes "$F/$name.ctf" > "$MT_TMP/life.got" 2>/dev/null
    if cmp -s "$MT_TMP/life.want" "$MT_TMP/life.got"; then
        pass "$name: lifetimes (whole model): $(wc -l < "$MT_TMP/life.got") lines equal the replay"
    else
        fail "$name: lifetimes (whole model) differ from the replay"; diff "$MT_TMP/life.want" "$MT_TMP/life.got" | head -n 6
    fi
    "$MT_BIN" lifetimes "$F/$name.ctf" | sort > "$MT_TMP/life.got" 2>/dev/null
    sort "$MT_TMP/life.want" > "$MT_TMP/life.sorted"
    if cmp -s "$MT_TMP/life.sorted" "$MT_TMP/life.got"; then
        pass "$name: lifetimes: $(wc -l < "$MT_TMP/life.got") lines equal the replay's (sorted)"
    else
        fail "$name: lifetimes differ from the replay (sorted)"; diff "$MT_TMP/life.sorted" "$MT_TMP/life.got" | head -n 6
    fi
done
# top and stats load a shallow model (innermost frames only) unless the
# filter looks at stacks: both models must give the same answers
for ctf in "$F"/*.ctf; do
    name=$(basename "$ctf" .ctf)
    "$MT_BIN" top --json -n 0 -c 5 "$ctf" 2>/dev/null | sed 's/"filter":"[^"]*",//' > "$MT_TMP/shallow"
    "$MT_BIN" top --json -n 0 -c 5 --filter 'hide:/a^/' "$ctf" 2>/dev/null | sed 's/"filter":"[^"]*",//' > "$MT_TMP/full"
    "$MT_BIN" stats --json "$ctf" 2>/dev/null > "$MT_TMP/shallow.s"
    "$MT_BIN" stats --json --filter 'hide:/a^/' "$ctf" 2>/dev/null > "$MT_TMP/full.s"
    if [ -s "$MT_TMP/full" ] && cmp -s "$MT_TMP/shallow" "$MT_TMP/full" && cmp -s "$MT_TMP/shallow.s" "$MT_TMP/full.s"
    then pass "$name: top and stats equal on the shallow and the full model"
    else fail "$name: shallow and full models differ"; diff "$MT_TMP/shallow" "$MT_TMP/full" | head -n 4; fi
done
# lifetimes --filter inside: only allocations with the function on the stack
dump=$MT_TMP/leak.txt
n_want=$(awk '/^ev .* alloc /{ if (hit) c++; hit = 0; next } /^ev /{ if (hit) c++; hit = 0; next }
    /^  bt .*Dune__exe__Leak\.leak_one$/ { hit = 1 } END { if (hit) c++; print c + 0 }' "$dump")
n_got=$("$MT_BIN" lifetimes --filter 'inside:leak_one' "$F/leak.ctf" | wc -l)
[ "$n_got" = "$n_want" ] && pass "lifetimes --filter inside:leak_one: $n_got allocations" ||
    fail "lifetimes --filter inside:leak_one: $n_got lines, want $n_want"
# top: the biggest site first, shares, callers, noise legend
"$MT_BIN" top "$F/leak.ctf" > "$MT_TMP/top" 2>&1
grep -q '^   1 .*39.5%.*Stdlib__List.init_aux (list.ml:70)' "$MT_TMP/top" &&
    grep -q '<- Dune__exe__Leak.churn (gen/leak.ml:17)' "$MT_TMP/top" &&
    pass "top: init_aux first with 39.5% and its caller churn" || { fail "top text"; head -n 8 "$MT_TMP/top"; }
"$MT_BIN" top --by live --at end -n 1 "$F/leak.ctf" > "$MT_TMP/top" 2>&1
grep -q 'make_item' "$MT_TMP/top" && grep -q '1 more sites\|more sites' "$MT_TMP/top" &&
    pass "top --by live --at end: the leaking make_item first" || { fail "top --by live"; cat "$MT_TMP/top"; }
"$MT_BIN" top -n 20 -c 0 "$F/upstream_ocamlopt_v2.ctf" | grep -q '%[~?]  ' &&
    pass "top marks noisy sites (few samples)" || fail "top: no noise marks on a sparse trace"
# ±err is the relative standard error 1/sqrt(k) of k samples (k of the
# measure: samples allocated, or live samples for --by live)
for by in alloc live; do
    "$MT_BIN" top --json --by $by -n 0 -c 0 "$F/upstream_ocamlopt_v2.ctf" > "$MT_TMP/rse.json"
    r=$(python3 -c '
import json, math, sys
d = json.load(open(sys.argv[1])); key = "live_samples" if sys.argv[2] == "live" else "samples"
bad = [(s["rse"], s["cost"][key]) for s in d["sites"] if s["cost"][key] > 0 and abs(s["rse"] - 1 / math.sqrt(s["cost"][key])) > 6e-5]
few = [s for s in d["sites"] if 0 < s["cost"][key] <= 4]
print("bad %s" % bad[:3] if bad or not few else "ok %d sites (%d with 1-4 samples)" % (len(d["sites"]), len(few)))' "$MT_TMP/rse.json" $by 2>&1)
    case $r in ok*) pass "top --by $by --json: rse = 1/sqrt(samples) for all ${r#ok }" ;;
               *) fail "top --by $by --json: rse is not 1/sqrt(samples): $r" ;; esac
done
"$MT_BIN" top -n 1 -c 0 "$F/leak.ctf" > "$MT_TMP/top"
grep -q '^   1 .* 2%  Stdlib__List.init_aux' "$MT_TMP/top" &&
    pass "top: ±err of init_aux (2442 samples) is 2%" || { fail "top ±err column"; cat "$MT_TMP/top"; }
# the text's ±err column is 100/sqrt(samples) too, rounded, row by row
"$MT_BIN" top -n 0 -c 0 "$F/upstream_ocamlopt_v2.ctf" > "$MT_TMP/top"
"$MT_BIN" top --json -n 0 -c 0 "$F/upstream_ocamlopt_v2.ctf" > "$MT_TMP/rse.json"
r=$(python3 -c '
import json, math, re, sys
d = json.load(open(sys.argv[1]))
want = {s["rank"]: round(100 / math.sqrt(s["cost"]["samples"])) for s in d["sites"]}
got = {}
for line in open(sys.argv[2]):
    m = re.match(r"^ *(\d+) +\S+ \S+ +\S+% +\S+% +(\d+)%", line)
    if m: got[int(m.group(1))] = int(m.group(2))
bad = [(k, got.get(k), w) for k, w in want.items() if got.get(k) != w]
print("ok %d rows" % len(got) if got and not bad else "bad %s" % bad[:3])' "$MT_TMP/rse.json" "$MT_TMP/top" 2>&1)
case $r in ok*) pass "top: ±err column = 100/sqrt(samples) on all ${r#ok }" ;;
           *) fail "top: ±err column: $r (rank, shown, 100/sqrt(k))" ;; esac
# JSON is valid (python3: scripts/install-deps.sh test installs it)
command -v python3 >/dev/null || fail "python3 not installed: JSON, SVG and ±err checks cannot run"
if command -v python3 >/dev/null; then
    for cmd in "top --json" "stats --json" "lifetimes --json" "top --json --by live --at peak"; do
        # shellcheck disable=SC2086
        if "$MT_BIN" $cmd "$F/major.ctf" | python3 -c 'import json,sys; json.load(sys.stdin)' 2>/dev/null
        then pass "$cmd: valid JSON"; else fail "$cmd: invalid JSON"; fi
    done
fi
# stats text
"$MT_BIN" stats "$F/major.ctf" > "$MT_TMP/stats"
grep -q '^peak live ' "$MT_TMP/stats" && grep -q '^  major ' "$MT_TMP/stats" &&
    grep -q '^block sizes' "$MT_TMP/stats" && grep -q '^lifetimes' "$MT_TMP/stats" &&
    pass "stats: peak, per-source totals and both histograms" || { fail "stats text"; cat "$MT_TMP/stats"; }
# plots are SVG a browser opens
for kind in memory sizes lifetimes; do
    "$MT_BIN" plot --kind $kind --filter 'collect:never' -o "$MT_TMP/$kind.svg" "$F/leak.ctf"
    if command -v python3 >/dev/null &&
        python3 -c 'import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); sys.exit(not r.tag.endswith("svg"))' "$MT_TMP/$kind.svg"
    then pass "plot --kind $kind: well-formed SVG"; else fail "plot --kind $kind"; fi
done
[ "$(grep -c '<polyline' "$MT_TMP/memory.svg")" = 2 ] && pass "plot memory: total and filtered curves" || fail "plot memory curves"
grep -q '<circle' "$MT_TMP/lifetimes.svg" && pass "plot lifetimes: dots" || fail "plot lifetimes: no dots"
# help and errors
for cmd in top stats lifetimes folded pprof plot; do
    case $cmd in pprof|plot) out="-o $MT_TMP/x" ;; *) out= ;; esac
    "$MT_BIN" $cmd --help > "$MT_TMP/help" 2>&1 && grep -q "usage: memtrace $cmd" "$MT_TMP/help" &&
        grep -q 'Example' "$MT_TMP/help" && pass "$cmd --help" || fail "$cmd --help"
    # shellcheck disable=SC2086
    "$MT_BIN" $cmd $out "$MT_TMP/missing.ctf" > /dev/null 2> "$MT_TMP/err"
    rc=$?
    [ $rc = 1 ] && grep -q "^memtrace $cmd: .*missing.ctf" "$MT_TMP/err" && pass "$cmd: missing file: exit 1 naming it" ||
        fail "$cmd: missing file: exit $rc: $(cat "$MT_TMP/err")"
    # shellcheck disable=SC2086
    "$MT_BIN" $cmd $out --filter 'size:>=4q' "$F/leak.ctf" > /dev/null 2> "$MT_TMP/err"
    rc=$?
    [ $rc = 2 ] && grep -q 'column 9: unknown unit' "$MT_TMP/err" && pass "$cmd: bad filter: exit 2 with the column" ||
        fail "$cmd: bad filter: exit $rc: $(cat "$MT_TMP/err")"
done
head -c 3000 "$F/leak.ctf" > "$MT_TMP/cut.ctf"
printf 'garbage!' > "$MT_TMP/garbage.ctf"
"$MT_BIN" top "$MT_TMP/garbage.ctf" > /dev/null 2> "$MT_TMP/err"
[ $? = 1 ] && grep -q 'memtrace top: .*garbage.ctf' "$MT_TMP/err" && pass "top: not a trace: exit 1" ||
    fail "top on garbage: $(cat "$MT_TMP/err")"
"$MT_BIN" stats "$MT_TMP/cut.ctf" > "$MT_TMP/out" 2> "$MT_TMP/err"
rc=$?
[ $rc = 0 ] && grep -q '^memtrace stats: warning: .*cut.ctf: offset [0-9]*: .*truncated' "$MT_TMP/err" &&
    grep -q '^trace .*leak.exe' "$MT_TMP/out" &&
    pass "stats on a truncated trace: what can be read is reported, a warning names file and offset" ||
    fail "stats on a truncated trace: exit $rc: $(cat "$MT_TMP/err")"
finish
