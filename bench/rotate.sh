#!/bin/sh
# rotate.sh - what rotation (MEMTRACE_ROTATE_SIZE, MEMTRACE_KEEP) costs the
# profiled program: bench/alloc_bench.c (THREADS threads, PAIRS malloc/free
# pairs of 16..512 bytes) at a 64 KiB mean interval, writing one trace, and
# the same cut into 64 KiB pieces (the smallest bound: a new piece every
# few dozen milliseconds, the worst case) keeping 2, in interleaved rounds
# with plain glibc; prints median wall and CPU times of the benchmark's own
# threads and median per-round ratios, to plain glibc and to the unrotated
# recorder. Rotation runs in the writer thread, so the allocating threads
# should see no difference beyond noise.
#
# Then what one new piece costs the writer thread with many blocks live:
# tests/record/progs/rotator holding LIVE (200000) sampled blocks (rate 1)
# idle for 10 s, one trace against a new piece every second; the process's
# CPU time (user + sys) difference divided by the pieces written.
#
#   sh bench/rotate.sh [BUILD]       (default build/; builds what it needs)
#   env: PAIRS (20000000), THREADS (2), DEPTHS ("0 20"), ROUNDS (7),
#        LIVE (200000), LIVE_ROUNDS (3)
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
B=${1:-build}
PAIRS=${PAIRS:-20000000}
THREADS=${THREADS:-2}
DEPTHS=${DEPTHS:-"0 20"}
ROUNDS=${ROUNDS:-7}
BIN=$B/bench/alloc_bench
LIB=$PWD/$B/libmemtrace.so
bench_need "$B" "libs bench-tools" "$BIN" "$LIB"
bench_scratch memtrace-bench; out=$tmp
RATE=1.52587890625e-05   # 1/65536

# run VARIANT DEPTH: "wall cpu" of the benchmark's threads
run() {
    v=$1 d=$2
    rm -f "$out"/t.ctf*
    case $v in
        plain) set -- ;;
        one) set -- env LD_PRELOAD="$LIB" MEMTRACE="$out/t.ctf" MEMTRACE_RATE=$RATE ;;
        pieces) set -- env LD_PRELOAD="$LIB" MEMTRACE="$out/t.ctf" MEMTRACE_RATE=$RATE \
                    MEMTRACE_ROTATE_SIZE=64k MEMTRACE_KEEP=2 ;;
    esac
    $RUN "$@" "$BIN" "$PAIRS" "$THREADS" "$d" >"$out/last.txt" 2>&1 || { echo "NaN NaN"; return; }
    if [ "$v" = pieces ]; then
        ls "$out"/t.ctf.part* | grep -E 'part[0-9]+$' | sed 's/.*part0*//' | sort -n | tail -n 1 >>"$out/pieces.$d"
    fi
    bench_seconds "$out/last.txt"
}

# ratio COLUMN VARIANT BASE: median of per-round ratios at depth $d
ratio() { ratios "$1" "$2" "$3" "$out/times.$d" | median; }

echo "# alloc_bench $PAIRS pairs, $THREADS threads, 64 KiB interval, $ROUNDS interleaved rounds ($(date -u +%Y-%m-%d), $(nproc) CPUs)"
for d in $DEPTHS; do
    : >"$out/times.$d"
    : >"$out/pieces.$d"
    for r in $(seq "$ROUNDS"); do
        for v in plain one pieces; do
            echo "$r $v $(run "$v" "$d")" >>"$out/times.$d"
        done
    done
    echo
    echo "## depth $d ($(( d + 5 )) frames at malloc); pieces written per run: $(median < "$out/pieces.$d") (median)"
    echo
    echo "| variant | median time (s) | median CPU (s) | time ratio to plain | CPU ratio to plain | time ratio to one trace | CPU ratio to one trace |"
    echo "|---|---|---|---|---|---|---|"
    for v in plain one pieces; do
        t=$(column 3 $v "$out/times.$d" | median)
        c=$(column 4 $v "$out/times.$d" | median)
        echo "| $v | $t | $c | $(ratio 3 $v plain) | $(ratio 4 $v plain) | $(ratio 3 $v one) | $(ratio 4 $v one) |"
    done
done

LIVE=${LIVE:-200000}
LIVE_ROUNDS=${LIVE_ROUNDS:-3}
ROT=$B/tests/record/progs/rotator
bench_need "$B" record-tests "$ROT"
# cpu VARIANT: CPU seconds (user + sys) of a 10 s idle run holding LIVE blocks
cpu() {
    rm -f "$out"/l.ctf*
    case $1 in
        one) set -- ;;
        pieces) set -- MEMTRACE_ROTATE_TIME=1s MEMTRACE_KEEP=2 ;;
    esac
    /usr/bin/time -f "%U %S" -o "$out/time.txt" env LD_PRELOAD="$LIB" MEMTRACE="$out/l.ctf" \
        MEMTRACE_RATE=1 "$@" "$ROT" "$LIVE" 64 1 16 10 1000000 >/dev/null 2>&1
    awk '{ printf "%.2f\n", $1 + $2 }' "$out/time.txt"
}
: >"$out/live"
for r in $(seq "$LIVE_ROUNDS"); do
    for v in one pieces; do
        c=$(cpu $v)
        n=0
        [ $v = pieces ] && n=$(ls "$out"/l.ctf.part* | grep -E 'part[0-9]+$' | sed 's/.*part0*//' | sort -n | tail -n 1)
        echo "$r $v $c $n" >>"$out/live"
    done
done
size=$(ls -l "$out"/l.ctf.part* | grep -E 'part[0-9]+$' | awk '{ print $5 }' | sort -n | tail -n 1)
echo
echo "## a new piece with $LIVE blocks live (rate 1, idle 10 s, $LIVE_ROUNDS rounds)"
echo
echo "| variant | median CPU (s) | pieces |"
echo "|---|---|---|"
for v in one pieces; do
    echo "| $v | $(column 3 $v "$out/live" | median) | $(column 4 $v "$out/live" | median) |"
done
awk '$2 == "one" { o[$1] = $3 } $2 == "pieces" { p[$1] = $3; n[$1] = $4 } END { for (r in p) if (n[r] > 1) printf "%.4f\n", (p[r] - o[r]) / (n[r] - 1) }' "$out/live" | median |
    awk -v s="$size" '{ printf "\nCPU per new piece (median over rounds): %.1f ms; a piece with its carried blocks: %d bytes\n", $1 * 1000, s }'
