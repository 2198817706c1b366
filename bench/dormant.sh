#!/bin/sh
# dormant.sh - what a dormant recorder costs a real program: the recorder
# loaded but paused (MEMTRACE_PAUSED=1: interposed, not sampling, waiting
# for 'memtrace ctl') against the plain program and against recording at
# the default 512 KiB interval. Workloads: a python3 script that builds and
# drops dicts, lists and strings (allocation-heavy), and gcc -O2 compiling
# the analysis library of this repository (eight files: the driver, a cc1
# and an as per file).
# Interleaved rounds; prints median wall and CPU (user+sys) seconds and the
# median per-round ratios to plain.
#
#   sh bench/dormant.sh [BUILD]        (default build/)
#   env: ROUNDS (7), WORKLOADS ("python gcc"), VARIANTS ("plain dormant tracing";
#        also "never": interposed and started but never sampling, rate 1e-18)
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
B=${1:-build}
ROUNDS=${ROUNDS:-7}
WORKLOADS=${WORKLOADS:-"python gcc"}
VARIANTS=${VARIANTS:-"plain dormant tracing"}
LIB=$PWD/$B/libmemtrace.so
bench_need "$B" libs "$LIB"
bench_scratch memtrace-dormant; out=$tmp
# The interpreter itself, not a wrapper script (pyenv shims are shell).
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
cat > "$out/work.py" <<'PYEOF'
import random
random.seed(1)
keep = []
for round in range(5):
    d = {}
    for i in range(120000):
        d["k%d-%d" % (round, i)] = [i, str(i) * 3, (i, i + 1)]
    keep.append({k: v for k, v in d.items() if hash(k) % 7 == 0})
    if len(keep) > 4:
        keep.pop(0)
print(sum(len(k) for k in keep))
PYEOF

# run WORKLOAD VARIANT: "wall cpu" seconds.
run() {
    w=$1 v=$2
    case $v in
        plain) set -- env ;;
        dormant) set -- env LD_PRELOAD="$LIB" MEMTRACE="$out/d.ctf" MEMTRACE_PAUSED=1 ;;
        tracing) set -- env LD_PRELOAD="$LIB" MEMTRACE="$out/t.ctf" ;;
        never) set -- env LD_PRELOAD="$LIB" MEMTRACE="$out/t.ctf" MEMTRACE_RATE=1e-18 ;;
    esac
    case $w in
        python) set -- "$@" "$PY" "$out/work.py" ;;
        gcc) set -- "$@" gcc -O2 -I"$PWD/include" -D_GNU_SOURCE -c "$PWD"/lib/analyze/*.c ;;
    esac
    rm -f "$out"/d.ctf* "$out"/t.ctf*
    (cd "$out" && /usr/bin/time -f "%e %U %S" -o "$out/time" $RUN "$@" > /dev/null 2>"$out/err") ||
        { echo "NaN NaN"; return; }
    awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' "$out/time"
}

echo "# dormant recorder: $ROUNDS interleaved rounds ($(date -u +%Y-%m-%d), $(nproc) CPUs)"
echo
echo "| workload | variant | wall s | CPU s | wall / plain | CPU / plain |"
echo "| --- | --- | --- | --- | --- | --- |"
for w in $WORKLOADS; do
    [ "$w" = python ] && [ -z "$PY" ] && continue
    : > "$out/t.$w"
    for r in $(seq "$ROUNDS"); do
        for v in $VARIANTS; do
            echo "$r $v $(run "$w" "$v")" >> "$out/t.$w"
        done
    done
    for v in $VARIANTS; do
        wall=$(column 3 $v "$out/t.$w" | median)
        cpu=$(column 4 $v "$out/t.$w" | median)
        rw=$(ratios 3 $v plain "$out/t.$w" | median)
        rc=$(ratios 4 $v plain "$out/t.$w" | median)
        printf "| %s | %s | %.3f | %.3f | %.3f | %.3f |\n" "$w" "$v" "$wall" "$cpu" "$rw" "$rc"
    done
done
