#!/bin/sh
# cli_start.sh - what the memtrace command itself costs a profiled run: its
# start (`memtrace --version`) and a run of a program that does nothing
# (`memtrace run -o X -- true`, the child's start and the recorder's
# included), as task-clock medians of perf stat's repeated runs, for one or
# more builds of the memtrace binary compared in the same run.
#
#   sh bench/cli_start.sh [MEMTRACE...]   REPS (20)
#
# Without arguments, the build's own (build/memtrace). Prints per binary
# the libraries it maps at start (ldd) and the two medians in ms.
# Needs perf (Debian: linux-perf).
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_scratch memtrace-cli-start
REPS=${REPS:-20}
[ $# -gt 0 ] || { bench_need build all build/memtrace; set -- build/memtrace; }
command -v perf >/dev/null 2>&1 || { echo "cli_start: perf missing (apt-get install linux-perf)"; exit 2; }
# task-clock in ms of each of REPS runs of CMD...
clock_ms() {
    i=0
    while [ $i -lt "$REPS" ]; do
        $RUN perf stat -x, -e task-clock -o "$tmp/stat" -- "$@" >/dev/null 2>&1 || true
        sed -n 's/^\([0-9.]*\),msec,task-clock.*/\1/p' "$tmp/stat"
        i=$((i + 1))
    done
}
for m in "$@"; do
    libs=$(ldd "$m" | grep -c '=>' || true)
    v=$(clock_ms "$m" --version | median)
    r=$(clock_ms "$m" run -o "$tmp/t.ctf" -- true | median)
    printf '%s: %s libraries at start; --version %.2f ms, run -- true %.2f ms (task-clock medians of %s)\n' \
        "$m" "$libs" "$v" "$r" "$REPS"
done
