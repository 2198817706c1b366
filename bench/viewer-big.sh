#!/bin/sh
# viewer-big.sh - `memtrace view` on a big trace (figures in
# docs/PERFORMANCE.md, "Web viewer on big traces"): a trace of EVENTS events
# (default 50,000,000, about 444 MB; bench/viewer-gen.c), served folded (the
# default above 128 MB) and, once, as a whole model (--fold-above 1T, the
# previous behaviour). Interleaved rounds, medians:
#   ready: from starting the command until the first page's answers (info,
#          curve, hotspots, allocation-site tree) are in, as bench/viewer.sh;
#   peak:  the viewer's peak resident size (VmHWM) at that point;
#   cpu:   the viewer's CPU time (user + system) at that point: its sums
#          run on a second thread (mt_sink.on_done_apart, lib/analyze/sinkthread.c)
#          beside the reading one;
#   md5sum of the trace in the same rounds, as the yardstick, and
#   `memtrace top` (the same folded pass, without the viewer's summaries).
# Folded, three ways: with no allocation index (--no-index), writing the
# index (none beside the trace when it starts: the first view of a trace)
# and reusing it (later views).
# Then, folded: the page's requests for a new filter, per filter: folded
# from the index, and (REREAD=1) with --no-index, the trace read again
# with the filter folded in.
# Usage: sh bench/viewer-big.sh [BUILD [EVENTS]]   (TRACE=file: use that
#        trace, through a link in a scratch directory: its index is written
#        there, not beside it)
#        RUNS=n (default 3), WHOLE=0 to skip the whole-model runs,
#        ONE=1 to add folded runs with the sums on the reading thread
#        (memtrace --route=one-thread, as before the second thread),
#        REREAD=0 to skip the filters read from the trace (minutes each on
#        a trace of 500M events)
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
EVENTS=${2:-50000000}
BIN=$B/memtrace
RUNS=${RUNS:-3}
WHOLE=${WHOLE:-1}
ONE=${ONE:-0}
REREAD=${REREAD:-1}
[ -x "$BIN" ] || { echo "build first: make BUILD=$B" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mt-viewer-big.XXXXXX")
vpid=""
trap '[ -n "$vpid" ] && kill $vpid 2>/dev/null; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP PIPE   # the EXIT trap then stops the viewer
make -s BUILD="$B" "$B/bench/viewer-gen"
trace=${TRACE:-}
if [ -n "$trace" ]; then
    ln -s "$(realpath "$trace")" "$tmp/big.ctf"
    trace=$tmp/big.ctf
else
    trace=$tmp/big.ctf
    "$B/bench/viewer-gen" "$trace" "$EVENTS" >/dev/null
fi
echo "trace: $(wc -c < "$trace") bytes"

now() { date +%s.%N; }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
n=0
ROUTE=
start() { # start ARGS... -> $url, $vpid
    n=$((n + 1)); : > "$tmp/out$n"   # exists before the viewer starts: sed below never fails
    "$BIN" $ROUTE view --port 0 -q "$@" "$trace" >"$tmp/out$n" 2>"$tmp/err" &
    vpid=$!; url=""
    while [ -z "$url" ]; do
        kill -0 $vpid 2>/dev/null || { cat "$tmp/err" >&2; exit 1; }
        url=$(sed -n 's/^Serving \(http[^ ]*\).*/\1/p' "$tmp/out$n" 2>/dev/null); [ -n "$url" ] || sleep 0.01
    done
}
stop() { kill $vpid; wait $vpid 2>/dev/null || true; vpid=""; }
page_requests() { # FILTER (URL-encoded): what the page asks for a filter
    curl -s -o /dev/null "${url}api/filter?filter=$1"
    curl -s -o /dev/null "${url}api/curve?n=1200&filter=$1" & a=$!
    curl -s -o /dev/null "${url}api/hotspots?filter=$1" & b=$!
    curl -s -o /dev/null "${url}api/tree?dir=sites&min=0.001&filter=$1" & c=$!
    wait $a $b $c
}
hwm() { awk '$1 == "VmHWM:" { print int($2 / 1024) }' "/proc/$vpid/status"; }
cpu() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f\n", ($14 + $15) / hz }' "/proc/$vpid/stat"; }
ready() { # ARGS... -> appends "seconds MB cpu-seconds" to $tmp/$label
    t0=$(now); start "$@"; curl -s -o /dev/null "${url}api/info"; page_requests ""; t1=$(now)
    echo "$(echo "$t1 - $t0" | bc) $(hwm) $(cpu)" >> "$tmp/$label"; stop
}

: > "$tmp/folded"; : > "$tmp/whole"; : > "$tmp/onethread"; : > "$tmp/md5"; : > "$tmp/top"
: > "$tmp/noindex"; : > "$tmp/reuse"
i=0
while [ $i -lt "$RUNS" ]; do
    t0=$(now); md5sum "$trace" >/dev/null; t1=$(now); echo "$t1 - $t0" | bc >> "$tmp/md5"
    t0=$(now); "$BIN" top "$trace" >/dev/null; t1=$(now); echo "$t1 - $t0" | bc >> "$tmp/top"
    label=noindex; ready --no-index
    rm -f "$trace.mtidx"; label=folded; ready        # writes the index
    label=reuse; ready
    if [ "$ONE" = 1 ]; then
        ROUTE=--route=one-thread; label=onethread; ready; ROUTE=
    fi
    if [ "$WHOLE" = 1 ]; then label=whole; ready --fold-above 1T; fi
    i=$((i + 1))
done
m=$(median < "$tmp/md5")
tp=$(median < "$tmp/top")
echo "md5sum ${m}s, memtrace top ${tp}s (x$(echo "scale=2; $tp / $m" | bc))"
for label in noindex folded reuse onethread whole; do
    [ -s "$tmp/$label" ] || continue
    r=$(cut -d' ' -f1 "$tmp/$label" | median); p=$(cut -d' ' -f2 "$tmp/$label" | median)
    c=$(cut -d' ' -f3 "$tmp/$label" | median)
    case $label in
        noindex) name="folded, --no-index" ;; folded) name="folded, writing the index" ;;
        reuse) name="folded, index reused" ;; *) name=$label ;;
    esac
    echo "$name: ready ${r}s (x$(echo "scale=2; $r / $m" | bc) md5sum ${m}s), cpu ${c}s, peak RSS ${p} MB"
done

echo "index: $(($(wc -c < "$trace.mtidx") >> 20)) MB, $(du -m "$trace.mtidx" | cut -f1) MB on disk"
filters() { # LABEL ARGS...: the page's requests for new filters
    label=$1; shift
    echo "== folded, $label: a new filter, median of $RUNS"
    start "$@"
    curl -s -o /dev/null "${url}api/info"; page_requests ""
    for f in "size:%3E%3D4k" "alloc:10s-20s" "inside:fn0042" "lifetime:%3C10ms"; do
        : > "$tmp/f"
        i=0
        while [ $i -lt "$RUNS" ]; do
            t0=$(now); page_requests "$f+lifetime:%3E%3D$i""us"; t1=$(now)   # a new filter each time
            echo "$t1 - $t0" | bc >> "$tmp/f"; i=$((i + 1))
        done
        echo "$f: $(median < "$tmp/f")s, peak RSS so far $(hwm) MB, cpu so far $(cpu)s"
    done
    stop
}
filters "from the index"
[ "$REREAD" = 1 ] && filters "the trace read again (--no-index)" --no-index
exit 0
