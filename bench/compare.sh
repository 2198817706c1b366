#!/bin/sh
# compare.sh - speed and memory of 'memtrace diff' against 'memtrace top'
# on the same traces, in one run. Two pairs of traces of EVENTS events
# (two seeds each): bench/viewer-gen.c's (shaped like a program: 400 call
# paths) and bench/gen_trace.c's (random-walk stacks: nearly every stack
# new, the worst case for --key path). For each pair, REPS interleaved
# rounds of:
#   top2        memtrace top on each trace (two model builds: the floor)
#   diff-site   memtrace diff (per allocation site)
#   diff-path   memtrace diff --key path (per call path)
# and prints medians of wall and user time, the ratio diff / top2, and
# peak RSS.
#
#   sh bench/compare.sh        # BUILD=build REPS=5 EVENTS=2000000
#   RT=1 sh bench/compare.sh   # the commands at real-time priority (root)
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
REPS=${REPS:-5}
EVENTS=${EVENTS:-2000000}
make -s --no-print-directory BUILD="$BUILD" cli bench-tools >/dev/null
bench_scratch memtrace-bench
"$BUILD/bench/gen_trace" -n "$EVENTS" -s 1 "$tmp/rw1.ctf"
"$BUILD/bench/gen_trace" -n "$EVENTS" -s 2 "$tmp/rw2.ctf"
"$BUILD/bench/viewer-gen" "$tmp/pa1.ctf" "$EVENTS" > /dev/null
"$BUILD/bench/viewer-gen" "$tmp/pa2.ctf" "$EVENTS" > /dev/null
m() { col_median "$@"; }
for pair in pa rw; do
    A=$tmp/${pair}1.ctf B=$tmp/${pair}2.ctf
    cat "$A" "$B" > /dev/null
    rm -f "$tmp/top2" "$tmp/site" "$tmp/path"
    i=0
    while [ $i -lt "$REPS" ]; do
        timed top2 sh -c "'$BUILD/memtrace' top '$A' >/dev/null && '$BUILD/memtrace' top '$B'" || true
        timed site "$BUILD/memtrace" diff "$A" "$B" || true
        timed path "$BUILD/memtrace" diff --key path "$A" "$B" || true
        i=$((i + 1))
    done
    paths=$("$BUILD/memtrace" diff --key path --json "$A" "$B" | sed -n 's/.*"n_entries":\([0-9]*\).*/\1/p' | head -n 1)
    echo "== $pair: $EVENTS events per trace, $(du -k "$A" | cut -f1) KB, $paths distinct call paths (medians of $REPS)"
    for k in top2 site path; do
        printf '%-10s wall %6ss  user %6ss  x%-5s  peak RSS %s MB\n' "$k" "$(m $k 1)" "$(m $k 2)" \
            "$(awk -v a="$(m $k 1)" -v b="$(m top2 1)" 'BEGIN { printf "%.2f", a / b }')" \
            "$(awk -v r="$(m $k 3)" 'BEGIN { printf "%.0f", r / 1024 }')"
    done
done
