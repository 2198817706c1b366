#!/bin/sh
# attach.sh - what 'memtrace attach' costs a running service: the time to
# attach and to detach (as memtrace attach reports them), and the service's
# CPU per unit of work before the attach (plain), while attached (recording
# at the default 512 KiB interval) and after the detach (dormant library,
# entries restored). Workloads:
#   redis   redis-server (jemalloc) under redis-benchmark (set, lpush, get;
#           pipelined 16): CPU seconds of redis-server per 100k requests
#   python  a python3 loop building and dropping dicts and strings: CPU
#           seconds per 1000 rounds
#   signals (not in the default set) a C program that allocates in a busy
#           loop, writes now and then, and takes a SIGALRM every 500 us
#           whose handler writes: never waiting in a system call, it is
#           followed from call to call to a write of its own; only the
#           attach and detach times (ROUNDS attaches of 100 ms)
# Each phase is ROUNDS measurements of one process, in the order plain,
# attached, after; prints the medians and the ratios to plain.
#
#   sh bench/attach.sh [BUILD]        (default build/)
#   env: ROUNDS (5), WORKLOADS ("redis python"), N (redis requests, 200000)
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
B=${1:-build}
ROUNDS=${ROUNDS:-5}
WORKLOADS=${WORKLOADS:-"redis python"}
N=${N:-200000}
MT=$PWD/$B/memtrace
bench_need "$B" cli "$MT" "$B/libmemtrace.so"
bench_scratch memtrace-attach; out=$tmp

cpu_ticks() { awk '{print $14 + $15}' /proc/$1/stat; }
hz=$(getconf CLK_TCK)

# attach_bg PID FILE: starts memtrace attach in the background ($att), waits
# until it records.
attach_bg() {
    "$MT" attach -o "$2" "$1" >"$2.log" 2>&1 &
    att=$!
    for i in $(seq 100); do grep -q recording "$2.log" && return 0; sleep 0.05; done
    echo "attach did not start: $(cat "$2.log")"; return 1
}
detach_bg() { kill -INT $att; wait $att; }
ms_of() { sed -n "s/.*$1 \([0-9]*\) ms.*/\1/p" "$2"; }

report() { # report NAME UNIT: medians of $out/NAME.{plain,attached,after}
    p=$(median <"$out/$1.plain"); a=$(median <"$out/$1.attached"); d=$(median <"$out/$1.after")
    printf '%-8s %-28s plain %.3f  attached %.3f (x%.2f)  after detach %.3f (x%.2f)\n' \
        "$1" "$2" "$p" "$a" "$(echo "$a / $p" | bc -l)" "$d" "$(echo "$d / $p" | bc -l)"
    printf '%-8s attach %s ms, detach %s ms (medians of %s)\n' "$1" \
        "$(median <"$out/$1.attach_ms")" "$(median <"$out/$1.detach_ms")" "$ROUNDS"
}

if echo "$WORKLOADS" | grep -qw redis && command -v redis-server >/dev/null; then
    port=$((20000 + $$ % 20000))
    redis-server --port $port --bind 127.0.0.1 --save '' --appendonly no --dir "$out" \
        >"$out/redis.log" 2>&1 &
    rp=$!
    bench_stop() { kill $rp 2>/dev/null; }
    for i in $(seq 100); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.1; done
    load() { # CPU seconds of redis-server per 100k requests
        c0=$(cpu_ticks $rp)
        redis-benchmark -p $port -q -n "$N" -t set,lpush,get -d 64 -r 100000 -P 16 >/dev/null 2>&1
        c1=$(cpu_ticks $rp)
        echo "($c1 - $c0) / $hz * 100000 / ($N * 3)" | bc -l
    }
    load >/dev/null   # warm: the data set in place
    for r in $(seq "$ROUNDS"); do load >>"$out/redis.plain"; done
    for r in $(seq "$ROUNDS"); do
        attach_bg $rp "$out/redis.$r.ctf" || break
        load >>"$out/redis.attached"
        detach_bg
        ms_of "attached in" "$out/redis.$r.ctf.log" >>"$out/redis.attach_ms"
        ms_of "detach" "$out/redis.$r.ctf.log" >>"$out/redis.detach_ms"
    done
    for r in $(seq "$ROUNDS"); do load >>"$out/redis.after"; done
    report redis "cpu s / 100k requests"
    kill $rp; wait $rp 2>/dev/null
