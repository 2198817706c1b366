#!/bin/sh
# viewer-memory.sh - the viewer's memory budget under a burst of heavy
# requests (figures in docs/viewer.md, "Memory budget"): a trace of 400,000
# events with 200,000 distinct call paths; N concurrent requests for the
# full tree from main, each with its own filter (nothing shared). Prints the
# resident size before, its peak during the burst and after, and each
# request's status and time. Run once with the default budget and once with
# a large one to compare.
# Usage: sh bench/viewer-memory.sh [BUILD [N [VIEW-ARGS...]]]
#   e.g. sh bench/viewer-memory.sh build 16
#        sh bench/viewer-memory.sh build 4 --memory 4G
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
B=${1:-build}
N=${2:-16}
[ $# -ge 2 ] && shift 2 || set --
BIN=$B/memtrace
bench_need "$B" cli "$BIN"
bench_scratch mt-viewer-mem
pid=""
bench_stop() { [ -z "$pid" ] || { kill $pid 2>/dev/null; wait $pid 2>/dev/null; }; }

make -s BUILD="$B" "$B/bench/viewer-gen"
"$B/bench/viewer-gen" "$tmp/wide.ctf" 400000 200000 >/dev/null
"$BIN" view --port 0 -q "$@" "$tmp/wide.ctf" >"$tmp/out" 2>"$tmp/err" &
pid=$!
i=0
while ! grep -q '^Serving' "$tmp/out" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 600 ] || { cat "$tmp/err"; exit 1; }; sleep 0.1
done
url=$(sed -n 's/^Serving \(http[^ ]*\).*/\1/p' "$tmp/out")
sleep 2   # the warm-up's questions
curl -s -o /dev/null "${url}api/info"
kb() { awk -v k="$1" '$1 == k":" { print int($2 / 1024) }' "/proc/$pid/status"; }
before=$(kb VmRSS)
echo 5 > "/proc/$pid/clear_refs"
t0=$(date +%s.%N)
i=0
while [ $i -lt "$N" ]; do
    i=$((i + 1))
    curl -s -o /dev/null -w '%{http_code} %{time_total}\n' --max-time 300 \
        "${url}api/tree?min=0&dir=main&filter=size:$i-" > "$tmp/r$i" &
done
wait_all() { while [ "$(cat "$tmp"/r* 2>/dev/null | wc -l)" -lt "$N" ]; do sleep 0.1; done; }
wait_all
t1=$(date +%s.%N)
peak=$(kb VmHWM)
sleep 0.5
after=$(kb VmRSS)
echo "view $*: $N requests in $(echo "$t1 - $t0" | bc) s"
echo "RSS before ${before} MB, peak ${peak} MB (+$((peak - before)) MB), after ${after} MB"
cat "$tmp"/r* | sort -k2 -n | awk '{ n[$1]++; printf "  %s in %s s\n", $1, $2 } END { for (s in n) printf "%d x %s\n", n[s], s }'
