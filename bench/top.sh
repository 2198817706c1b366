#!/bin/sh
# top.sh - speed and memory of the analysis engine ('memtrace top' and
# 'memtrace stats') against md5sum reading the same file, in one run.
#
# Uses the trace of bench/codec.sh (bench/gen_trace.c: 5 million events,
# about 47 MB, random-walk stacks), then times REPS interleaved rounds of:
#   md5sum    baseline: read and hash the file
#   decode    bench/decode: the codec alone (every event and backtrace)
#   top       memtrace top: read, build the model, rank allocation sites
#   stats     memtrace stats: the same plus curve, histograms, lifetimes
# and prints medians of wall and user time, the ratio top / md5sum (goal:
# at most 3) and the peak RSS of each (the model's memory).
#
#   sh bench/top.sh            # BUILD=build REPS=7 EVENTS=5000000
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
REPS=${REPS:-7}
EVENTS=${EVENTS:-5000000}
make -s --no-print-directory BUILD="$BUILD" cli bench-tools >/dev/null
TRACE=$BUILD/bench/trace-$EVENTS.ctf
[ -f "$TRACE" ] || "$BUILD/bench/gen_trace" -n "$EVENTS" "$TRACE"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cat "$TRACE" > /dev/null   # warm the page cache
t() { # t NAME CMD...: appends "wall user maxrss_kb" to $tmp/NAME
    name=$1; shift
    /usr/bin/time -f "%e %U %M" -o "$tmp/one" "$@" > /dev/null
    cat "$tmp/one" >> "$tmp/$name"
}
i=0
while [ $i -lt "$REPS" ]; do
    t md5sum md5sum "$TRACE"
    t decode "$BUILD/bench/decode" "$TRACE"
    t top "$BUILD/memtrace" top "$TRACE"
    t stats "$BUILD/memtrace" stats "$TRACE"
    i=$((i + 1))
done
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
m() { cut -d' ' -f"$2" "$tmp/$1" | median; }
echo "trace: $TRACE ($(wc -c < "$TRACE") bytes, $EVENTS events); $REPS interleaved rounds, medians"
printf '%-8s %8s %8s %10s\n' what wall_s user_s maxrss_MB
for w in md5sum decode top stats; do
    printf '%-8s %8s %8s %10s\n' "$w" "$(m $w 1)" "$(m $w 2)" "$(m $w 3 | awk '{ printf "%.0f", $1 / 1024 }')"
done
awk -v a="$(m top 1)" -v b="$(m md5sum 1)" 'BEGIN { printf "top / md5sum (wall): %.1f  (goal: <= 3)\n", a / b }'
