#!/bin/sh
# api.sh - the viewer's HTTP API against numbers computed independently from
# the fixture's reference dump (leak.txt): trace info (and the bound a zero
# from no sample carries), the top allocation site and its bytes, filtered
# totals; plus the page's own files.
set -u
. "$(dirname "$0")/lib.inc"
command -v curl >/dev/null || { echo "FAIL: curl missing (scripts/install-deps.sh test)"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL: python3 missing (scripts/install-deps.sh test)"; exit 1; }

ctf=$MT_FIXTURES/leak.ctf
. tests/lib.sh
dump=$MT_TMP/leak.txt
fixture_text leak > "$dump" || exit 1
start_viewer "$ctf" --port 0 || exit 1

get() { # get PATH -> body in $MT_TMP/body, prints status
    curl -s -o "$MT_TMP/body" -w '%{http_code}' "$VIEW_URL$1"
}
json() { # json PYTHON-EXPR over the last body as j
    python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($1)" "$MT_TMP/body"
}

# Independent figures from the dump: per allocation its innermost function,
# samples, time, and whether it is ever collected.
awk '
/^info sample_rate=/ { sub(/^info sample_rate=/, ""); rate = $0 }
/^info word_size=/ { sub(/^info word_size=/, ""); ws = $0 }
/^ev / && $3 == "alloc" { if (id != "") site[id] = fn; id = $4; sub(/id=/, "", id);
    n = $6; sub(/nsamples=/, "", n); ns[id] = n; t[id] = $2; fn = "" ; next }
/^  bt / { fn = $NF; next }
/^ev / && $3 == "collect" { c = $4; sub(/id=/, "", c); coll[c] = 1 }
END {
    if (id != "") site[id] = fn
    for (i in ns) { by[site[i]] += ns[i]; total += ns[i]; if (!(i in coll)) live += ns[i];
                    if (t[i] <= 100000) early += ns[i] }
    best = ""; for (f in by) if (best == "" || by[f] > by[best]) best = f
    printf "top=%s\ntop_samples=%d\ntotal=%d\nlive=%d\nearly=%d\nbps=%.17g\n", best, by[best], total, live, early, ws / 8 / rate
}' "$dump" > "$MT_TMP/expect"
. "$MT_TMP/expect"

# the page and its files
check "GET / serves the page" sh -c "[ \"\$(curl -s -o '$MT_TMP/page' -w '%{http_code}' '$VIEW_URL')\" = 200 ] && grep -q 'memtrace' '$MT_TMP/page' && grep -q 'app.js' '$MT_TMP/page'"
for f in app.js util.js flame.js chart.js style.css; do
    type=$(curl -s -o /dev/null -w '%{http_code} %{content_type}' "$VIEW_URL$f")
    case $f in *.js) want="200 text/javascript; charset=utf-8" ;; *) want="200 text/css; charset=utf-8" ;; esac
    check "$f served as $want" [ "$type" = "$want" ]
done
curl -s -D "$MT_TMP/hdr" -o /dev/null "$VIEW_URL"
check "page sent with a Content-Security-Policy" grep -qi "^content-security-policy: default-src 'self'" "$MT_TMP/hdr"

# info
[ "$(get api/info)" = 200 ] && pass "api/info 200" || fail "api/info"
check "info: pid from the trace" [ "$(json 'j["pid"]')" = 11730 ]
check "info: executable" [ "$(json 'j["executable"]')" = /home/dev/fixtures/leak.exe ]
check "info: sample rate as 1 in N bytes" [ "$(json 'round(j["one_in_bytes"])')" = 8000 ]
check "info: total samples" [ "$(json 'j["total"]["samples"]')" = "$total" ]
check "info: a zero from no sample hides at most -ln(0.05) x 8000 bytes (the lost bytes' bound)" \
    [ "$(json 'round(j["unsampled_upper95_bytes"])')" = 23966 ]

# the allocation-site tree: its top site and bytes match the dump
[ "$(get 'api/tree?dir=sites')" = 200 ] || fail "api/tree"
got=$(json 'j["funcs"]["name"][j["nodes"]["f"][1]] + " " + str(j["nodes"]["s"][1]) + " " + str(round(j["nodes"]["v"][1]))')
want="$top $top_samples $(python3 -c "print(round($top_samples * $bps))")"
check "tree: top site, samples and bytes = $want (got $got)" [ "$got" = "$want" ]
check "tree: root holds every sample" [ "$(json 'j["total_samples"]')" = "$total" ]
check "tree: children never exceed their parent" [ "$(json 'all(j["nodes"]["v"][i] <= j["nodes"]["v"][j["nodes"]["p"][i]] + 1e-6 for i in range(1, j["n"]))')" = True ]

