#!/bin/sh
# viewer.sh - speed of `memtrace view` (figures in docs/PERFORMANCE.md):
#   1. ready to browse: from starting the command on a 5-million-event trace
#      until the page's first answers (info, curve, allocation-site tree,
#      points of interest) are in; baseline in the same run: `memtrace stats`
#      on the same file (one load and one report).
#   2. applying a filter: the requests the page sends for a new filter (a
#      check, then three in parallel), until the last answer.
#   3. the page with a flame graph of about 100,000 nodes, in headless
#      Chromium: redraw, hover, zoom, search.
# Medians of interleaved runs. Usage: sh bench/viewer.sh [BUILD] (default build)
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
B=${1:-build}
BIN=$B/memtrace
RUNS=${RUNS:-5}
bench_need "$B" cli "$BIN"
bench_scratch mt-viewer-bench
pids=""
# (waited for: a server still stopping would write into $tmp as it goes)
bench_stop() { for p in $pids; do kill $p 2>/dev/null; wait $p 2>/dev/null; done; }

mkdir -p "$B/bench"
cc -O2 -Iinclude -D_GNU_SOURCE -o "$B/bench/viewer-gen" bench/viewer-gen.c "$B/libmemtrace-trace.a" -lm
cc -O2 -Iinclude -D_GNU_SOURCE -o "$B/bench/gen_trace" bench/gen_trace.c "$B/libmemtrace-trace.a" -lm
"$B/bench/viewer-gen" "$tmp/paths.ctf" 5000000 >/dev/null      # 400 call paths, program-like
"$B/bench/gen_trace" -n 5000000 "$tmp/walk.ctf" >/dev/null     # random-walk stacks, 4.6M distinct

now() { date +%s.%N; }

nstart=0
start() { # start FILE -> URL in $url, pid in $vpid
    nstart=$((nstart + 1)); out=$tmp/out$nstart   # a new file: never read a previous server's URL
    "$BIN" view --port 0 -q "$1" >"$out" 2>"$tmp/err" &
    vpid=$!; pids="$pids $vpid"; url=""
    while [ -z "$url" ]; do
        kill -0 $vpid 2>/dev/null || { cat "$tmp/err" >&2; exit 1; }
        # (the server may not have made "$out" yet: sed fails, set -e must not stop the script)
        url=$(sed -n 's/^Serving \(http[^ ]*\).*/\1/p' "$out" 2>/dev/null || true)
        [ -n "$url" ] || sleep 0.01
    done
}
stop() { kill $vpid; wait $vpid 2>/dev/null || true; }

page_requests() { # page_requests FILTER: what the page asks for a filter, in parallel
    curl -s -o /dev/null "${url}api/filter?filter=$1"
    curl -s -o /dev/null "${url}api/curve?n=1200&filter=$1" & a=$!
    curl -s -o /dev/null "${url}api/hotspots?filter=$1" & b=$!
    curl -s -o /dev/null "${url}api/tree?dir=sites&min=0.001&filter=$1" & c=$!
    wait $a $b $c
}

echo "== ready to browse, $RUNS interleaved runs (trace: $(wc -c < "$tmp/paths.ctf") bytes, 5M events)"
: > "$tmp/ready"; : > "$tmp/base"
i=0
while [ $i -lt "$RUNS" ]; do
    t0=$(now); "$BIN" stats "$tmp/paths.ctf" >/dev/null; t1=$(now)
    echo "$t1 - $t0" | bc >> "$tmp/base"
    t0=$(now); start "$tmp/paths.ctf"; curl -s -o /dev/null "${url}api/info"; page_requests ""; t1=$(now); stop
    echo "$t1 - $t0" | bc >> "$tmp/ready"
    i=$((i + 1))
done
r=$(median < "$tmp/ready"); s=$(median < "$tmp/base")
echo "view ready: ${r}s   memtrace stats: ${s}s   ratio $(echo "scale=2; $r / $s" | bc)"

echo "== applying a filter (new filter each time: no cache), median of $RUNS"
start "$tmp/paths.ctf"
for f in "live:end" "alloc:1s-3s" "live:2.5s" "size:%3E%3D4k" "inside:fn0042" "lifetime:%3C10ms" "hide:mod007" "collect:never+size:%3C=64"; do
    : > "$tmp/f"
    i=0
    while [ $i -lt "$RUNS" ]; do
        t0=$(now); page_requests "$f+lifetime:%3E%3D$i""us"; t1=$(now)   # distinct filter each run
        echo "$t1 - $t0" | bc >> "$tmp/f"; i=$((i + 1))
    done
    echo "$f: $(median < "$tmp/f")s"
done
stop

echo "== the page with a large flame graph (random-walk trace, top-down tree)"
t0=$(now); start "$tmp/walk.ctf"; t1=$(now)
echo "walk trace loaded and serving in $(echo "$t1 - $t0" | bc)s"
if [ -x /usr/bin/chromium ] && [ -d tests/viewer/node_modules/playwright-core ]; then
    for min in 0.0001 0.00004; do
        mkdir -p "$tmp/profile$min"
        node bench/viewer-page.js "${url}?dir=main&min=$min" "$tmp/profile$min"
    done
else
    echo "skipped: needs /usr/bin/chromium and tests/viewer/node_modules (npm ci in tests/viewer)"
fi
stop
