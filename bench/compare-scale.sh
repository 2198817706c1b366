#!/bin/sh
# compare-scale.sh - 'memtrace diff' and 'memtrace check' on a big trace in
# bounded memory, against md5sum reading the same file, in one run. Both
# fold each allocation into per-stack sums while they read (lib/analyze/
# difffold.c), so their memory follows the blocks live at once and the
# distinct stacks, not the number of events.
#
# The trace: bench/viewer-gen.c with EVENTS events (default 50 million,
# 444 MB; generated once into $BUILD/bench, as bench/fold.sh does). REPS
# interleaved rounds of md5sum and of:
#   diff         memtrace diff T T                        (2 reads, at once:
#                one thread per side)
#   diff_apart   the same, memtrace --route=one-thread        (2 reads, one
#                after the other)
#   windows      memtrace diff --windows 0-10s 10s- T     (1 read)
#   check        memtrace check --max-alloc --max-live-end T (1 read)
#   diff_peak    memtrace diff --by live --at peak T T    (4 reads: each
#                trace once for its peak, once to fold)
#   check2       memtrace check --max-alloc T T           (2 reads: two
#                files aggregated, merged by a thread as they are read)
#   check_base   memtrace check --max-increase 10% --by alloc --base T T
#                                                         (2 reads, at once)
# medians of wall and user+sys time, the wall time over md5sum's and the
# time per read of the trace over md5sum's (goal: at most 4) and the peak
# RSS (goal: <= 300 MB). TRACE=FILE uses that trace instead; as root the
# commands run at real-time priority (chrt -f 10: steadier on a shared
# machine; NOCHRT=1 turns it off).
# WHOLE=1 adds the same diff, windows, check, check2 with memtrace --route=whole
# (the whole model: one record per allocation, as before folding).
#
#   sh bench/compare-scale.sh   # BUILD=build REPS=3 EVENTS=50000000 WHOLE= TRACE=
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
REPS=${REPS:-3}
EVENTS=${EVENTS:-50000000}
WHOLE=${WHOLE:-}
make -s --no-print-directory BUILD="$BUILD" cli bench-tools >/dev/null
tmp=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
TRACE=${TRACE:-$BUILD/bench/paths-$EVENTS.ctf}
[ -f "$TRACE" ] || "$BUILD/bench/viewer-gen" "$TRACE" "$EVENTS" > /dev/null
RT=
[ "$(id -u)" = 0 ] && [ -z "${NOCHRT:-}" ] && command -v chrt > /dev/null && RT="chrt -f 10"
M=$BUILD/memtrace
t() { # t NAME CMD...: appends "wall user+sys maxrss_kb" to $tmp/NAME
    name=$1; shift
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/one" $RT "$@" > /dev/null || true
    tail -n 1 "$tmp/one" | awk '{ print $1, $2 + $3, $4 }' >> "$tmp/$name"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
m() { cut -d' ' -f"$2" "$tmp/$1" | median; }
cat "$TRACE" > /dev/null   # warm the page cache
whats="md5sum diff diff_apart windows check diff_peak check2 check_base"
[ -n "$WHOLE" ] && whats="$whats whole_diff whole_windows whole_check whole_check2"
i=0
while [ $i -lt "$REPS" ]; do
    t md5sum md5sum "$TRACE"
    t diff "$M" diff "$TRACE" "$TRACE"
    t diff_apart "$M" --route=one-thread diff "$TRACE" "$TRACE"
    t windows "$M" diff --windows 0-10s 10s- "$TRACE"
    t check "$M" check --max-alloc 1TiB --max-live-end 1TiB "$TRACE"
    t diff_peak "$M" diff --by live --at peak "$TRACE" "$TRACE"
    t check2 "$M" check --max-alloc 1TiB "$TRACE" "$TRACE"
    t check_base "$M" check --max-increase 10% --by alloc --base "$TRACE" "$TRACE"
    if [ -n "$WHOLE" ]; then
        t whole_diff "$M" --route=whole diff "$TRACE" "$TRACE"
        t whole_windows "$M" --route=whole diff --windows 0-10s 10s- "$TRACE"
        t whole_check "$M" --route=whole check --max-alloc 1TiB --max-live-end 1TiB "$TRACE"
        t whole_check2 "$M" --route=whole check --max-alloc 1TiB "$TRACE" "$TRACE"
    fi
    i=$((i + 1))
done
reads() {
    case $1 in md5sum|windows|check|whole_windows|whole_check) echo 1 ;;
               diff|diff_apart|whole_diff|check2|whole_check2|check_base) echo 2 ;; diff_peak) echo 4 ;; esac
}
echo "trace: $TRACE ($(wc -c < "$TRACE") bytes, $EVENTS events); $REPS interleaved rounds, medians"
printf '%-14s %6s %8s %10s %8s %14s %14s %10s\n' what reads wall_s cpu_s x_md5 x_md5_per_read cpu_x_md5_read maxrss_MB
for w in $whats; do
    r=$(reads "$w")
    printf '%-14s %6s %8s %10s %8s %14s %14s %10s\n' "$w" "$r" "$(m $w 1)" "$(m $w 2)" \
        "$(awk -v a="$(m $w 1)" -v b="$(m md5sum 1)" 'BEGIN { printf "%.1f", a / b }')" \
        "$(awk -v a="$(m $w 1)" -v b="$(m md5sum 1)" -v r="$r" 'BEGIN { printf "%.1f", a / b / r }')" \
        "$(awk -v a="$(m $w 2)" -v b="$(m md5sum 2)" -v r="$r" 'BEGIN { printf "%.1f", a / b / r }')" \
        "$(m $w 3 | awk '{ printf "%.0f", $1 / 1024 }')"
done
