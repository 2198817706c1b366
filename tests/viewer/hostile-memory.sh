#!/bin/sh
# hostile-memory.sh - the viewer keeps to its memory budget (--memory):
# concurrent heavy requests (full call trees of a trace with 15,000 distinct
# call paths, each filtered differently so that nothing is shared) keep the
# server's peak RSS within the budget plus a margin, are all answered
# (later, one after another) or refused with 503 and Retry-After, and the
# memory is given back afterwards. When more requests wait than the server
# queues, the extra ones get 503 at once. Also: the tree JSON says whether
# the tree was cut at the node limit; the page shows it and retries a 503
# (headless Chromium, hostile-page.js). The compare endpoints (two traces)
# count against the same budget.
set -u
. "$(dirname "$0")/lib.inc"
command -v curl >/dev/null || { echo "curl missing"; exit 77; }
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }
gen=$MT_BUILD/bench/viewer-gen
[ -x "$gen" ] || { echo "FAIL: $gen not built (make tests-build)"; exit 1; }
# under ASan freed memory sits in the quarantine: keep it small
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4:malloc_context_size=4
export ASAN_OPTIONS

"$gen" "$MT_TMP/paths.ctf" 30000 15000 >/dev/null || { echo "FAIL: viewer-gen"; exit 1; }

rss() { awk '/^VmRSS/ { print int($2 / 1024) }' "/proc/$VIEW_PID/status"; }
hwm() { awk '/^VmHWM/ { print int($2 / 1024) }' "/proc/$VIEW_PID/status"; }

# fire URL... : one thread per URL, all at once; prints "status retry-after" per request
fire() {
    python3 - "$@" <<'PY'
import sys, threading, urllib.request, urllib.error
out = [None] * (len(sys.argv) - 1)
def get(i, url):
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            r.read(); out[i] = "%d -" % r.status
    except urllib.error.HTTPError as e:
        out[i] = "%d %s" % (e.code, e.headers.get("Retry-After") or "-")
    except Exception as e:
        out[i] = "000 " + type(e).__name__
ts = [threading.Thread(target=get, args=(i, u)) for i, u in enumerate(sys.argv[1:])]
for t in ts: t.start()
for t in ts: t.join()
print("\n".join(out))
PY
}

# One of these trees alone takes about 135 MB at its peak (93 MB before
# costs carried the variances of their block counts): the budget is above
# that, so that the bound below measures what concurrency adds.
budget=120
start_viewer "$MT_TMP/paths.ctf" --port 0 -q --memory ${budget}M || exit 1
# the warm-up's questions, answered before measuring
curl -s -o /dev/null "${VIEW_URL}api/tree?dir=sites&min=0.001"
curl -s -o /dev/null "${VIEW_URL}api/hotspots?metric=live&only=sites"
sleep 0.5
base=$(rss)
echo 5 > "/proc/$VIEW_PID/clear_refs" 2>/dev/null || { echo "cannot reset the peak RSS"; exit 77; }
urls=""
for i in 1 2 3 4 5 6 7 8; do urls="$urls ${VIEW_URL}api/tree?min=0&dir=main&filter=size:$i-"; done
fire $urls > "$MT_TMP/statuses"
peak=$(hwm)
ok=$(grep -c '^200 ' "$MT_TMP/statuses")
busy=$(grep -c '^503 [0-9]' "$MT_TMP/statuses")
echo "RSS before ${base} MB, peak $peak MB; 8 heavy requests: $ok answered, $busy busy"
check "8 concurrent heavy requests: each answered or refused with 503 + Retry-After" \
    [ $((ok + busy)) = 8 ]
check "at least one answered" [ "$ok" -ge 1 ]
margin=$((budget / 2))
check "peak RSS grows at most budget + 50% ($((peak - base)) MB <= $((budget + margin)) MB)" \
    [ $((peak - base)) -le $((budget + margin)) ]
sleep 0.3
after=$(rss)
check "memory given back afterwards (RSS $after MB <= $base + $budget MB)" [ "$after" -le $((base + budget)) ]
check "server alive" kill -0 "$VIEW_PID"
stop_viewer

# a queue that is full: one heavy request holds the (tiny) budget while 90
# others arrive; the server queues 64 and refuses the rest at once
start_viewer "$MT_TMP/paths.ctf" --port 0 -q --memory 1M || exit 1
curl -s -o /dev/null "${VIEW_URL}api/info"
urls="${VIEW_URL}api/tree?min=0&dir=main&filter=size:9- ${VIEW_URL}api/tree?min=0&dir=main&filter=size:10-"
i=0
while [ $i -lt 90 ]; do i=$((i + 1)); urls="$urls ${VIEW_URL}api/stats?filter=size:$((i + 100))-"; done
fire $urls > "$MT_TMP/statuses"
ok=$(grep -c '^200 ' "$MT_TMP/statuses")
busy=$(grep -c '^503 [0-9]' "$MT_TMP/statuses")
echo "92 requests with --memory 1M: $ok answered, $busy busy: $(sort "$MT_TMP/statuses" | uniq -c | tr '\n' ' ')"
check "full queue: extra requests refused with 503 and Retry-After ($busy)" [ "$busy" -ge 1 ]
check "full queue: every other request answered ($ok + $busy = 92)" [ $((ok + busy)) = 92 ]
code=$(curl -s -o "$MT_TMP/body" -w '%{http_code}' "${VIEW_URL}api/stats?filter=size:5-")
check "served again once the burst is over" [ "$code" = 200 ]
check "server alive" kill -0 "$VIEW_PID"
stop_viewer

