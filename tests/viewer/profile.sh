#!/bin/sh
# profile.sh - `memtrace view` of a pprof profile (memtrace's own pprof
# output of a fixture): /api/info says what kind of profile it is; the
# per-stack views (tree, graph, hotspots) answer with the trace's values;
# the views that need times or allocations (stats, curve, hist, leaks)
# answer 409 saying so.
set -u
. "$(dirname "$0")/lib.inc"
"$MT_BIN" pprof -o "$MT_TMP/leak.pb.gz" "$MT_FIXTURES/leak.ctf" || { echo "FAIL: memtrace pprof"; exit 1; }
start_viewer "$MT_FIXTURES/leak.ctf" --port 0 -q || exit 1
trace=${VIEW_URL%/}
start_viewer "$MT_TMP/leak.pb.gz" --port 0 -q || exit 1
prof=${VIEW_URL%/}
get() { curl -s -o "$MT_TMP/body" -w '%{http_code}' "$1"; }

[ "$(get "$prof/api/info")" = 200 ] && grep -q '"profile":"memtrace'"'"'s pprof output' "$MT_TMP/body" &&
    pass "info: a pprof profile, of memtrace's output" || fail "info: $(head -c 300 "$MT_TMP/body")"
get "$trace/api/info" >/dev/null
check "info of a trace: profile null" grep -q '"profile":null' "$MT_TMP/body"
for q in "hotspots?metric=live_bytes" "hotspots?metric=alloc_bytes" "tree?dir=sites&metric=live_bytes&min=0.001"; do
    [ "$(get "$trace/api/$q")" = 200 ] || fail "trace $q"
    sed 's/"total_samples":[0-9]*,//' "$MT_TMP/body" >"$MT_TMP/trace.json"
    [ "$(get "$prof/api/$q")" = 200 ] || fail "profile $q"
    sed 's/"total_samples":[0-9]*,//' "$MT_TMP/body" >"$MT_TMP/prof.json"
    check "$q: the profile's answer is the trace's" cmp -s "$MT_TMP/trace.json" "$MT_TMP/prof.json"
done
for e in stats curve hist leaks; do
    code=$(get "$prof/api/$e")
    [ "$code" = 409 ] && grep -q "is a pprof profile: .* needs a trace" "$MT_TMP/body" &&
        pass "$e: 409, needs a trace" || fail "$e: $code $(head -c 200 "$MT_TMP/body")"
done
stop_viewer
finish
