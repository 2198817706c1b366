#!/bin/sh
# mmap.sh - cost of the recorder on a program that only maps and unmaps
# anonymous memory (bench/mmap_bench.c), against no recorder, in
# interleaved rounds; prints a markdown table of median times and median
# per-round ratios (wall and CPU time of the loop).
#
#   sh bench/mmap.sh [BUILD]      env: ITERS (20000), ROUNDS (5)
#
# Variants: plain; the recorder never sampling (rate 1e-18: the bare cost of
# interposing mmap/munmap); the recorder at the default 512 KiB interval
# (about one mapping in 2.5 sampled, so the table of points is never empty).
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
B=${1:-build}
ITERS=${ITERS:-20000}
ROUNDS=${ROUNDS:-5}
BIN=$B/bench/mmap_bench
LIB=$PWD/$B/libmemtrace.so
bench_need "$B" "libs bench-tools" "$BIN" "$LIB"
bench_scratch memtrace-bench; out=$tmp

run() {
    case $1 in
        plain) set -- ;;
        never) set -- env LD_PRELOAD="$LIB" MEMTRACE="$out/never.ctf" MEMTRACE_RATE=1e-18 ;;
        mt512k) set -- env LD_PRELOAD="$LIB" MEMTRACE="$out/512k.ctf" MEMTRACE_RATE=1.9073486328125e-06 ;;
    esac
    $RUN "$@" "$BIN" "$ITERS" >"$out/last.txt" || { echo "NaN NaN"; return; }
    bench_seconds "$out/last.txt"
}

echo "# mmap_bench $ITERS mappings, $ROUNDS interleaved rounds ($(date -u +%Y-%m-%d), $(nproc) CPUs)"
: >"$out/t"
for r in $(seq "$ROUNDS"); do
    for v in plain never mt512k; do
        echo "$r $v $(run $v)" >>"$out/t"
    done
done
echo "| variant | median wall (s) | wall ratio (median) | CPU ratio (median) |"
echo "|---|---|---|---|"
for v in plain never mt512k; do
    w=$(column 3 $v "$out/t" | median)
    rw=$(ratios 3 $v plain "$out/t" | median)
    rc=$(ratios 4 $v plain "$out/t" | median)
    echo "| $v | $w | $rw | $rc |"
done
samples=$("$B/memtrace" info "$out/512k.ctf" 2>/dev/null | sed -n 's/^by kind: *malloc [0-9]*, mmap \([0-9]*\)/\1/p')
echo "(last 512 KiB run: ${samples:-?} sampled points in mappings)"
