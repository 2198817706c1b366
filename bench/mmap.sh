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
B=${1:-build}
ITERS=${ITERS:-20000}
ROUNDS=${ROUNDS:-5}
BIN=$B/bench/mmap_bench
LIB=$PWD/$B/libmemtrace.so
out=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-bench.XXXXXX")
[ -x "$BIN" ] && [ -f "$LIB" ] || make --no-print-directory -s BUILD="$B" libs bench-tools >&2

run() {
    case $1 in
        plain) set -- ;;
        never) set -- env LD_PRELOAD="$LIB" MEMTRACE="$out/never.ctf" MEMTRACE_RATE=1e-18 ;;
        mt512k) set -- env LD_PRELOAD="$LIB" MEMTRACE="$out/512k.ctf" MEMTRACE_RATE=1.9073486328125e-06 ;;
    esac
    "$@" "$BIN" "$ITERS" | sed -n 's/.*seconds=\([0-9.]*\) cpu=\([0-9.]*\).*/\1 \2/p'
}
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "# mmap_bench $ITERS mappings, $ROUNDS interleaved rounds ($(date -u +%Y-%m-%d), $(nproc) CPUs)"
: >"$out/t"
for r in $(seq "$ROUNDS"); do
    for v in plain never mt512k; do
        set -- $(run $v)
        [ $v = plain ] && pw=$1 pc=$2
        echo "$v $1 $2 $(awk -v a="$1" -v b="$pw" 'BEGIN { print a / b }') $(awk -v a="$2" -v b="$pc" 'BEGIN { print a / b }')" >>"$out/t"
    done
done
echo "| variant | median wall (s) | wall ratio (median) | CPU ratio (median) |"
echo "|---|---|---|---|"
for v in plain never mt512k; do
    w=$(awk -v v=$v '$1 == v { print $2 }' "$out/t" | median)
    rw=$(awk -v v=$v '$1 == v { print $4 }' "$out/t" | median)
    rc=$(awk -v v=$v '$1 == v { print $5 }' "$out/t" | median)
    echo "| $v | $w | $rw | $rc |"
done
samples=$("$B/memtrace" info "$out/512k.ctf" 2>/dev/null | sed -n 's/^by kind: *malloc [0-9]*, mmap \([0-9]*\)/\1/p')
echo "(last 512 KiB run: ${samples:-?} sampled points in mappings)"
rm -rf "$out"
