#!/bin/sh
# fixtures.sh - the engine's totals, live memory at the end, peak (the
# curve's highest; its estimate within its interval) and
# per-site figures on every fixture trace equal what an independent awk
# replay of the reference dump text computes (tests/analyze/expect.awk).
set -u
: "${MT_BIN:=build/memtrace}" "${MT_FIXTURES:=tests/fixtures/memtrace}" "${MT_TMP:=/tmp}"
here=$(dirname "$0")
. tests/lib.sh
fail=0
check() { # check WHAT GOT WANT
    if [ "$2" = "$3" ]; then echo "PASS: $1"; else echo "FAIL: $1: got '$2', want '$3'"; fail=1; fi
}
near() { # near WHAT GOT WANT: equal within 1e-9 (sums of doubles beyond 2^53)
    if awk -v g="$2" -v w="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= 1e-9 * (w < 0 ? -w : w) + 0.5) }'
    then echo "PASS: $1"; else echo "FAIL: $1: got '$2', want '$3'"; fail=1; fi
}
field() { # field NAME JSONFILE: first numeric value of "NAME":
    grep -o "\"$1\":[-0-9.e+]*" "$2" | head -n 1 | cut -d: -f2
}
for ctf in "$MT_FIXTURES"/*.ctf; do
    name=$(basename "$ctf" .ctf)
    dump=$MT_TMP/$name.txt
    fixture_text "$name" > "$dump" || { fail=1; continue; }
    awk -v what=totals -f "$here/expect.awk" "$dump" > "$MT_TMP/want"
    want() { sed -n "s/^$1=//p" "$MT_TMP/want"; }
    if ! "$MT_BIN" stats --json "$ctf" > "$MT_TMP/stats.json" 2> "$MT_TMP/err"; then
        echo "FAIL: $name: stats exited non-zero: $(head -n 3 "$MT_TMP/err")"; fail=1; continue
    fi
    total=$(grep -o '"total":{[^}]*}' "$MT_TMP/stats.json")
    echo "$total" > "$MT_TMP/total"
    check "$name: sampled allocations" "$(field allocs "$MT_TMP/total")" "$(want allocs)"
    check "$name: samples" "$(field samples "$MT_TMP/total")" "$(want samples)"
    near "$name: estimated bytes allocated" "$(field alloc_bytes "$MT_TMP/total")" "$(want alloc_bytes)"
    near "$name: bytes never collected" "$(field never_collected_bytes "$MT_TMP/stats.json")" "$(want live_end_bytes)"
    # the curve's highest is replayed exactly; the peak's estimate lies
    # below it, within its interval (docs/estimates.md)
    near "$name: peak live bytes (the curve's highest)" "$(field peak_curve_max_bytes "$MT_TMP/stats.json")" "$(want peak_bytes)"
    check "$name: peak estimate within its interval, not above the curve" "$(awk \
        -v e="$(field peak_bytes "$MT_TMP/stats.json")" -v lo="$(field peak_lo_bytes "$MT_TMP/stats.json")" \
        -v hi="$(field peak_hi_bytes "$MT_TMP/stats.json")" -v c="$(want peak_bytes)" \
        'BEGIN { print (lo <= e && e <= hi && e <= c + 0.5) ? "yes" : "no" }')" yes
    check "$name: peak time" "$(field peak_time_us "$MT_TMP/stats.json")" "$(want peak_time)"
    # live at the end through the filter language gives the same bytes
    "$MT_BIN" stats --json --filter 'live:end' "$ctf" > "$MT_TMP/live.json" 2>/dev/null
    near "$name: live:end filter selects the live bytes" \
        "$(grep -o '"total":{[^}]*}' "$MT_TMP/live.json" | grep -o '"alloc_bytes":[0-9]*' | cut -d: -f2)" \
        "$(want live_end_bytes)"
    # per-site samples (names with quotes or backslashes are left out)
    case $name in synth_edge) continue ;; esac
    awk -v what=sites -f "$here/expect.awk" "$dump" | sort > "$MT_TMP/sites.want"
    "$MT_BIN" top --json --by samples -n 0 --callers 0 "$ctf" 2>/dev/null |
        sed -n 's/.*"site":{"function":"\([^"]*\)","file":"\([^"]*\)","line":\([0-9]*\)}.*"samples":\([0-9]*\),.*/\4	\1	\2	\3/p' |
        sort > "$MT_TMP/sites.got"
    if cmp -s "$MT_TMP/sites.want" "$MT_TMP/sites.got" && [ -s "$MT_TMP/sites.got" ]; then
        echo "PASS: $name: samples per allocation site ($(wc -l < "$MT_TMP/sites.got") sites)"
    else
        echo "FAIL: $name: samples per allocation site differ"; diff "$MT_TMP/sites.want" "$MT_TMP/sites.got" | head -n 10
        fail=1
    fi
done
exit $fail
