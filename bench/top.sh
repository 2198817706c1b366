#!/bin/sh
# top.sh - speed of 'memtrace top' against md5sum reading the same file.
#
# Generates (once) a synthetic 5-million-event OCaml-like trace with
# bench/gen-trace.c, then times, interleaved, N rounds of: md5sum FILE,
# memtrace top FILE, memtrace stats FILE. Prints the median wall and user
# times and the ratio top/md5sum (the goal is at most 3), and the peak RSS
# of 'memtrace top' (the model's memory).
#
#   sh bench/top.sh [ROUNDS]        (BUILD=build by default; EVENTS=5000000)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
EVENTS=${EVENTS:-5000000}
ROUNDS=${1:-7}
work=${BENCH_TMP:-${TMPDIR:-/tmp}/memtrace-bench}
mkdir -p "$work"
trace=$work/synthetic-$EVENTS.ctf
if [ ! -s "$trace" ]; then
    cc -O2 -std=gnu11 -D_GNU_SOURCE -Iinclude bench/gen-trace.c "$BUILD/libmemtrace-trace.a" -o "$work/gen-trace"
    "$work/gen-trace" "$trace" "$EVENTS"
fi
cat "$trace" > /dev/null  # warm the page cache
t() { # t NAME CMD...: append "wall user maxrss_kb" to $work/NAME
    name=$1; shift
    /usr/bin/time -f "%e %U %M" -o "$work/one" "$@" > /dev/null
    cat "$work/one" >> "$work/$name"
}
rm -f "$work/md5" "$work/top" "$work/stats"
i=0
while [ $i -lt "$ROUNDS" ]; do
    t md5 md5sum "$trace"
    t top "$BUILD/memtrace" top "$trace"
    t stats "$BUILD/memtrace" stats "$trace"
    i=$((i + 1))
done
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
m() { cut -d' ' -f"$2" "$work/$1" | median; }
size=$(wc -c < "$trace")
echo "trace: $trace ($size bytes, $EVENTS events), $ROUNDS interleaved rounds, medians"
printf '%-8s %8s %8s %10s\n' what wall_s user_s maxrss_MB
for w in md5 top stats; do
    printf '%-8s %8s %8s %10s\n' "$w" "$(m $w 1)" "$(m $w 2)" "$(m $w 3 | awk '{ printf "%.0f", $1 / 1024 }')"
done
awk -v a="$(m top 1)" -v b="$(m md5 1)" 'BEGIN { printf "top / md5sum (wall): %.2f  (goal: <= 3)\n", a / b }'