# filters change the answers as the dump says
[ "$(get 'api/stats?filter=live:end')" = 200 ] || fail "api/stats"
check "filter live:end keeps the $live never-freed samples" [ "$(json 'j["total"]["samples"]')" = "$live" ]
[ "$(get 'api/tree?filter=alloc:0-100ms')" = 200 ] || fail "api/tree filtered"
check "filter alloc:0-100ms keeps the $early early samples" [ "$(json 'j["total_samples"]')" = "$early" ]
[ "$(get 'api/filter?filter=alloc:%3E%3D1s+live:peak')" = 200 ] || fail "api/filter"
check "filter canonical text" [ "$(json 'j["filter"]')" = "alloc:>=1s live:peak" ]

# curve: the peak is on the curve, filtered never above total
[ "$(get 'api/curve?n=300')" = 200 ] || fail "api/curve"
check "curve: 300 buckets" [ "$(json 'len(j["total"])')" = 300 ]
check "curve: highest bucket is the peak" [ "$(json 'abs(max(j["total"]) - j["peak"]["bytes"]) < 1')" = True ]
check "curve: the peak's estimate lies in its interval, not above the curve's highest" \
    [ "$(json 'j["peak"]["lo"] <= j["peak"]["estimate"] <= j["peak"]["hi"] and j["peak"]["estimate"] <= j["peak"]["curve_max"] + 1 and abs(j["peak"]["curve_max"] - j["peak"]["bytes"]) < 1')" = True ]
[ "$(get 'api/curve?n=200&filter=live:end')" = 200 ] || fail "api/curve filtered"
check "curve: filtered under total, and ends at the live-at-end bytes" \
    [ "$(json "all(f <= t + 1e-6 for f, t in zip(j['filtered'], j['total'])) and abs(j['filtered'][-1] - $live * $bps) < 1")" = True ]

# callers/callees, call graph, histograms, points of interest
[ "$(get 'api/function?name=Dune__exe__Leak.make_item')" = 200 ] || fail "api/function"
check "function: make_item is called from leak_one" [ "$(json 'j["callers"][0]["name"]')" = Dune__exe__Leak.leak_one ]
[ "$(get 'api/graph')" = 200 ] || fail "api/graph"
check "graph: edges join existing nodes" [ "$(json 'all(e["from"] < len(j["nodes"]) and e["to"] < len(j["nodes"]) for e in j["edges"]) and len(j["edges"]) > 0')" = True ]
[ "$(get 'api/hist')" = 200 ] || fail "api/hist"
check "hist: size buckets sum to the total bytes" [ "$(json "abs(sum(j['size']['bytes']) - $total * $bps) < 1")" = True ]
check "hist: each count has its own error" [ "$(json "len(j['size']['count_se']) == len(j['size']['count']) and all(e > 0 for c, e in zip(j['size']['count'], j['size']['count_se']) if c > 0)")" = True ]
[ "$(get 'api/hotspots')" = 200 ] || fail "api/hotspots"
check "hotspots: heaviest site is $top" [ "$(json 'j["sites"][0]["name"]')" = "$top" ]

# several clients at once
i=0; pids=""
for f in "" live:end alloc:0-200ms size:%3E%3D64 collect:never "inside:leak_one" "hide:Leak" lifetime:%3C10ms; do
    curl -s -o "$MT_TMP/par$i" -w '%{http_code}\n' "${VIEW_URL}api/tree?filter=$f" > "$MT_TMP/code$i" &
    pids="$pids $!"; i=$((i + 1))
done
for p in $pids; do wait "$p"; done
check "8 concurrent requests all answered 200" [ "$(cat "$MT_TMP"/code* | sort -u)" = 200 ]

# the same new filter from 6 clients at once: one selection, equal answers
pids=""
for i in 1 2 3 4 5 6; do
    curl -s -o "$MT_TMP/same$i" "${VIEW_URL}api/tree?filter=live:200ms+size:%3C=16" & pids="$pids $!"
done
for p in $pids; do wait "$p"; done
check "6 concurrent identical requests get identical answers" sh -c "for i in 2 3 4 5 6; do cmp -s '$MT_TMP/same1' '$MT_TMP/same'\$i || exit 1; done"
curl -s -o "$MT_TMP/same7" "${VIEW_URL}api/tree?filter=live:0.2s+size:%3C%3D16B"
check "a kept answer is reused for the same filter written differently" cmp -s "$MT_TMP/same1" "$MT_TMP/same7"
check "the answer is a tree of that filter" grep -q '"filter":"live:200ms size:<=16"' "$MT_TMP/same1"

stop_viewer
check "SIGTERM stops the server with status 0" [ "$VIEW_RC" = 0 ]
