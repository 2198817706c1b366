#!/bin/sh
# realprogs.sh - the recorder's cost on real programs with many distinct
# allocation sites: gcc -O1 -c of a generated C file (~18 000 lines), a
# Python workload (bench/py_workload.py) and a threaded C++ program
# (bench/cxx_service.cc), each run plain, under the recorder in several
# configurations, and under heaptrack, in interleaved rounds; PROGS=redis
# measures redis-server (its own jemalloc) serving redis-benchmark.
#
#   sh bench/realprogs.sh [BUILD]      (after make BUILD=build all)
#   ROUNDS=3 HEAPTRACK_ROUNDS=1 PROGS="gcc python cxx" VARIANTS="..." adjust it
#   (PROGS may also name git: pack-objects of this checkout's history,
#   sqlite: a 300,000-row table built and indexed in a file, and redis:
#   redis-server, the program measured, while redis-benchmark beside it
#   sends REDIS_N (200,000) set, lpush and get requests, pipelined 16, then
#   shuts it down; the benchmark's own CPU is not counted).
#
# Variants:
#   plain      the program alone
#   never      LD_PRELOAD recorder, never sampling (--rate 1e-18): interposition
#   pre512     LD_PRELOAD recorder at the default 512 KiB interval (raw frames,
#              what the profiled process itself costs)
#   run512     memtrace run at 512 KiB: the above plus `memtrace symbolize`
#              after the program ends (the whole command)
#   run64      memtrace run --interval 64k
#   runfp      memtrace run --unwind fp (frame-pointer stacks)
#   heaptrack  heaptrack 1.4 (records every allocation; its interpreter
#              process symbolizes during the run). heaptrack profiles only
#              the process it starts, not the programs that one runs, so
#              for the compiler it runs on "cc1" (the compiler proper, run
#              directly: PROGS="cc1"), not on the gcc driver.
# PERF=1 also runs each program once under `perf record` (the whole
# `memtrace run`, children followed) at 512 KiB and 64 KiB and prints the
# share of CPU samples in the recorder's own code (libmemtrace.so and
# libunwind in the program's processes, and the memtrace process, which
# symbolizes at the end): a figure that the load of a shared machine does
# not blur the way it blurs time ratios. The name cache is the run's own
# ($W/cache, filled by the rounds before: a later run of the same
# binaries); "512k, no name cache" is the first run's naming
# (--no-name-cache: every module's debug information read).
# PERF_CFGS picks among those three ("524288 65536 cold"); PERF_OUT=DIR
# keeps each perf report (by comm, DSO, symbol) and its traces there.
# For each: wall time, CPU time (user+sys of the whole process tree: GNU
# time's figures for a child include every descendant it waited for, and
# threads), peak RSS (largest process of the tree). Prints per-round
# figures, then medians and the ratio of medians to plain, with the
# min-max range of per-round ratios.
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
B=${1:-build}
ROUNDS=${ROUNDS:-3}
HEAPTRACK_ROUNDS=${HEAPTRACK_ROUNDS:-1}
PROGS=${PROGS:-gcc python cxx}
VARIANTS=${VARIANTS:-plain never pre512 run512 run64 runfp heaptrack}
LIB=$PWD/$B/libmemtrace.so
MT=$PWD/$B/memtrace
bench_need "$B" "cli libs" "$MT" "$LIB"
bench_scratch memtrace-realprogs; W=$tmp
XDG_CACHE_HOME=$W/cache; export XDG_CACHE_HOME; unset MEMTRACE_NAME_CACHE   # the run's own name cache
command -v heaptrack >/dev/null 2>&1 || VARIANTS=$(echo "$VARIANTS" | sed 's/heaptrack//')

sh bench/gen_c.sh 1400 >"$W/gen.c"
# sqlite: a table of 300,000 rows built and indexed in a file (PROGS=sqlite)
printf "%s\n" "create table t(a integer primary key, b text, c blob);" \
    "with recursive s(i) as (select 1 union all select i+1 from s where i < 300000)" \
    "  insert into t select i, hex(randomblob(40)), randomblob(300) from s;" \
    "create index tb on t(b);" >"$W/bench.sql"
