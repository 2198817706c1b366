#!/bin/sh
# python-big.sh - the Python package on the 50M-event trace of
# bench/speed.sh (bench/viewer-gen.c, 444 MB): memtrace.open, top() and
# curve() read folded (open's default above 128 MiB) and, with WHOLE=1, on
# the whole model (fold_above=None, as before); peak resident size of each
# python3 and its steps' seconds, beside md5sum and `memtrace top` in the
# same rounds; medians of REPS interleaved rounds.
#
#   sh bench/python-big.sh            # BUILD=build REPS=3 EVENTS=50000000 WHOLE=1
#   TRACE=t.ctf sh bench/python-big.sh
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
REPS=${REPS:-3}
EVENTS=${EVENTS:-50000000}
WHOLE=${WHOLE:-1}
bench_need "$BUILD" "cli libs bench-tools" "$BUILD/memtrace" "$BUILD/libmemtrace-analyze.so" "$BUILD/bench/viewer-gen"
/usr/bin/python3 -c "import pandas" 2>/dev/null || { echo "python3-pandas needed (scripts/install-deps.sh test)"; exit 1; }
TRACE=${TRACE:-$BUILD/bench/paths-$EVENTS.ctf}
[ -f "$TRACE" ] || "$BUILD/bench/viewer-gen" "$TRACE" "$EVENTS" > /dev/null
bench_scratch memtrace-python-big
lib=$(cd "$BUILD" && pwd)
cat >"$tmp/py.py" <<'PY'
import resource, sys, time
import memtrace
fold = None if sys.argv[2] == "whole" else memtrace.FOLD_ABOVE
t0 = time.perf_counter()
t = memtrace.open(sys.argv[1], fold_above=fold)
t1 = time.perf_counter()
top = t.top()
t2 = time.perf_counter()
c = t.curve()
t3 = time.perf_counter()
print("%.3f %.3f %.3f %d %d" % (t1 - t0, t2 - t1, t3 - t2,
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, int(t.folded)))
PY
cat "$TRACE" > /dev/null   # warm the page cache
ways="folded"
[ "$WHOLE" = 1 ] && ways="folded whole"
for r in $(seq "$REPS"); do
    timed md5sum md5sum "$TRACE"
    timed top "$BUILD/memtrace" top "$TRACE"
    for w in $ways; do
        MEMTRACE_LIBDIR=$lib PYTHONPATH=python $RUN /usr/bin/python3 "$tmp/py.py" "$TRACE" $w >>"$tmp/$w"
    done
done

printf 'trace: %s bytes; medians of %s rounds\n' "$(wc -c < "$TRACE")" "$REPS"
printf 'md5sum %ss; memtrace top %ss, %s MB\n' "$(col_median md5sum 1)" "$(col_median top 1)" \
    "$(($(col_median top 3) / 1024))"
for w in $ways; do
    printf 'python %-6s open %ss, top() %ss, curve() %ss, peak RSS %s MB\n' "$w" "$(col_median "$w" 1)" \
        "$(col_median "$w" 2)" "$(col_median "$w" 3)" "$(($(col_median "$w" 4) / 1024))"
done
