#!/bin/sh
# stream.sh - stats, lifetimes and plot in bounded memory: on a big
# program-like trace against md5sum reading the same file, and against the
# same commands on the whole model (memtrace --route=whole), in one run.
# Those commands read folded models and feed each allocation to what they
# need as it is read (programs/stream_report.c), so their memory follows
# the blocks live at once and the distinct stacks: on one file, on several
# aggregated (stats2: the trace twice, merged by a thread as it is read)
# and on a pipe (stats_pipe: cat T | memtrace stats /dev/stdin).
#
# The trace: bench/viewer-gen.c with EVENTS events (default 50 million,
# 444 MB; generated once into $BUILD/bench), or TRACE=FILE. REPS
# interleaved rounds; medians of wall and user+sys time, the ratio to
# md5sum (goal: at most 4) and the peak RSS (goal: <= 300 MB). WHOLE=1
# adds stats, lifetimes and plot on the whole model (memtrace --route=whole:
# 1.3 to 2.4 GB here). As root the commands run at real-time priority
# (chrt -f 10: steadier on a shared machine; NOCHRT=1 turns it off).
#
#   sh bench/stream.sh          # BUILD=build REPS=3 EVENTS=50000000 WHOLE= TRACE=
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
REPS=${REPS:-3}
EVENTS=${EVENTS:-50000000}
make -s --no-print-directory BUILD="$BUILD" cli bench-tools >/dev/null
tmp=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
TRACE=${TRACE:-$BUILD/bench/paths-$EVENTS.ctf}
[ -f "$TRACE" ] || "$BUILD/bench/viewer-gen" "$TRACE" "$EVENTS" > /dev/null
M=$BUILD/memtrace
WHOLE=${WHOLE:-}
RT=
[ "$(id -u)" = 0 ] && [ -z "${NOCHRT:-}" ] && command -v chrt > /dev/null && RT="chrt -f 10"
t() { # t NAME CMD...: appends "wall user+sys maxrss_kb" to $tmp/NAME
    name=$1; shift
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/one" $RT "$@" > /dev/null
    awk '{ print $1, $2 + $3, $4 }' "$tmp/one" >> "$tmp/$name"
}
w() { # w NAME CMD...: the same on the whole model
    name=$1; shift
    cmd=$1; shift
    t "$name" "$cmd" --route=whole "$@"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
m() { cut -d' ' -f"$2" "$tmp/$1" | median; }
cat "$TRACE" > /dev/null   # warm the page cache
whats="md5sum stats stats_size stats_life lifetimes plot plot_sizes plot_life stats2 stats_pipe"
[ -n "$WHOLE" ] && whats="$whats whole_stats whole_lifetimes whole_plot"
i=0
while [ $i -lt "$REPS" ]; do
    t md5sum md5sum "$TRACE"
    t stats "$M" stats "$TRACE"
    t stats_size "$M" stats -f 'size:>=4k' "$TRACE"
    t stats_life "$M" stats -f 'lifetime:>1s' "$TRACE"
    t lifetimes "$M" lifetimes "$TRACE"
    t plot "$M" plot -o "$tmp/m.svg" "$TRACE"
    t plot_sizes "$M" plot -k sizes -o "$tmp/s.svg" "$TRACE"
    t plot_life "$M" plot -k lifetimes -o "$tmp/l.svg" "$TRACE"
    t stats2 "$M" stats "$TRACE" "$TRACE"
    t stats_pipe sh -c 'cat "$1" | "$2" stats /dev/stdin' sh "$TRACE" "$M"
    if [ -n "$WHOLE" ]; then
        w whole_stats "$M" stats "$TRACE"
        w whole_lifetimes "$M" lifetimes "$TRACE"
        w whole_plot "$M" plot -o "$tmp/m.svg" "$TRACE"
    fi
    i=$((i + 1))
done
echo "trace: $TRACE ($(wc -c < "$TRACE") bytes); $REPS interleaved rounds, medians"
printf '%-16s %8s %10s %8s %10s\n' what wall_s cpu_s x_md5 maxrss_MB
for x in $whats; do
    printf '%-16s %8s %10s %8s %10s\n' "$x" "$(m $x 1)" "$(m $x 2)" \
        "$(awk -v a="$(m $x 1)" -v b="$(m md5sum 1)" 'BEGIN { printf "%.1f", a / b }')" \
        "$(m $x 3 | awk '{ printf "%.0f", $1 / 1024 }')"
done