g++ -O2 -g -o "$W/cxx_service" bench/cxx_service.cc -lpthread || exit 1
# redis: a server of its own on a port of its own, no persistence
REDIS_PORT=$((20000 + $$ % 20000)) REDIS_N=${REDIS_N:-200000}
printf '%s\n' "port $REDIS_PORT" "bind 127.0.0.1" 'save ""' "appendonly no" "dir $W" >"$W/redis.conf"
cp bench/py_workload.py "$W/"
# The interpreter itself, not a wrapper script (pyenv shims run env and bash first).
PY=/usr/bin/python3; [ -x $PY ] || PY=$(command -v python3)

cmd_of() { # program -> command line
    case $1 in
        gcc) echo "gcc -O1 -c -o $W/gen.o $W/gen.c" ;;
        cc1) echo "$(gcc -print-prog-name=cc1) -quiet -O1 $W/gen.c -o $W/gen.s" ;;
        python) echo "$PY $W/py_workload.py 120" ;;
        cxx) echo "$W/cxx_service 4 40000" ;;
        # the delta search of `git gc --aggressive`, on this checkout's history
        git) echo "git -C $PWD pack-objects --revs --all --stdout --window=50 -q" ;;
        sqlite) echo "sqlite3 -init $W/bench.sql $W/bench.db .quit" ;;
        redis) echo "redis-server $W/redis.conf" ;;
    esac
}

# start_load PROGRAM: what runs beside the program while it is measured
# (redis: once the server answers, the benchmark, then its shutdown; the
# wait for the server is bounded far above a loaded machine's start-up).
load_pid=
start_load() {
    [ "$1" = redis ] || return 0
    (
        i=0
        until redis-cli -p $REDIS_PORT ping >/dev/null 2>&1; do
            i=$((i + 1)); [ $i -gt 3000 ] && exit 1; sleep 0.1
        done
        redis-benchmark -p $REDIS_PORT -q -n "$REDIS_N" -t set,lpush,get -d 64 -r 100000 -P 16 >/dev/null 2>&1
        redis-cli -p $REDIS_PORT shutdown nosave >/dev/null 2>&1
    ) &
    load_pid=$!
}
end_load() { [ -z "$load_pid" ] || wait "$load_pid"; load_pid=; }

# measure PROGRAM VARIANT ROUND: appends "prog variant round wall cpu rss_kb" to $W/results
measure() {
    p=$1 v=$2 r=$3
    c=$(cmd_of "$p")
    t=$W/$p-$v.ctf
    rm -f "$t" "$t".* "$W"/heaptrack.* "$W/bench.db"
    if [ "$v" = heaptrack ] && [ "$p" = gcc ]; then
        return   # heaptrack would profile the driver only: see PROGS=cc1
    fi
    case $v in
        plain) set -- $c ;;
        never) set -- env LD_PRELOAD="$LIB" MEMTRACE="$t" MEMTRACE_RATE=1e-18 $c ;;
        pre512) set -- env LD_PRELOAD="$LIB" MEMTRACE="$t" $c ;;
        run512) set -- "$MT" run -o "$t" -- $c ;;
        run64) set -- "$MT" run --interval 64k -o "$t" -- $c ;;
        runfp) set -- "$MT" run --unwind fp -o "$t" -- $c ;;
        heaptrack) set -- heaptrack -o "$W/heaptrack.$p" $c ;;
    esac
    start_load "$p"
    /usr/bin/time -f "%e %U %S %M" -o "$W/time" $RUN "$@" >"$W/out" 2>"$W/err" </dev/null ||
        { echo "$p $v: failed: $(tail -n 3 "$W/err")" >&2; end_load; return; }
    end_load
    read -r wall user sys rss <"$W/time"
    cpu=$(echo "$user $sys" | awk '{ printf "%.2f", $1 + $2 }')
    echo "$p $v $r $wall $cpu $rss" >>"$W/results"
    printf '%-7s %-10s round %d: wall %6.2f s  cpu %6.2f s  peak rss %7d KiB\n' "$p" "$v" "$r" "$wall" "$cpu" "$rss"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$W/results"
