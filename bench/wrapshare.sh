#!/bin/sh
# wrapshare.sh - the share of gcc's cc1 CPU samples spent in the recorder's
# malloc-family wrappers, for two or more builds of libmemtrace.so compared
# in interleaved rounds (one run of each library per round, the same order
# every round), so that a change to the wrappers' fast paths is judged
# against the spread between runs on a machine whose load changes.
#
#   sh bench/wrapshare.sh [LIB.so LIB.so...]   ROUNDS (8), FREQ (19999),
#                                               LINES (gen_c.sh's N, 700)
#
# Without libraries (make bench) the build's own against itself: the
# spread between runs alone, what a difference must exceed.
#
# FLOOR=1 adds, in the same rounds, the least an interposer can be
# (bench/forward_shim.c: each wrapper a load, a test and a jump on to
# the next malloc, recording nothing), preloaded into gcc without
# `memtrace run`: its wrappers' share is what the extra hop on every call
# costs any malloc interposer, the floor under the recorder's.
#
# Each run: perf record -F FREQ of `memtrace run -- gcc -O1 -c` on a
# generated C file, with MEMTRACE_LIB naming the library; the figure is the
# samples of the process cc1 whose symbol is a wrapper (malloc, free,
# calloc, realloc, operator new and delete, the aligned and sized variants,
# malloc_usable_size) in libmemtrace.so, over all of cc1's samples. Prints
# a row per run, then per library the median, range and pooled share.
# Copy the libraries to be compared to directories of their own first (a
# build directory changes under the next make); perf only tells them apart
# by the order given. Needs perf (Debian: linux-perf).
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
B=${BUILD:-build}
[ $# -ge 1 ] || set -- "$B/libmemtrace.so" "$B/libmemtrace.so"
[ $# -ge 2 ] || [ "${FLOOR:-0}" = 1 ] || { echo "usage: sh bench/wrapshare.sh [LIB.so LIB.so...]" >&2; exit 2; }
bench_need "$B" "libs cli" "$B/memtrace" "$B/libmemtrace.so"
libs=
for l in "$@"; do
    [ -r "$l" ] || { echo "wrapshare: $l: no such library" >&2; exit 2; }
    libs="$libs $(cd "$(dirname "$l")" && pwd)/$(basename "$l")"   # absolute: the runs cd
done
command -v perf >/dev/null 2>&1 || { echo "wrapshare: perf missing (apt-get install linux-perf)" >&2; exit 2; }
ROUNDS=${ROUNDS:-8} FREQ=${FREQ:-19999} LINES=${LINES:-700}
M=$PWD/$B/memtrace
bench_scratch memtrace-wrapshare
sh bench/gen_c.sh "$LINES" >"$tmp/big.c"
WRAPPERS='^(malloc|free|calloc|realloc|reallocarray|memalign|posix_memalign|aligned_alloc|valloc|pvalloc|malloc_usable_size|free_sized|free_aligned_sized|_Znwm|_Znam|_Zdl|_Zda)'
shim=
if [ "${FLOOR:-0}" = 1 ]; then
    shim=$PWD/$B/bench/forward_shim.so
    bench_need "$B" bench-tools "$shim"
    libs="$libs $shim"
    set -- "$@" "the forwarding shim (FLOOR=1)"
fi
for r in $(seq "$ROUNDS"); do
    i=0
    for l in $libs; do
        i=$((i + 1))
        rm -f "$tmp"/g.ctf*
        if [ "$l" = "$shim" ]; then
            (cd "$tmp" && $RUN perf record -q -F "$FREQ" -o "$tmp/perf.data" -- \
                env LD_PRELOAD="$shim" gcc -O1 -c "$tmp/big.c" -o "$tmp/b.o" >/dev/null 2>&1)
            dso=forward_shim
        else
            (cd "$tmp" && MEMTRACE_LIB=$l $RUN perf record -q -F "$FREQ" -o "$tmp/perf.data" -- \
                "$M" run -o "$tmp/g.ctf" -- gcc -O1 -c "$tmp/big.c" -o "$tmp/b.o" >/dev/null 2>&1)
            dso=libmemtrace
        fi
        perf script -i "$tmp/perf.data" -F comm,ip,sym,dso 2>/dev/null |
            awk -v w="$WRAPPERS" -v lib="$i" -v r="$r" -v dso="$dso" '
                $1 == "cc1" { n++; if ($NF ~ dso && $3 ~ w) k++ }
                END { if (n) printf "%d %d %d %d %.4f\n", r, lib, n, k, 100 * k / n
                      else print "wrapshare: no samples of cc1 in a run (perf record failed?)" > "/dev/stderr" }'
    done
done | tee "$tmp/rows" | awk '{ printf "round %d  library %d  cc1 samples %d  in the wrappers %d  share %.3f %%\n", $1, $2, $3, $4, $5 }'
i=0
for l in "$@"; do
    i=$((i + 1))
    m=$(column 5 "$i" "$tmp/rows" | median)
    awk -v i="$i" -v l="$l" -v m="$m" '$2 == i { n += $3; k += $4; s = $5
            if (lo == "" || s < lo) lo = s; if (s > hi) hi = s }
        END { if (n) printf "library %d (%s): median %.3f %% (range %.3f-%.3f), pooled %.3f %% (%d of %d samples)\n",
                     i, l, m, lo, hi, 100 * k / n, k, n }' "$tmp/rows"
done
