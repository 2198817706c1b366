#!/bin/sh
# recorder.sh - cost of the recorder on an allocation-bound benchmark
# (bench/alloc_bench.c: THREADS threads, PAIRS malloc/free pairs of 16..512
# bytes), against plain glibc, in interleaved rounds; prints a markdown table
# of median wall times and median per-round ratios to plain glibc.
#
#   sh bench/recorder.sh [BUILD]       (default build/; builds what it needs)
#   env: PAIRS (20000000), THREADS (2), DEPTHS ("0 20"), ROUNDS (7),
#        HEAPTRACK_ROUNDS (3; 0 skips heaptrack), JEMALLOC (path of libjemalloc.so.2)
#
# Variants: plain glibc; the recorder never sampling (rate 1e-18: the cost of
# interposing at all); the recorder at 512 KiB and 64 KiB mean intervals
# (writing a trace); Debian's jemalloc without and with its sampling profiler
# (prof:true,lg_prof_sample:19 = 512 KiB); heaptrack (records everything).
# Per-sample cost = (64 KiB time - never-sampling time) / samples, samples =
# bytes requested / 65536; also from the CPU time of the benchmark's threads,
# which a busy machine disturbs less than wall time.
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
B=${1:-build}
PAIRS=${PAIRS:-20000000}
THREADS=${THREADS:-2}
DEPTHS=${DEPTHS:-"0 20"}
ROUNDS=${ROUNDS:-7}
HT_ROUNDS=${HEAPTRACK_ROUNDS:-3}
JE=${JEMALLOC:-/usr/lib/x86_64-linux-gnu/libjemalloc.so.2}
BIN=$B/bench/alloc_bench
LIB=$PWD/$B/libmemtrace.so
bench_need "$B" "libs bench-tools" "$BIN" "$LIB"
bench_scratch memtrace-bench; out=$tmp

# run VARIANT DEPTH: prints the seconds the benchmark's own threads took
# (start-up and exit, e.g. the recorder's final symbolization, excluded).
run() {
    v=$1 d=$2
    case $v in
        plain) set -- ;;
        never) set -- env LD_PRELOAD="$LIB" MEMTRACE="$out/never.ctf" MEMTRACE_RATE=1e-18 ;;
        mt512k) set -- env LD_PRELOAD="$LIB" MEMTRACE="$out/512k.ctf" MEMTRACE_RATE=1.9073486328125e-06 ;;
        mt64k) set -- env LD_PRELOAD="$LIB" MEMTRACE="$out/64k.ctf" MEMTRACE_RATE=1.52587890625e-05 ;;
        je) set -- env LD_PRELOAD="$JE" ;;
        jeprof) set -- env LD_PRELOAD="$JE" MALLOC_CONF=prof:true,lg_prof_sample:19 ;;
        heaptrack) set -- heaptrack -o "$out/ht" ;;
    esac
    $RUN "$@" "$BIN" "$PAIRS" "$THREADS" "$d" >"$out/last.txt" 2>&1 || { echo "NaN NaN"; return; }
    bench_seconds "$out/last.txt"
}

variants="plain never mt512k mt64k"
[ -f "$JE" ] && variants="$variants je jeprof"
command -v heaptrack >/dev/null 2>&1 && [ "$HT_ROUNDS" -gt 0 ] && variants="$variants heaptrack"

echo "# alloc_bench $PAIRS pairs, $THREADS threads, $ROUNDS interleaved rounds ($(date -u +%Y-%m-%d), $(nproc) CPUs)"
for d in $DEPTHS; do
    : >"$out/times.$d"
    for r in $(seq "$ROUNDS"); do
        for v in $variants; do
            [ "$v" = heaptrack ] && [ "$r" -gt "$HT_ROUNDS" ] && continue
            echo "$r $v $(run "$v" "$d")" >>"$out/times.$d"
        done
    done
    "$BIN" "$PAIRS" "$THREADS" "$d" >"$out/last.txt"
    bytes=$(sed -n 's/.*bytes=\([0-9]*\).*/\1/p' "$out/last.txt")
    echo
    echo "## depth $d ($(( d + 5 )) frames at malloc)"
    echo
    echo "| variant | median time (s) | ratio to plain (median, min-max) | CPU-time ratio (median) |"
    echo "|---|---|---|---|"
    for v in $variants; do
        t=$(column 3 $v "$out/times.$d" | median)
        rs=$(ratios 3 $v plain "$out/times.$d")
        rm=$(echo "$rs" | median)
        lo=$(echo "$rs" | sort -g | head -n 1)
        hi=$(echo "$rs" | sort -g | tail -n 1)
        cr=$(ratios 4 $v plain "$out/times.$d" | median)
        echo "| $v | $t | $rm ($lo-$hi) | $cr |"
    done
    tn=$(column 3 never "$out/times.$d" | median)
    t64=$(column 3 mt64k "$out/times.$d" | median)
    cn=$(column 4 never "$out/times.$d" | median)
    c64=$(column 4 mt64k "$out/times.$d" | median)
    echo
    echo "$bytes $tn $t64 $cn $c64" | awk '{ s = $1 / 65536; printf "64 KiB: about %.0f samples; per-sample cost (64 KiB - never sampling) / samples: %.2f us of wall time, %.2f us of CPU time of the allocating threads\n", s, ($3 - $2) / s * 1e6, ($5 - $4) / s * 1e6 }'
done