for r in $(seq 1 "$ROUNDS"); do
    for p in $PROGS; do
        for v in $VARIANTS; do
            [ "$v" = heaptrack ] && [ "$r" -gt "$HEAPTRACK_ROUNDS" ] && continue
            measure "$p" "$v" "$r"
        done
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ "${PERF:-0}" = 1 ] && command -v perf >/dev/null 2>&1; then
    # The whole `memtrace run` under perf (children followed): the
    # recorder's code in the program's processes, and the memtrace process
    # itself (it symbolizes the traces after the program ends).
    for p in $PROGS; do
        for cfg in ${PERF_CFGS:-524288 65536 cold}; do
            iv=$cfg nc=
            [ "$cfg" = cold ] && iv=524288 nc=--no-name-cache
            rm -f "$W/perf.ctf" "$W/perf.ctf".*
            start_load "$p"
            perf record -q -o "$W/perf.data" -- "$MT" run -o "$W/perf.ctf" --interval "$iv" $nc -- \
                $(cmd_of "$p") >/dev/null 2>&1
            end_load
            perf report -i "$W/perf.data" --no-children --sort comm,dso,sym -g none 2>/dev/null >"$W/perf.txt"
            if [ -n "${PERF_OUT:-}" ]; then   # the report and the traces, kept
                cp "$W/perf.txt" "$PERF_OUT/$p-$cfg.txt"
                for f in "$W"/perf.ctf*; do [ -f "$f" ] && cp "$f" "$PERF_OUT/$p-$cfg.${f##*/}"; done
            fi
            awk -v p="$p" -v iv="$iv${nc:+, no name cache}" '
                    /^ +[0-9.]+%/ {
                        pct = $1; comm = $2; dso = $3
                        sym = $0; sub(/.*\] /, "", sym); sub(/ +$/, "", sym)
                        if (comm == "memtrace") { m += pct; if (dso ~ /^libz/) z += pct; next }
                        if (dso ~ /^libunwind/) u += pct
                        else if (dso ~ /^libmemtrace/) {
                            if (sym ~ /^(malloc|free|calloc|realloc|cfree|new_impl|delete_impl|operator new|operator delete|posix_memalign|aligned_alloc|memalign|valloc|pvalloc)/ || sym ~ /@plt$/)
                                f += pct
                            else
                                r += pct
                        }
                    }
                    END { printf "perf %s, interval %s: interposition fast path %.2f%%, sampling+unwinding+tracing %.2f%% (libunwind %.2f%%), memtrace process %.2f%% (zlib %.2f%%), recorder in all %.2f%% of CPU samples\n", p, iv, f, r + u, u, m, z, f + r + u + m }' "$W/perf.txt"
        done
    done
fi

# Symbol quality of the last run512 trace of each program.
for p in $PROGS; do
    t=$W/$p-run512.ctf
    [ -f "$t" ] || continue
    echo "== $p: top allocation sites (memtrace top, last run512 round)"
    "$MT" top -n 3 "$t" 2>/dev/null | sed -n '1,8p' | cut -c1-150
done

echo
echo "| program | variant | wall (s) | CPU (s) | peak RSS (MiB) | wall ratio | CPU ratio (min-max) | RSS delta (MiB) |"
echo "|---|---|---|---|---|---|---|---|"
awk '
function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ k = $1 SUBSEP $2; n[k]++; W[k, n[k]] = $4; C[k, n[k]] = $5; R[k, n[k]] = $6; rd[k, n[k]] = $3
  if (!($1 in seenp)) { seenp[$1] = 1; po[++np] = $1 }
  if (!($2 in seenv)) { seenv[$2] = 1; vo[++nv] = $2 }
  cpu[$1, $2, $3] = $5 }
END {
    for (i = 1; i <= np; i++) for (j = 1; j <= nv; j++) {
        p = po[i]; v = vo[j]; k = p SUBSEP v; m = n[k]; if (!m) continue
        delete a; for (x = 1; x <= m; x++) a[x] = W[k, x]; mw = median(a, m)
        delete a; for (x = 1; x <= m; x++) a[x] = C[k, x]; mc = median(a, m)
        delete a; for (x = 1; x <= m; x++) a[x] = R[k, x]; mr = median(a, m)
        med[p, v, "w"] = mw; med[p, v, "c"] = mc; med[p, v, "r"] = mr
        lo = 1e9; hi = 0
        for (x = 1; x <= m; x++) { b = cpu[p, "plain", rd[k, x]]; if (b > 0) { q = C[k, x] / b; if (q < lo) lo = q; if (q > hi) hi = q } }
        rng[p, v] = hi > 0 ? sprintf("%.3f-%.3f", lo, hi) : "-"
        pw = med[p, "plain", "w"]; pc = med[p, "plain", "c"]; pr = med[p, "plain", "r"]
        printf "| %s | %s | %.2f | %.2f | %.1f | %.3f | %.3f (%s) | %+.1f |\n", p, v, mw, mc, mr / 1024,
            pw ? mw / pw : 0, pc ? mc / pc : 0, rng[p, v], (mr - pr) / 1024
    }
}' "$W/results"
