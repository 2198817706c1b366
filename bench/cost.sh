#!/bin/sh
# cost.sh - the recorder's headline cost figures, each a ratio or a share
# inside one run (a busy machine moves them little):
#  1. mallocbench's workload (bench/alloc_bench.c: 2 threads, PAIRS
#     free+malloc pairs of 16-512 B over rings of 4,096 blocks): CPU of the
#     recorder sampling at the default 512 KiB interval over CPU of the
#     recorder never sampling (MEMTRACE_RATE=1e-18), and the latter over
#     plain glibc; beside them the least a malloc interposer can be
#     (bench/forward_shim.c: a load, a test and a jump on to glibc per
#     call, recording nothing) over plain glibc, the floor under the
#     second ratio; interleaved rounds (the order alternating), median of
#     the per-round ratios. Then
#     the free filter's false positives (bench/free_filter.c), and the
#     instructions the wrappers add to a malloc+free pair and to a
#     new[]+delete[] pair, and the sampling's share of instructions on
#     the workload (valgrind).
#  2. gcc -O1 -c of a generated 13,000-line C file under `memtrace run` at
#     the default interval, under perf record (children followed): the
#     share of CPU samples in the interposition wrappers (what any malloc
#     interposer pays), in the rest of the recorder (sampling, libunwind,
#     queueing, the writer thread) and in the memtrace process (naming the
#     frames after the run); twice, the first run naming from the debug
#     information and a later one from the name cache the first filled.
#
#   sh bench/cost.sh [BUILD]        ROUNDS (9), PAIRS (10000000)
# Needs perf (Debian: linux-perf) for figure 2, valgrind for the
# instruction count.
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
B=${1:-build}
ROUNDS=${ROUNDS:-9} PAIRS=${PAIRS:-10000000}
LIB=$PWD/$B/libmemtrace.so
SHIM=$PWD/$B/bench/forward_shim.so
bench_need "$B" "libs cli bench-tools" "$LIB" "$B/memtrace" "$B/bench/alloc_bench" "$B/bench/free_filter" "$SHIM"
bench_scratch memtrace-cost
cpu() { /usr/bin/time -f "%U %S" -o "$tmp/tm" "$@" >/dev/null 2>&1; awk '{ print $1 + $2 }' "$tmp/tm"; }
never() { cpu env LD_PRELOAD="$LIB" MEMTRACE="$tmp/n.ctf" MEMTRACE_RATE=1e-18 "$B/bench/alloc_bench" "$PAIRS" 2 0; }
sampling() { cpu env LD_PRELOAD="$LIB" MEMTRACE="$tmp/s.ctf" "$B/bench/alloc_bench" "$PAIRS" 2 0; }
shim() { cpu env LD_PRELOAD="$SHIM" "$B/bench/alloc_bench" "$PAIRS" 2 0; }
for r in $(seq "$ROUNDS"); do
    # the order within a round alternates, so that a trend in the load
    # favours neither side
    if [ $((r % 2)) = 1 ]; then
        p=$(cpu "$B/bench/alloc_bench" "$PAIRS" 2 0); f=$(shim); n=$(never); s=$(sampling)
    else
        s=$(sampling); n=$(never); f=$(shim); p=$(cpu "$B/bench/alloc_bench" "$PAIRS" 2 0)
    fi
    echo "$p $n $s $f"
done >"$tmp/rounds"
m=$(awk '{ print $3 / $2 }' "$tmp/rounds" | median)
k=$(awk '{ print $2 / $1 }' "$tmp/rounds" | median)
f=$(awk '{ print $4 / $1 }' "$tmp/rounds" | median)
printf "mallocbench: sampling / never sampling %.3fx (goal <= 1.03x); never sampling / glibc %.3fx (goal <= 1.05x); the forwarding shim / glibc %.3fx (any interposer's floor); %s rounds\n" \
    "$m" "$k" "$f" "$ROUNDS"