# the compare endpoints count against the same budget: 32 concurrent diffs
# by call path of two traces of 15,000 paths, each with its own filter
# (before: 890 MB under a 64 MB budget; with costs that carry the variances
# of block counts, 32 diffs under 64 MB came to 85-88 MB of the 96 allowed:
# the budget leaves room for the noise of a loaded machine)
"$gen" "$MT_TMP/paths2.ctf" 30000 15000 >/dev/null || { echo "FAIL: viewer-gen"; exit 1; }
budget=80
start_viewer "$MT_TMP/paths.ctf" "$MT_TMP/paths2.ctf" --port 0 -q --memory ${budget}M || exit 1
VIEW_URL=${VIEW_URL%compare.html}
curl -s -o /dev/null "${VIEW_URL}api/compare_info"
sleep 0.3
base=$(rss)
echo 5 > "/proc/$VIEW_PID/clear_refs"
urls=""
i=0
while [ $i -lt 32 ]; do i=$((i + 1)); urls="$urls ${VIEW_URL}api/compare?key=path&limit=200000&filter=size:$i-"; done
fire $urls > "$MT_TMP/statuses"
peak=$(hwm)
ok=$(grep -c '^200 ' "$MT_TMP/statuses")
busy=$(grep -c '^503 [0-9]' "$MT_TMP/statuses")
echo "compare: RSS before ${base} MB, peak $peak MB; 32 diffs: $ok answered, $busy busy"
check "32 concurrent diffs: each answered or refused with 503 + Retry-After" [ $((ok + busy)) = 32 ]
check "at least one diff answered" [ "$ok" -ge 1 ]
margin=$((budget / 2))
check "compare: peak RSS grows at most budget + 50% ($((peak - base)) MB <= $((budget + margin)) MB)" \
    [ $((peak - base)) -le $((budget + margin)) ]
urls=""
i=0
while [ $i -lt 8 ]; do i=$((i + 1)); urls="$urls ${VIEW_URL}api/compare_curves?n=4000&filter=size:$i-"; done
base=$(rss)
echo 5 > "/proc/$VIEW_PID/clear_refs"
fire $urls > "$MT_TMP/statuses"
peak=$(hwm)
check "compare curves: answered or 503 ($(sort "$MT_TMP/statuses" | uniq -c | tr '\n' ' '))" \
    [ "$(grep -c '^200 \|^503 [0-9]' "$MT_TMP/statuses")" = 8 ]
check "compare curves: peak RSS grows at most budget + 50% ($((peak - base)) MB <= $((budget + margin)) MB)" \
    [ $((peak - base)) -le $((budget + margin)) ]
check "server alive" kill -0 "$VIEW_PID"
stop_viewer

# the tree says whether it was cut at the node limit
start_viewer "$MT_FIXTURES/prodcons.ctf" --port 0 -q || exit 1
curl -s "${VIEW_URL}api/tree?min=0" > "$MT_TMP/tree.json"
check "tree JSON says it is complete (truncated: false)" grep -q '"truncated":false' "$MT_TMP/tree.json"
stop_viewer
[ "${MT_STAGE:-plain}" = plain ] || exit 0
# over 2,000,000 distinct nodes from main (plain stage only: 600 MB, a few s)
"$gen" "$MT_TMP/wide.ctf" 400000 200000 >/dev/null || { echo "FAIL: viewer-gen"; exit 1; }
start_viewer "$MT_TMP/wide.ctf" --port 0 -q || exit 1
curl -s "${VIEW_URL}api/tree?min=0&dir=main" > "$MT_TMP/tree.json"
check "tree cut at the node limit says so (truncated: true, max_nodes)" \
    grep -q '"truncated":true,"max_nodes":2000000' "$MT_TMP/tree.json"
# the page shows it, and retries a 503 (headless Chromium, when there)
here=$(cd "$(dirname "$0")" && pwd)
if [ -x /usr/bin/chromium ] && command -v node >/dev/null; then
    if [ ! -d "$here/node_modules/playwright-core" ]; then
        (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) || fail "npm ci"
    fi
    profile=$(mktemp -d "$MT_TMP/chromium-profile.XXXXXX")
    (cd "$here" && timeout 150 node hostile-page.js "$VIEW_URL" "$profile")
    rc=$?
    [ $rc = 0 ] || fail "headless Chromium check (exit $rc)"
else
    echo "(no chromium or node: the page's notice not checked)"
fi
stop_viewer
