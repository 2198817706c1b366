#!/bin/sh
# hostile.sh - what hostile traces cost the CLI: the traces of
# tests/analyze/hostile.sh (made by tests/tools/gen_hostile), each command
# REPS times in turn, medians of wall and user time, peak RSS and the size
# of what it writes. docs/PERFORMANCE.md ("Hostile input") records them.
#
#   sh bench/hostile.sh        # BUILD=build REPS=3
#
# Traces (sizes printed): colliding location codes for the reader's table
# (80 000) and for the model's (100 000); a deep-stack bomb (20 000 stacks of
# 300 000 frames); sliding deep stacks (6 000 stacks, each one frame longer,
# 20 000 functions); a call tree past MT_TREE_MAX_NODES (2 500 stacks of
# 1 000 frames that differ near the outermost end).
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
REPS=${REPS:-3}
make -s --no-print-directory BUILD="$BUILD" cli "$BUILD/tests/tools/gen_hostile" >/dev/null
GEN=$BUILD/tests/tools/gen_hostile
M=$BUILD/memtrace
tmp=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$GEN" collide "$tmp/collide.ctf" 80000
"$GEN" collide-model "$tmp/collide-model.ctf" 100000
"$GEN" bomb "$tmp/bomb.ctf" 20000 300000
"$GEN" slide "$tmp/slide.ctf" 6000 20000
"$GEN" wide "$tmp/wide.ctf" 2500 1000
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
printf '%-14s %-9s %9s %7s %7s %8s %12s\n' trace command size_B wall_s user_s rss_MB output_B
run() { # run TRACE COMMAND [ARGS...]
    trace=$1; shift
    rm -f "$tmp/times"
    i=0
    while [ $i -lt "$REPS" ]; do
        /usr/bin/time -f "%e %U %M" -o "$tmp/one" "$M" "$@" "$tmp/$trace.ctf" >"$tmp/out" 2>/dev/null || true
        cat "$tmp/one" >>"$tmp/times"
        i=$((i + 1))
    done
    out=$(wc -c <"$tmp/out")
    [ "$1" = pprof ] && out=$(wc -c <"$tmp/p.pb.gz")
    printf '%-14s %-9s %9s %7s %7s %8s %12s\n' "$trace" "$1" "$(wc -c <"$tmp/$trace.ctf")" \
        "$(cut -d' ' -f1 "$tmp/times" | median)" "$(cut -d' ' -f2 "$tmp/times" | median)" \
        "$(cut -d' ' -f3 "$tmp/times" | median | awk '{ printf "%.0f", $1 / 1024 }')" "$out"
}
run collide info
run collide top
run collide-model top
for t in bomb slide wide; do
    run $t top
    run $t folded
    run $t pprof -o "$tmp/p.pb.gz"
done