env LD_PRELOAD="$LIB" MEMTRACE="$tmp/f.ctf" "$B/bench/free_filter" "$PAIRS" 2 | sed 's/^/free filter: /'
# Instructions the wrappers add to a malloc+free pair: valgrind's
# instruction count (exact, the same on a loaded machine, and available
# where perf has no hardware counters) of alloc_bench on one thread, plain
# and with the recorder never sampling, at N and 2N pairs (the difference
# cancels start-up and exit); then the same for a new[]+delete[] pair of a
# C++ loop (against libstdc++'s operator new on glibc).
if command -v valgrind >/dev/null 2>&1; then
    ir() { valgrind --tool=callgrind --trace-children=yes --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
           awk '/Collected :/ { s += $4 } END { print s }'; }
    # added PROGRAM WHAT: the per-pair counts of PROGRAM N (plain, recorder)
    added() {
        N=100000
        p1=$(ir env "$1" $N 1 0); p2=$(ir env "$1" $((2 * N)) 1 0)
        n1=$(ir env LD_PRELOAD="$LIB" MEMTRACE="$tmp/i.ctf" MEMTRACE_RATE=1e-18 "$1" $N 1 0)
        n2=$(ir env LD_PRELOAD="$LIB" MEMTRACE="$tmp/i.ctf" MEMTRACE_RATE=1e-18 "$1" $((2 * N)) 1 0)
        f1=$(ir env LD_PRELOAD="$SHIM" "$1" $N 1 0); f2=$(ir env LD_PRELOAD="$SHIM" "$1" $((2 * N)) 1 0)
        awk -v p1="$p1" -v p2="$p2" -v n1="$n1" -v n2="$n2" -v f1="$f1" -v f2="$f2" -v n=$N -v what="$2" 'BEGIN {
            printf "interposition: %.1f instructions added to a %s pair (without the recorder: %.0f; the forwarding shim adds %.1f; valgrind callgrind, never sampling)\n",
                   ((n2 - n1) - (p2 - p1)) / n, what, (p2 - p1) / n, ((f2 - f1) - (p2 - p1)) / n }'
    }
    added "$B/bench/alloc_bench" malloc+free
    printf '%s\n' '#include <cstdlib>' 'int main(int argc, char **argv) {' \
        '    long n = atol(argv[1]);' \
        '    for (long i = 0; i < n; i++) { char *volatile p = new char[16 + (i & 255)]; delete[] p; }' \
        '    return 0; }' >"$tmp/newdel.cc"
    if ${CXX:-c++} -O2 -o "$tmp/newdel" "$tmp/newdel.cc" 2>/dev/null; then
        added "$tmp/newdel" "new[]+delete[]"
    else
        echo "interposition: no C++ compiler: new+delete not counted"
    fi
    # The sampling's own instructions, every thread's (the writer's too):
    # figure 1's workload on PAIRS/5 pairs, sampling over never sampling.
    si=$(ir env LD_PRELOAD="$LIB" MEMTRACE="$tmp/si.ctf" "$B/bench/alloc_bench" $((PAIRS / 5)) 2 0)
    ni=$(ir env LD_PRELOAD="$LIB" MEMTRACE="$tmp/ni.ctf" MEMTRACE_RATE=1e-18 "$B/bench/alloc_bench" $((PAIRS / 5)) 2 0)
    awk -v s="$si" -v n="$ni" 'BEGIN { printf "sampling: %.2f %% more instructions than never sampling (valgrind callgrind, all threads)\n", 100 * (s / n - 1) }'
else
    echo "interposition: valgrind missing: instructions per pair not counted"
fi

command -v perf >/dev/null 2>&1 || { echo "gcc: perf missing (apt-get install linux-perf): not measured"; exit 0; }
sh bench/gen_c.sh 1000 >"$tmp/big.c"
M=$PWD/$B/memtrace
# The name cache is this script's own: the first compile names from the
# debug information (libc's compressed sections inflated when a libc frame
# was sampled) and keeps what it read; the second names from the cache.
XDG_CACHE_HOME=$tmp/cache; export XDG_CACHE_HOME; unset MEMTRACE_NAME_CACHE
for run in "first run" "later run, names from the cache"; do
    rm -f "$tmp"/g.ctf*
    (cd "$tmp" && perf record -q -F 1999 -o "$tmp/perf.data" -- "$M" run -o "$tmp/g.ctf" -- \
        gcc -O1 -c "$tmp/big.c" -o "$tmp/b.o" >/dev/null 2>&1)
    perf report -i "$tmp/perf.data" --no-children --sort comm,dso,sym --stdio 2>/dev/null | awk -v run="$run" '
        /^ +[0-9.]+%/ { p = $1; sub("%", "", p)
            if ($2 == "memtrace") { mt += p; next }
            if ($3 ~ /libunwind/) { unw += p; next }
            if ($3 ~ /libmemtrace/) {
                if ($5 ~ /^(malloc|free|calloc|realloc|reallocarray|posix_memalign|aligned_alloc|memalign|_Znwm|_Znam|_Zdl|_Zda|free_sized)/) fast += p
                else rest += p } }
        END { printf "gcc under memtrace run (%s): %.2f%% of CPU samples in all (goal <= 1%%): interposition %.2f%%, sampling and tracing %.2f%% (libunwind %.2f%%), memtrace process %.2f%%\n",
                     run, fast + rest + unw + mt, fast, rest + unw, unw, mt }'
done
