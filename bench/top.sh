#!/bin/sh
# top.sh - speed and memory of the analysis engine ('memtrace top' and
# 'memtrace stats') against md5sum reading the same file, in one run.
#
# Two traces of 5 million events: bench/viewer-gen.c's, shaped like a
# program (400 call paths sharing their outer frames, 44 MB), and
# bench/codec.sh's (bench/gen_trace.c, random-walk stacks: nearly every
# stack new, 47 MB). For each, REPS interleaved rounds of:
#   md5sum    baseline: read and hash the file
#   decode    bench/decode: the codec alone (every event and backtrace)
#   top       memtrace top: read, build the model, rank allocation sites
#   stats     memtrace stats: the same plus curve, histograms, lifetimes
# and prints medians of wall and user time, the ratio top / md5sum (goal:
# at most 3) and the peak RSS of each (the model's memory).
#
#   sh bench/top.sh            # BUILD=build REPS=7 EVENTS=5000000
#   RT=1 sh bench/top.sh       # the commands at real-time priority (root)
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
REPS=${REPS:-7}
EVENTS=${EVENTS:-5000000}
make -s --no-print-directory BUILD="$BUILD" cli bench-tools >/dev/null
bench_scratch memtrace-bench
RW=$BUILD/bench/trace-$EVENTS.ctf
[ -f "$RW" ] || "$BUILD/bench/gen_trace" -n "$EVENTS" "$RW"
PATHS=$BUILD/bench/paths-$EVENTS.ctf
[ -f "$PATHS" ] || "$BUILD/bench/viewer-gen" "$PATHS" "$EVENTS" > /dev/null
m() { col_median "$@"; }
for TRACE in "$PATHS" "$RW"; do
    cat "$TRACE" > /dev/null   # warm the page cache
    rm -f "$tmp/md5sum" "$tmp/decode" "$tmp/top" "$tmp/stats"
    i=0
    while [ $i -lt "$REPS" ]; do
        timed md5sum md5sum "$TRACE"
        timed decode "$BUILD/bench/decode" "$TRACE"
        timed top "$BUILD/memtrace" top "$TRACE"
        timed stats "$BUILD/memtrace" stats "$TRACE"
        i=$((i + 1))
    done
    echo "trace: $TRACE ($(wc -c < "$TRACE") bytes, $EVENTS events); $REPS interleaved rounds, medians"
    printf '%-8s %8s %8s %10s\n' what wall_s user_s maxrss_MB
    for w in md5sum decode top stats; do
        printf '%-8s %8s %8s %10s\n' "$w" "$(m $w 1)" "$(m $w 2)" "$(m $w 3 | awk '{ printf "%.0f", $1 / 1024 }')"
    done
    awk -v a="$(m top 1)" -v b="$(m md5sum 1)" 'BEGIN { printf "top / md5sum (wall): %.1f  (goal: <= 3)\n\n", a / b }'
done
