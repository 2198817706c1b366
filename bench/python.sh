#!/bin/sh
# python.sh - the Python package on a large trace (bench/gen_trace.c, 5
# million events, about 2.5 million sampled allocations): the time to open
# the trace, to get allocations() as a DataFrame, and top(), against
# `memtrace stats` of the same file (the C library reading it once) in the
# same rounds; medians of REPS interleaved rounds.
#
#   sh bench/python.sh                # BUILD=build REPS=5 EVENTS=5000000
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
REPS=${REPS:-5}
EVENTS=${EVENTS:-5000000}
bench_need "$BUILD" "cli libs bench-tools" "$BUILD/memtrace" "$BUILD/libmemtrace-analyze.so" "$BUILD/bench/gen_trace"
/usr/bin/python3 -c "import pandas" 2>/dev/null || { echo "python3-pandas needed (scripts/install-deps.sh test)"; exit 1; }
TRACE=$BUILD/bench/trace-$EVENTS.ctf
[ -f "$TRACE" ] || "$BUILD/bench/gen_trace" -n "$EVENTS" "$TRACE"
bench_scratch memtrace-python
lib=$(cd "$BUILD" && pwd)
cat >"$tmp/py.py" <<'PY'
import sys, time
t0 = time.perf_counter()
import pandas, memtrace
t1 = time.perf_counter()
t = memtrace.open(sys.argv[1])
t2 = time.perf_counter()
df = t.allocations()
t3 = time.perf_counter()
top = t.top()
t4 = time.perf_counter()
print("%.3f %.3f %.3f %.3f %d" % (t1 - t0, t2 - t1, t3 - t2, t4 - t3, len(df)))
PY
for r in $(seq "$REPS"); do
    timed stats "$BUILD/memtrace" stats "$TRACE"
    MEMTRACE_LIBDIR=$lib PYTHONPATH=python $RUN /usr/bin/python3 "$tmp/py.py" "$TRACE" >>"$tmp/py"
done
rows=$(tail -n 1 "$tmp/py" | cut -d' ' -f5)
printf 'trace: %s events, %s sampled allocations\n' "$EVENTS" "$rows"
printf '%-28s %8s\n' "step (median of $REPS)" "seconds"
printf '%-28s %8.2f\n' "memtrace stats (baseline)" "$(col_median stats 1)"
printf '%-28s %8.2f\n' "import pandas, memtrace" "$(cut -d' ' -f1 "$tmp/py" | median)"
printf '%-28s %8.2f\n' "memtrace.open" "$(cut -d' ' -f2 "$tmp/py" | median)"
printf '%-28s %8.2f\n' "allocations()" "$(cut -d' ' -f3 "$tmp/py" | median)"
printf '%-28s %8.2f\n' "top()" "$(cut -d' ' -f4 "$tmp/py" | median)"
