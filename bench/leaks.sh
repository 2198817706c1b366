#!/bin/sh
# leaks.sh - cost of the leak scan at exit (MEMTRACE_LEAKS=1; docs/leaks.md)
# per GB of heap: bench/leaks_heap.c fills MB megabytes with 64-byte blocks
# chained in lists (one in ten dropped) and exits; the recorder's verdict
# file says how long the scan took (threads stopped, heap walked, marked,
# verdicts written), how much memory it mapped and how many bytes of roots
# and heap it read. Prints a markdown table.
#
#   sh bench/leaks.sh [BUILD]     env: SIZES (MB, "256 1024"), BLOCK (64),
#                                 RATE (sampling rate, 1.9073486328125e-06)
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
B=${1:-build}
SIZES=${SIZES:-256 1024}
BLOCK=${BLOCK:-64}
RATE=${RATE:-1.9073486328125e-06}
BIN=$B/bench/leaks_heap
LIB=$PWD/$B/libmemtrace.so
bench_need "$B" "libs bench-tools" "$BIN" "$LIB"
bench_scratch memtrace-bench; out=$tmp

echo "# leak scan at exit: ${BLOCK}-byte blocks, rate $RATE ($(date -u +%Y-%m-%d), $(nproc) CPUs)"
echo "(load average: $(cut -d' ' -f1-3 /proc/loadavg); CPU time is the figure that does not depend on it)"
echo "| heap (MiB) | mode | scan wall (s) | scan CPU (s) | CPU s per GiB | scan memory (MiB) | per GiB (MiB) | roots read (MiB) | heap read (MiB) | sampled lost / reachable |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for mb in $SIZES; do
    rm -f "$out"/h.ctf*
    $RUN env LD_PRELOAD="$LIB" MEMTRACE="$out/h.ctf" MEMTRACE_RATE="$RATE" MEMTRACE_LEAKS=1 \
        "$BIN" "$mb" "$BLOCK" >/dev/null || { echo "| $mb | failed |"; continue; }
    # scan TIME_US MODE LOST REACHABLE UNKNOWN DURATION_US MEMORY ROOT_BYTES HEAP_BYTES CPU_US
    sed -n 2p "$out/h.ctf.leaks" | awk -v mb="$mb" '{
        s = $7 / 1e6; c = $11 / 1e6; gib = mb / 1024
        printf "| %d | %s | %.3f | %.3f | %.3f | %.1f | %.1f | %.1f | %.1f | %d / %d |\n",
            mb, $3, s, c, c / gib, $8 / 1048576, $8 / 1048576 / gib, $9 / 1048576, $10 / 1048576, $4, $5 }'
done