fi

if echo "$WORKLOADS" | grep -qw python; then
    PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
    cat >"$out/loop.py" <<'PYEOF'
import sys
n = 0
keep = []
while True:
    d = {("k%d" % i): [i, str(i) * 3] for i in range(2000)}
    keep.append(d)
    if len(keep) > 50:
        keep.pop(0)
    n += 1
    if n % 100 == 0:
        print(n, flush=True)
PYEOF
    "$PY" "$out/loop.py" >"$out/py.out" &
    pp=$!
    bench_stop() { kill $pp 2>/dev/null; }
    sleep 1
    rounds() { # CPU seconds per 1000 rounds of the loop, over 2000 rounds
        k0=$(wc -l <"$out/py.out"); c0=$(cpu_ticks $pp)
        while [ $(($(wc -l <"$out/py.out") - k0)) -lt 20 ]; do sleep 0.02; done
        c1=$(cpu_ticks $pp)
        echo "($c1 - $c0) / $hz / 2" | bc -l
    }
    for r in $(seq "$ROUNDS"); do rounds >>"$out/python.plain"; done
    for r in $(seq "$ROUNDS"); do
        attach_bg $pp "$out/py.$r.ctf" || break
        rounds >>"$out/python.attached"
        detach_bg
        ms_of "attached in" "$out/py.$r.ctf.log" >>"$out/python.attach_ms"
        ms_of "detach" "$out/py.$r.ctf.log" >>"$out/python.detach_ms"
    done
    for r in $(seq "$ROUNDS"); do rounds >>"$out/python.after"; done
    report python "cpu s / 1000 rounds"
    kill $pp; wait $pp 2>/dev/null
fi

if echo "$WORKLOADS" | grep -qw signals; then
    cat >"$out/sig.c" <<'CEOF'
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
static int devnull;
static void on_alrm(int s) { (void)s; if (write(devnull, "x", 1) != 1) _exit(1); }
int main(void)
{
    devnull = open("/dev/null", O_WRONLY);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alrm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = { { 0, 500 }, { 0, 500 } };
    setitimer(ITIMER_REAL, &it, NULL);
    void *keep[64] = { 0 };
    for (unsigned i = 0; access("stop", F_OK) != 0; i++) {
        for (int k = 0; k < 2000; k++) {
            free(keep[k % 64]);
            keep[k % 64] = malloc(100 + k % 300);
        }
        if (i % 4 == 0 && write(devnull, "y", 1) != 1)
            return 1;
    }
    return 0;
}
CEOF
    cc -O1 -o "$out/sig" "$out/sig.c" || exit 1
    (cd "$out" && exec ./sig) &
    sp=$!
    bench_stop() { touch "$out/stop"; kill $sp 2>/dev/null; }
    sleep 0.5
    for r in $(seq "$ROUNDS"); do
        "$MT" attach --duration 100ms -o "$out/sig.$r.ctf" $sp >"$out/sig.$r.ctf.log" 2>&1 ||
            echo "signals: attach $r: $(cat "$out/sig.$r.ctf.log")"
        ms_of "attached in" "$out/sig.$r.ctf.log" >>"$out/signals.attach_ms"
        ms_of "detach" "$out/sig.$r.ctf.log" >>"$out/signals.detach_ms"
    done
    n=$(grep -c . "$out/signals.attach_ms")
    if [ "$n" = 0 ]; then
        echo "signals  none of $ROUNDS attaches attached"
    else
        printf '%-8s %s of %s attached: attach %s ms (%s), detach %s ms (medians)\n' signals "$n" \
            "$ROUNDS" "$(median <"$out/signals.attach_ms")" \
            "$(tr '\n' ' ' <"$out/signals.attach_ms" | sed 's/ $//')" "$(median <"$out/signals.detach_ms")"
    fi
    touch "$out/stop"; wait $sp 2>/dev/null
fi
