#!/bin/sh
# fold.sh - reports in bounded memory: 'memtrace top', 'folded' and 'pprof'
# on a big program-like trace against md5sum reading the same file, in one
# run. Those reports fold each allocation into its stack's cost while the
# trace is read (lib/analyze/fold.c), so their memory follows the blocks
# live at once and the distinct stacks, not the number of events.
#
# The trace: bench/viewer-gen.c with EVENTS events (default 50 million,
# 444 MB; generated once into $BUILD/bench). REPS interleaved rounds of
# md5sum, top, top --at peak, folded and pprof, and top and folded read on
# one thread (rows top_1t, folded_1t: memtrace --route=one-thread; the others
# read on two threads where two processors are available); medians of
# wall and user+sys time, the ratio to md5sum (goal: at most 4) and the
# peak RSS (goal: <= 300 MB).
# OLD=path/to/an/older/memtrace adds its 'top' and 'top --at peak' to each
# round.
#
#   sh bench/fold.sh            # BUILD=build REPS=3 EVENTS=50000000
#   RT=1 sh bench/fold.sh       # every command at real-time priority
#                               # (chrt -f, needs root): on a shared
#                               # machine, the closest thing to an idle one
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
REPS=${REPS:-3}
EVENTS=${EVENTS:-50000000}
OLD=${OLD:-}
RUN=
if [ "${RT:-0}" = 1 ]; then
    RUN="chrt -f 10"
fi
make -s --no-print-directory BUILD="$BUILD" cli bench-tools >/dev/null
tmp=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
TRACE=$BUILD/bench/paths-$EVENTS.ctf
[ -f "$TRACE" ] || "$BUILD/bench/viewer-gen" "$TRACE" "$EVENTS" > /dev/null
t() { # t NAME CMD...: appends "wall user+sys maxrss_kb" to $tmp/NAME
    name=$1; shift
    $RUN /usr/bin/time -f "%e %U %S %M" -o "$tmp/one" "$@" > /dev/null
    awk '{ print $1, $2 + $3, $4 }' "$tmp/one" >> "$tmp/$name"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
m() { cut -d' ' -f"$2" "$tmp/$1" | median; }
cat "$TRACE" > /dev/null   # warm the page cache
whats="md5sum top top_1t top_peak folded folded_1t pprof"
[ -n "$OLD" ] && whats="$whats old_top old_top_peak"
i=0
while [ $i -lt "$REPS" ]; do
    t md5sum md5sum "$TRACE"
    t top "$BUILD/memtrace" top "$TRACE"
    t top_1t "$BUILD/memtrace" --route=one-thread top "$TRACE"
    t top_peak "$BUILD/memtrace" top --at peak "$TRACE"
    t folded "$BUILD/memtrace" folded "$TRACE"
    t folded_1t "$BUILD/memtrace" --route=one-thread folded "$TRACE"
    t pprof "$BUILD/memtrace" pprof -o "$tmp/p.pb.gz" "$TRACE"
    [ -n "$OLD" ] && t old_top "$OLD" top "$TRACE"
    [ -n "$OLD" ] && t old_top_peak "$OLD" top --at peak "$TRACE"
    i=$((i + 1))
done
echo "trace: $TRACE ($(wc -c < "$TRACE") bytes, $EVENTS events); $REPS interleaved rounds, medians"
printf '%-12s %8s %10s %8s %10s\n' what wall_s cpu_s x_md5 maxrss_MB
for w in $whats; do
    printf '%-12s %8s %10s %8s %10s\n' "$w" "$(m $w 1)" "$(m $w 2)" \
        "$(awk -v a="$(m $w 1)" -v b="$(m md5sum 1)" 'BEGIN { printf "%.1f", a / b }')" \
        "$(m $w 3 | awk '{ printf "%.0f", $1 / 1024 }')"
done
