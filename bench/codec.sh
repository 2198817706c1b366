#!/bin/sh
# codec.sh - speed of the trace codec on a large generated trace, against
# md5sum reading the same file, measured in one run: REPS rounds, each
# running every command once in turn (interleaved), and the median of each.
#
#   sh bench/codec.sh                 # BUILD=build REPS=7 EVENTS=5000000
#   RT=1 sh bench/codec.sh            # every command at real-time priority
#                                     # (chrt -f, needs root): on a machine
#                                     # shared with other jobs, the closest
#                                     # thing to an idle one
#
# Commands timed (warm page cache, output to a scratch file or /dev/null):
#   md5sum       baseline: read and hash the file
#   recode       memtrace recode TRACE OUT: full decode + re-encode (the target:
#                at most 2.5x md5sum)
#   decode       bench/decode: every event with its backtrace, nothing else
#   decode -s    the same with skip_backtraces
#   info         memtrace info (skips backtraces, counts events)
# The re-encoded file must equal the input byte for byte (checked).
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
REPS=${REPS:-7}
EVENTS=${EVENTS:-5000000}
make -s --no-print-directory BUILD="$BUILD" cli bench-tools >/dev/null
TRACE=$BUILD/bench/trace-$EVENTS.ctf
[ -f "$TRACE" ] || "$BUILD/bench/gen_trace" -n "$EVENTS" "$TRACE"
bench_scratch memtrace-bench

now_ns() { date +%s%N; }
# time_cmd NAME CMD...: appends the wall time in ms to $tmp/NAME
time_cmd() {
    name=$1; shift
    t0=$(now_ns)
    $RUN "$@" >/dev/null
    t1=$(now_ns)
    echo $(( (t1 - t0) / 1000000 )) >>"$tmp/$name"
}
ms() { median < "$tmp/$1" | awk '{ printf "%d\n", $1 }'; }

names="md5sum recode decode decode_s info"
"$BUILD/memtrace" recode "$TRACE" "$tmp/out.ctf"   # warm up, and check
cmp -s "$TRACE" "$tmp/out.ctf" || { echo "codec.sh: recode is not byte-identical" >&2; exit 1; }
for i in $(seq "$REPS"); do
    time_cmd md5sum md5sum "$TRACE"
    time_cmd recode "$BUILD/memtrace" recode "$TRACE" "$tmp/out.ctf"
    time_cmd decode "$BUILD/bench/decode" "$TRACE"
    time_cmd decode_s "$BUILD/bench/decode" -s "$TRACE"
    time_cmd info "$BUILD/memtrace" info "$TRACE"
done
size=$(stat -c %s "$TRACE")
events=$("$BUILD/bench/decode" -s "$TRACE" | awk '{print $1}')
base=$(ms md5sum)
[ "$base" -gt 0 ] || base=1
echo "trace: $TRACE, $size bytes, $events events; $REPS interleaved rounds, medians"
printf '%-10s %8s %8s %12s\n' command ms x_md5sum Mevents/s
for n in $names; do
    m=$(ms "$n")
    awk -v n="$n" -v m="$m" -v b="$base" -v e="$events" \
        'BEGIN{printf "%-10s %8d %8.2f %12.1f\n", n, m, m/b, (m>0? e/m/1000 : 0)}'
done
r=$(awk -v m="$(ms recode)" -v b="$base" 'BEGIN{printf "%.2f", m/b}')
echo "recode / md5sum = $r; target: at most 2.5"
echo "load average during the run: $(cut -d' ' -f1-3 /proc/loadavg)${RUN:+ (commands run with $RUN)}"
