#!/bin/sh
# sample_cost.sh - a sample's cost to the allocating thread as a
# distribution (bench/sample_cost.c, as C and as C++), with stacks of 20-100
# frames at a small interval (MEMTRACE_RATE 0.0005: one sample per 2 KiB;
# the stack one function recursing, and for "C distinct" a chain of
# different functions, where no two neighbouring frames share a return address),
# for each unwinder: fp (frame-pointer walk), dwarf (libunwind, the
# default) and auto (fp when the chain reaches the thread's start, else
# dwarf). The unwinder's share is dwarf's median less fp's, over dwarf's
# (fp's walk itself costs about 1 ns a frame). Interleaved rounds; prints a
# markdown table of the per-round medians' medians.
#
#   sh bench/sample_cost.sh [BUILD]     ROUNDS (5), CALLS (100000), RATE (0.0005)
set -u
cd "$(dirname "$0")/.."
B=${1:-build}
ROUNDS=${ROUNDS:-5} CALLS=${CALLS:-100000} RATE=${RATE:-0.0005}
LIB=$PWD/$B/libmemtrace.so
[ -e "$LIB" ] || { echo "sample_cost.sh: no $LIB (run make first)"; exit 2; }
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
${CC:-cc} -O2 -g -fno-omit-frame-pointer -o "$t/c" bench/sample_cost.c || exit 2
${CXX:-c++} -x c++ -O2 -g -fno-omit-frame-pointer -o "$t/cxx" bench/sample_cost.c || exit 2
for r in $(seq "$ROUNDS"); do
    for lang in c cd cxx; do
        for m in fp dwarf auto; do
            prog=$lang extra=
            [ $lang = cd ] && prog=c extra=distinct
            line=$(MEMTRACE_UNWIND=$m LD_PRELOAD="$LIB" MEMTRACE="$t/s.ctf" MEMTRACE_RATE=$RATE \
                   "$t/$prog" "$CALLS" 20 100 $extra) || exit 1
            echo "$lang $m $line"
        done
    done
done >"$t/all"
echo "| program | unwinder | samples/run | median ns | p99 ns | max ns |"
echo "| --- | --- | ---: | ---: | ---: | ---: |"
for lang in c cd cxx; do
    for m in fp dwarf auto; do
        grep "^$lang $m " "$t/all" | tr '=' ' ' | awk -v l=$lang -v m=$m '
            { s[NR] = $4; md[NR] = $8; p[NR] = $10; x[NR] = $12; n = NR }
            function med(a,   i, j, k, v) { for (i = 1; i <= n; i++) v[i] = a[i]
                for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] + 0 < v[i] + 0) { k = v[i]; v[i] = v[j]; v[j] = k }
                return v[int((n + 1) / 2)] }
            END { printf "| %s | %s | %s | %s | %s | %s |\n", (l == "c" ? "C" : l == "cd" ? "C distinct" : "C++"), m, med(s), med(md), med(p), med(x) }'
    done
done | tee "$t/table"
awk '{ split($0, f, "|"); k = f[2] f[3]; gsub(/ /, "", k); v[k] = f[5] + 0 }
     END {
           printf "unwinder share of a sample (dwarf - fp) / dwarf: C %.0f%%, C distinct %.0f%%, C++ %.0f%%\n",
             100 * (v["Cdwarf"] - v["Cfp"]) / v["Cdwarf"], 100 * (v["Cdistinctdwarf"] - v["Cdistinctfp"]) / v["Cdistinctdwarf"],
             100 * (v["C++dwarf"] - v["C++fp"]) / v["C++dwarf"] }' "$t/table"
